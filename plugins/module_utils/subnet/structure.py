# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric's shape above the cables: every switch's links down (host ports, links to a lower tier) and
up (links to a higher tier, and lateral links to a switch of its own tier), with the rate each trained to;
the trunks between two tiers; and the groups the inter-tier links hold together (a fat tree is one group,
or one per plane; a dragonfly is several, joined only by lateral "global" links).

Direction comes from the tiers (model.derive_tiers): leaf 0, spine 1, core 2. A lateral link is an ISL
between two switches of one tier: a dragonfly's global links, or the cables of a fabric of two leaves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index, link_rate_gbps


def _view(index, link, mine):
    """A link as one switch sees it: its port, the peer's guid and port, width, speed, trained Gb/s."""
    other = index.peer[mine]
    return {
        "port": mine[1],
        "peer": other[0],
        "peer_port": other[1],
        "width": link["width"],
        "speed": link["speed"],
        "gbps": link_rate_gbps(link) or 0.0,
        "kind": link["kind"],
    }


class _Groups:
    """Union-find over switch GUIDs."""

    def __init__(self):
        self.parent = {}

    def find(self, guid):
        self.parent.setdefault(guid, guid)
        while self.parent[guid] != guid:
            self.parent[guid] = self.parent[self.parent[guid]]
            guid = self.parent[guid]
        return guid

    def join(self, a, b):
        self.parent[self.find(a)] = self.find(b)


class Shape:
    """Links per switch by direction, and groups (built once per topology)."""

    def __init__(self, topo, index=None):
        self.topo = topo
        self.index = index or Index(topo)
        self.down = defaultdict(list)
        self.up = defaultdict(list)
        self.lateral = []
        groups = _Groups()
        for sw in topo["switches"]:
            groups.find(sw["guid"])
        for link in topo["links"]:
            self._add(link, groups)
        self.group_of, self.groups = self._number(groups)

    def _add(self, link, groups):
        if link["kind"] == "aggregation":
            return  # a SHARP Aggregation Node sits inside its switch: no host traffic on that port
        a = (link["a"]["guid"], link["a"]["port"])
        b = (link["b"]["guid"], link["b"]["port"])
        if link["kind"] == "host":
            mine = a if self.index.is_switch(a[0]) else b
            self.down[mine[0]].append(_view(self.index, link, mine))
            return
        low, high = (a, b) if self.index.rank(a[0]) <= self.index.rank(b[0]) else (b, a)
        if self.index.rank(low[0]) == self.index.rank(high[0]):
            self.lateral.append(link)
            self.up[a[0]].append(_view(self.index, link, a))
            self.up[b[0]].append(_view(self.index, link, b))
            return
        groups.join(low[0], high[0])
        self.up[low[0]].append(_view(self.index, link, low))
        self.down[high[0]].append(_view(self.index, link, high))

    def _number(self, groups):
        members = defaultdict(list)
        for sw in self.topo["switches"]:
            members[groups.find(sw["guid"])].append(sw["guid"])
        ordered = sorted(members.values(), key=lambda guids: min(self.index.name(g) for g in guids))
        group_of = {}
        for number, guids in enumerate(ordered, 1):
            for guid in guids:
                group_of[guid] = number
        return group_of, ordered

    def tier(self, guid):
        return self.index.tier.get(guid)

    def uplinks(self, guid, lateral=True):
        """The links up from a switch (with ``lateral``, its lateral links too)."""
        return [v for v in self.up.get(guid, []) if lateral or self.index.rank(v["peer"]) > self.index.rank(guid)]

    def trunk_sizes(self, guid):
        """{upper switch: cables} from a switch to each switch of a higher tier."""
        sizes = defaultdict(int)
        for view in self.uplinks(guid, lateral=False):
            sizes[view["peer"]] += 1
        return dict(sizes)

    def members(self, group, tier):
        """The switches of a tier in a group."""
        return [g for g in self.groups[group - 1] if self.tier(g) == tier]

    def has_isls(self):
        return any(link["kind"] == "isl" for link in self.topo["links"])
