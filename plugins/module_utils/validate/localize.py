# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault localisation: name the suspect nodes, links and switches from normalised pair results.

Everything is decided per plane, a (kind, rail) pair: a host is judged on a rail by the pairs it ran on that
rail. The classes (docs/fabric_report.md has an example of each):

- ``bad_node``: on a rail, the host failed with every partner it met, a known-good one of the retest included.
- ``intermittent``: failed in pass 1 with every partner and passed a retest: not cleared, its partners' failures
  are explained by it.
- ``suspect`` (node): pass 1 points at it and no retest decided it; or a known-good partner that failed its own
  retest with a host that passed another one (never silently PASSED).
- ``bad_link`` / ``suspect`` (link): a pair failed while both ends pass elsewhere (bad_link once both ends passed
  their retests with known-good partners).
- ``switch_fault``: a fault above the hosts. With the hosts grouped by switch (switches.py: topology, LLDP,
  inventory, else inferred here from the results) failing pairs that cross switches while every pair inside a
  switch passes are the switch's: ``leaf`` (every failing pair has an end behind one leaf: its uplinks),
  ``between`` (two groups: the uplinks of either, or the spines between them), ``spine`` (failing pairs on many
  leaves: a spine or its cables), ``spine_layer`` (every pair across leaves failed). ``path``: one host fails
  with several partners (pass 1, or its retest with a known-good one) and reaches line rate with others: the
  fault is above it; or a node suspect that passes its retest behind its own switch only. ``fabric``: without
  any grouping, failing pairs spread over hosts that all reach line rate elsewhere (three or more, or any next to
  a path fault): a fault above the hosts that only the switch grouping can place.

A host that reaches line rate with part of the fabric on a rail is never ``bad_node`` on that rail. Only failures
that the link or its two ends can cause take part (NOT_THE_LINK): a missing rail, an invalid or ungated figure, a
regression (reported on its own), a host that failed before measuring (``exclude_hosts``) name no partner.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import heapq
import itertools
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import value_of
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import (
    columns_of,
    end_groups,
    host_ends,
    row_reader,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.switches import switch_of

# failure kinds that say nothing about the link between the two ends
NOT_THE_LINK = frozenset(("missing_rail", "invalid", "regression", "preflight", "unreachable", "ungated", "refused"))
NODE_VERDICTS = ("bad_node", "intermittent", "suspect")  # most serious first
# failures of the figures a path sets (too slow, too late): only these can be a fault above the hosts; the others
# (could not connect, timed out, the server failed) are a host's processes, judged by the partners alone
PATH_KINDS = frozenset(("below_threshold", "slow_vs_peers", "above_threshold"))
SCOPES = ("leaf", "between", "spine", "spine_layer", "path", "fabric")
PAIRS_LISTED = 20  # failing pairs a switch fault lists by name
# without any grouping, this many failing pairs whose ends all reach line rate elsewhere (or any such pair next to a
# path fault on the same rail) are a fault above the hosts, not as many bad links
FABRIC_MIN_PAIRS = 3


def implicates_link(res, exclude_hosts=()):
    """Whether a normalised result takes part in localization (passed results always do)."""
    if res.get("passed"):
        return True
    if res.get("failure_kind") in NOT_THE_LINK:
        return False
    return res["server"] not in exclude_hosts and res["client"] not in exclude_hosts


def plane_key(res):
    return (res.get("kind") or "bandwidth", res.get("rail"))


def _pair(a, b):
    return (a, b) if a <= b else (b, a)


class Plane:
    """The pass-1 outcome of one (kind, rail), and its retests."""

    def __init__(self, key):
        self.key = key
        self.ok = {}  # host -> partners it passed with
        self.bad = {}  # host -> partners it failed with
        self.failed = {}  # (a, b) sorted -> failed pass-1 results
        self.retests = []
        self.devices = {}
        self.roles = {}  # host -> {"server": n, "client": n} of its failed results
        self.process = {}  # host -> partners it failed with for a reason other than the figures (PATH_KINDS)
        self.process_pairs = set()
        self._order = None  # sorted(self.ok), made by sorted_partners

    def hosts(self):
        return set(self.ok) | set(self.bad)

    def sorted_partners(self, host):
        """sorted(self.ok[host]): the hosts that passed with ``host``, in order. The plane's hosts are sorted once
        and kept where they are partners (in C), not sorted again for each host (a path fault names them: 2,320 x
        1,023 at 1024 hosts x 8 rails); a partner that is no host of ok (ok changed by hand) falls back to sorting."""
        partners = self.ok.get(host, _NO_PARTNERS)
        if self._order is None or len(self._order) != len(self.ok):
            self._order = sorted(self.ok)
        ordered = list(filter(partners.__contains__, self._order))
        return ordered if len(ordered) == len(partners) else sorted(partners)

    def add(self, res):
        server, client = res["server"], res["client"]
        self.devices.setdefault(server, res.get("server_device"))
        self.devices.setdefault(client, res.get("client_device"))
        if (res.get("pass") or 1) != 1:
            self.retests.append(res)
        elif res.get("passed"):
            self.ok.setdefault(server, set()).add(client)
            self.ok.setdefault(client, set()).add(server)
        else:
            self.bad.setdefault(server, set()).add(client)
            self.bad.setdefault(client, set()).add(server)
            if res.get("failure_kind") not in PATH_KINDS:
                self.process.setdefault(server, set()).add(client)
                self.process.setdefault(client, set()).add(server)
                self.process_pairs.add(_pair(server, client))
            self.failed.setdefault(_pair(server, client), []).append(res)
            self.roles.setdefault(server, {"server": 0, "client": 0})["server"] += 1
            self.roles.setdefault(client, {"server": 0, "client": 0})["client"] += 1


def build_planes(results, exclude_hosts=()):
    """{(kind, rail): Plane} over the results that implicate a link. A passed first-pass result (nearly all of
    millions at 1024 hosts x 8 rails) only adds its two ends to each other's partners: done for all of them at once
    over the results' columns (a list of dicts or a ResultTable), in C (_add_passed); only the other results are
    read as dicts (Plane.add), in order."""
    kinds, rails, passed, passes, servers, clients, server_devices, client_devices = columns_of(
        results, "kind", "rail", "passed", "pass", "server", "client", "server_device", "client_device"
    )
    kinds = kinds if all(kinds) else [kind or "bandwidth" for kind in kinds]
    planes = dict((key, Plane(key)) for key in dict.fromkeys(zip(kinds, rails)))  # in the order first met
    first_pass = passes.count(1) == len(passes) or None  # in C: no retest at all (the common case)
    if first_pass is None:
        first_pass = [(pass_no or 1) == 1 for pass_no in passes]
    fast = passed if first_pass is True else list(map(operator.and_, map(bool, passed), first_pass))
    _add_passed(planes, fast, kinds, rails, servers, clients, server_devices, client_devices, results)
    row = row_reader(results)
    for index in itertools.compress(range(len(servers)), map(operator.not_, fast)):
        if servers[index] and clients[index]:
            res = row(index)
            if implicates_link(res, exclude_hosts):
                planes[(kinds[index], rails[index])].add(res)
    return planes


def _add_passed(planes, fast, kinds, rails, servers, clients, server_devices, client_devices, results=None):
    """Each plane's ok (host -> partners it passed with) and its hosts' devices (the first such result's) from the
    results ``fast`` selects (passed first-pass ones), the partners appended to their end's group's list by map over
    list.append (in C: 8.4 M ends). The ends are the table's, grouped once (table.host_ends, shared with the host
    verdicts and the host/rail summary) when each of its groups is one (kind, rail, host) (_shared_groups); else
    each end's (kind, rail, host) is grouped here (_add_passed_grouping)."""
    everyone = all(fast)  # in C: no result left out (then no compress)
    shared = None if results is None else _shared_groups(results, fast, everyone)
    if shared is None:
        _add_passed_grouping(planes, fast, kinds, rails, servers, clients, server_devices, client_devices)
        return
    order, ends = shared
    partners = dict((group, []) for group, _end in order.values())
    # appended to lists, then each list made a set at once: twice as fast as a set.add per end
    for side, others in ((ends[0::2], clients), (ends[1::2], servers)):
        if not everyone:
            side, others = itertools.compress(side, fast), itertools.compress(others, fast)
        collections.deque(map(list.append, map(partners.__getitem__, side), others), maxlen=0)
    devices = (server_devices, client_devices)
    for (kind, rail, host), (group, end) in order.items():
        plane = planes[(kind, rail)]
        plane.ok[host] = set(partners.pop(group))
        plane.devices[host] = devices[end % 2][end // 2]


SEARCHED = 16  # groups whose first end is left out whose first selected end is searched for (list.index) at most


def _first_selected(first, ends, fast, everyone):
    """{group: the number of its first end that ``fast`` selects}, in the order those ends are met (groups with
    none left out). A group's first end when its result is selected (every group's when every result is); the few
    others searched for (list.index, in C) when there are at most SEARCHED of them, else one pass over the selected
    ends (a dict.setdefault per end, ints, in C)."""
    if everyone:
        met = first.values()
        return dict(zip(met, met))
    left = [group for group in first.values() if not fast[group // 2]]
    if len(left) > SEARCHED:
        out = {}
        chosen = itertools.chain.from_iterable(zip(fast, fast))
        numbers = itertools.compress(itertools.count(), itertools.chain.from_iterable(zip(fast, fast)))
        collections.deque(map(out.setdefault, itertools.compress(ends, chosen), numbers), maxlen=0)
        return out
    found = dict((group, group) for group in first.values() if fast[group // 2])
    for group in left:
        end = group
        try:
            while not fast[end // 2]:
                end = ends.index(group, end + 1)
        except ValueError:  # no end of it selected
            continue
        found[group] = end
    return dict(sorted(found.items(), key=operator.itemgetter(1)))


def _shared_groups(results, fast, everyone):
    """({(kind, rail, host): (its group of table.host_ends, the number of its first end that ``fast`` selects)},
    in the order those ends are met; the table's ends) when no two groups of host_ends are one (kind, rail, host)
    (one device and test per host and plane: the common case), else None."""
    first, ends, planes = host_ends(results)
    key_of = dict((group, key) for key, group in first.items())
    order = {}
    for group, end in _first_selected(first, ends, fast, everyone).items():
        host, _device, plane = key_of[group]
        kind, rail, _test = planes[plane]
        if order.setdefault((kind or "bandwidth", rail, host), (group, end))[0] != group:
            return None
    return order, ends


def _add_passed_grouping(planes, fast, kinds, rails, servers, clients, server_devices, client_devices):
    """_add_passed grouping each end's (kind, rail, host) itself (table.end_groups over the selected results)."""

    def kept(column):
        return itertools.compress(column, fast)

    first, ends = end_groups(zip(kept(kinds), kept(rails), kept(servers)), zip(kept(kinds), kept(rails), kept(clients)))
    partners = dict((group, []) for group in first.values())
    collections.deque(map(list.append, map(partners.__getitem__, ends[0::2]), kept(clients)), maxlen=0)
    collections.deque(map(list.append, map(partners.__getitem__, ends[1::2]), kept(servers)), maxlen=0)
    del ends
    devices = (list(kept(server_devices)), list(kept(client_devices)))  # of the n-th passed result
    for (kind, rail, host), group in first.items():
        plane = planes[(kind, rail)]
        plane.ok[host] = set(partners.pop(group))
        plane.devices[host] = devices[group % 2][group // 2]


# ---------------------------------------------------------------------------------------------
# Pass 1


def node_suspects(plane):
    """Hosts with no passing pair on the plane that failed with two or more partners, not counting partners already
    named (the host failing with the most partners first, so both ends of a bad link are not both named)."""
    remaining = dict((h, len(p)) for h, p in plane.bad.items())
    weight = dict((h, -(r["server"] + r["client"])) for h, r in plane.roles.items())
    # a host that passed a pair reached line rate: it is a node suspect only for failures of its own processes
    heap = [
        (-n, weight.get(h, 0), h)
        for h, n in remaining.items()
        if n >= 2 and (not plane.ok.get(h) or len(plane.process.get(h, ())) >= 2)
    ]
    heapq.heapify(heap)
    nodes = set()
    while heap:
        negative, _weight, host = heapq.heappop(heap)
        if host in nodes:
            continue
        if -negative != remaining[host]:
            if remaining[host] >= 2:
                heapq.heappush(heap, (-remaining[host], weight.get(host, 0), host))
            continue
        nodes.add(host)
        for other in plane.bad[host]:
            if other not in nodes:
                remaining[other] -= 1
    return nodes


def _components(plane, hosts):
    """Connected components of the passing pairs among ``hosts``: {host: the first host (sorted) of its component}.
    A host's new neighbours are found with set operations (in C: 8.4 M partners at 1024 hosts x 8 rails)."""
    seen = {}
    for start in sorted(hosts):
        if start in seen:
            continue
        stack = [start]
        seen[start] = start
        while stack:
            fresh = (plane.ok.get(stack.pop(), _NO_PARTNERS) & hosts).difference(seen)
            seen.update(dict.fromkeys(fresh, start))
            stack.extend(fresh)
    return seen


_NO_PARTNERS = frozenset()


def infer_groups(plane, nodes):
    """{host: group} when the results themselves group the hosts: the hosts that pass with each other, every
    failing pair across groups, more than one group and one of them holding two hosts or more; else None."""
    hosts = plane.hosts() - nodes
    component = _components(plane, hosts)
    names = set(component.values())
    if len(names) < 2:
        return None
    sizes = {}
    for name in component.values():
        sizes[name] = sizes.get(name, 0) + 1
    if max(sizes.values()) < 2:
        return None
    for a, b in plane.failed:
        if a in component and b in component and component[a] == component[b]:
            return None
    return dict((h, "hosts of %s" % name) for h, name in component.items())


def plane_groups(plane, groups, nodes):
    """(leaf_of {host: switch}, source) for the plane's hosts: the given groups when they place every host, else
    the groups the results imply (source "inferred"), else ({}, None)."""
    given, source = groups if isinstance(groups, tuple) else (groups, "inventory")
    if given:
        rail = plane.key[1]
        leaf_of = dict((h, switch_of(given, h, rail, plane.devices.get(h))) for h in plane.hosts())
        if all(leaf_of.values()):
            return leaf_of, source
    inferred = infer_groups(plane, nodes)
    return (inferred, "inferred") if inferred else ({}, None)


def _worst(results):
    worst = None
    for res in results:
        if _worse(res, worst):
            worst = res
    return worst


def _covering(cross, leaf_of):
    """Groups that are an end of every failing cross pair."""
    common = None
    for a, b in cross:
        ends = {leaf_of[a], leaf_of[b]}
        common = ends if common is None else common & ends
    return sorted(common or ())


def _tested_across(plane, leaf_of):
    """(pairs tested across groups, passing pairs inside a group) in pass 1."""
    across = sum(1 for a, b in plane.failed if leaf_of[a] != leaf_of[b])
    inside = 0
    for host, partners in plane.ok.items():
        for other in partners:
            if host < other:
                if leaf_of[host] != leaf_of[other]:
                    across += 1
                else:
                    inside += 1
    return across, inside


def _members(leaf_of, group):
    return sorted(h for h, g in leaf_of.items() if g == group)


def _pick_inferred(covering, leaf_of):
    """Of two inferred groups that both cover every failing pair, the smaller is the one above which the fault
    is (the larger passes across its own unknown switches); equal sizes stay ambiguous."""
    if len(covering) != 2:
        return covering
    a, b = (len(_members(leaf_of, g)) for g in covering)
    return covering if a == b else [covering[0] if a < b else covering[1]]


def switch_fault(plane, cross, leaf_of, source):
    """One switch_fault entry for the failing cross-group pairs ``cross`` (two or more)."""
    covering = _covering(cross, leaf_of)
    if source == "inferred":
        covering = _pick_inferred(covering, leaf_of)
    tested, inside = _tested_across(plane, leaf_of)
    if len(covering) == 1:
        scope = "leaf"
    elif len(covering) == 2:
        scope = "between"
    else:
        scope = "spine_layer" if len(cross) == tested else "spine"
    involved = set(h for pair in cross for h in pair)
    behind = set(h for g in covering for h in _members(leaf_of, g)) if covering else involved
    worst = _worst([r for pair in cross for r in plane.failed[pair]])
    entry = {
        "verdict": "switch_fault",
        "scope": scope,
        "source": source,
        "kind": plane.key[0],
        "rail": plane.key[1],
        "test": worst.get("test"),
        "switches": [] if source == "inferred" else covering,
        "groups": dict((g, _members(leaf_of, g)) for g in covering),
        "hosts": sorted(involved & behind),
        "failing": len(cross),
        "tested": tested,
        "inside_passing": inside,
        "pairs": sorted(plane.failed[pair][0]["link"] for pair in cross)[:PAIRS_LISTED],
    }
    entry.update(_brief(worst))
    entry["_pairs"] = set(cross)
    return entry


def classify(plane, rest, leaf_of, source):
    """(switch faults, link pairs) of the failing pairs ``rest`` (no end a node suspect) with the hosts grouped."""
    cross = [p for p in rest if leaf_of[p[0]] != leaf_of[p[1]]]
    links = set(p for p in rest if leaf_of[p[0]] == leaf_of[p[1]])
    if len(cross) < 2:
        return [], links | set(cross)  # one pair alone says nothing about a switch
    return [switch_fault(plane, cross, leaf_of, source)], links


def known_good(plane, nodes, links, faults):
    """Hosts that passed a pair on the plane and failed only with node suspects, outside every suspect link and
    switch fault: the retest's partners."""
    busy = set(h for pair in links for h in pair)
    for fault in faults:
        busy.update(h for pair in fault["_pairs"] for h in pair)
    return set(h for h in plane.ok if h not in nodes and h not in busy and not (plane.bad.get(h, set()) - nodes))


def analyse_first_pass(plane, groups=None):
    """{nodes, links, faults, good, leaf_of, source} of one plane's pass 1."""
    nodes = node_suspects(plane)
    rest = [pair for pair in plane.failed if pair[0] not in nodes and pair[1] not in nodes]
    path = [pair for pair in rest if pair not in plane.process_pairs]
    leaf_of, source = plane_groups(plane, groups, nodes)
    if leaf_of:
        faults, links = classify(plane, path, leaf_of, source)
    else:
        faults, links = [], set(path)
    links |= set(rest) - set(path)
    good = known_good(plane, nodes, links, faults)
    return {"nodes": nodes, "links": links, "faults": faults, "good": good, "leaf_of": leaf_of, "source": source}


def subjects_of(first):
    """The hosts a retest should measure again: node suspects and both ends of every suspect link."""
    return set(first["nodes"]) | set(h for pair in first["links"] for h in pair)


# ---------------------------------------------------------------------------------------------
# Retests


def _retest_runs(plane, subjects, good):
    """{subject: [retest results with a known-good partner]} on the plane."""
    runs = dict((s, []) for s in subjects)
    for res in plane.retests:
        for host, other in ((res["server"], res["client"]), (res["client"], res["server"])):
            if host in runs and other in good:
                runs[host].append(res)
    return runs


def _partner(res, host):
    return res["client"] if res["server"] == host else res["server"]


def _path_above_node(host, plane, passes, leaf_of):
    """Whether a node suspect that passes its retests only behind its own switch, after failing in pass 1 only
    with hosts of other switches, is a fault above it (its leaf's uplinks), not the node."""
    if not leaf_of or not passes:
        return False
    own = leaf_of.get(host)
    return all(leaf_of.get(_partner(r, host)) == own for r in passes) and all(
        leaf_of.get(other) != own for other in plane.bad.get(host, ())
    )


def _decide(host, runs, first, plane):
    """'bad_node' | 'intermittent' | 'cleared' | 'path' | None (no retest) for one subject."""
    if not runs:
        return None
    passes = [r for r in runs if r["passed"]]
    if host in first["nodes"]:
        if not passes:
            return "bad_node"
        return "path" if _path_above_node(host, plane, passes, first["leaf_of"]) else "intermittent"
    # it reached line rate with part of the fabric in pass 1 and fails with a known-good partner now: the common
    # element of its failures is the path above it (never a node verdict for a host that reached line rate)
    return "cleared" if len(passes) == len(runs) else "path"


def analyse_retests(plane, first):
    """{decision: {host: verdict}, runs, partner_suspects {partner: subject}} of one plane's retests."""
    runs = _retest_runs(plane, subjects_of(first), first["good"])
    decision = {}
    partner_suspects = {}
    for host in sorted(runs):
        verdict = _decide(host, runs[host], first, plane)
        if verdict is None:
            continue
        decision[host] = verdict
        if verdict == "intermittent" and any(r["passed"] for r in runs[host]):
            # mixed: the known-good partners it failed with are not silently PASSED
            for res in runs[host]:
                if not res["passed"]:
                    partner_suspects.setdefault(_partner(res, host), host)
    return {"decision": decision, "runs": runs, "partner_suspects": partner_suspects}


# ---------------------------------------------------------------------------------------------
# Entries


def _worse(res, current):
    """Whether res is a worse measurement of a link than current (lower Gb/s, higher latency, none)."""
    if current is None:
        return True
    value, other = value_of(res), value_of(current)
    if value is None:
        return other is not None
    if other is None:
        return False
    return value > other if res.get("kind") == "latency" else value < other


def _brief(res):
    """The figures of a result that a suspect entry carries."""
    out = {
        "kind": res.get("kind", "bandwidth"),
        "bw_avg_gbps": res.get("bw_avg_gbps"),
        "threshold_gbps": res.get("threshold_gbps"),
        "failure": res.get("failure"),
        "failure_kind": res.get("failure_kind"),
    }
    if out["kind"] == "latency":
        out["t_typical_us"] = res.get("t_typical_us")
        out["threshold_us"] = res.get("threshold_us")
    return out


def _retest_entry(res, host):
    entry = {"partner": _partner(res, host), "server": res["server"], "client": res["client"], "passed": res["passed"]}
    entry.update(_brief(res))
    entry["rail"] = res.get("rail")
    return entry


def _node_entry(host, verdict, plane, first, runs, subject=None):
    entry = {
        "host": host,
        "verdict": verdict,
        "failed_with": sorted(plane.bad.get(host, ())) if subject is None else [subject],
        "devices": [plane.devices[host]] if plane.devices.get(host) else [],
        "rails": [plane.key[1]] if plane.key[1] is not None else [],
        "first_pass_suspect": host in first["nodes"],
        "retest": [_retest_entry(r, host) for r in runs],
    }
    if subject is not None:
        entry["reason"] = "known-good partner that failed its retest with %s" % subject
    return entry


def _link_entry(results, cleared):
    res = _worst(results)
    entry = {
        "link": res["link"],
        "server": res["server"],
        "server_device": res.get("server_device"),
        "client": res["client"],
        "client_device": res.get("client_device"),
        "test": res.get("test"),
        "rail": res.get("rail"),
        "verdict": "bad_link" if res["server"] in cleared and res["client"] in cleared else "suspect",
    }
    entry.update(_brief(res))
    return entry


def _path_faults(plane, links, named):
    """Without any grouping: a host (not named) common to two or more remaining failing pairs is a fault above it,
    the host with the most first (then the first by name), its pairs taken out before the next is looked for.
    Returns (faults, links left). The counts are kept as the pairs go (a heap of (-count, host), an entry whose
    count has changed since dropped), not counted again for each fault (2,320 faults at 1024 hosts x 8 rails).
    A fault's pairs are read from what is left in its order (a set's order once some are taken out: the first of
    equally bad results is the fault's worst)."""
    left = set(links)
    counts = {}
    for pair in left:
        for host in pair:
            if host not in named:
                counts[host] = counts.get(host, 0) + 1
    heap = [(-n, h) for h, n in counts.items() if n >= 2]
    heapq.heapify(heap)
    faults = []
    while heap:
        negative, host = heapq.heappop(heap)
        if counts[host] != -negative:
            continue
        pairs = set(p for p in left if host in p)
        left -= pairs
        for pair in pairs:
            for end in pair:
                if end not in named:
                    counts[end] -= 1
                    if end != host and counts[end] >= 2:
                        heapq.heappush(heap, (-counts[end], end))
        faults.append(_path_fault(plane, host, pairs))
    return faults, left


def _path_fault(plane, host, pairs, switch=None, source=None):
    worst = _worst([r for pair in pairs for r in plane.failed.get(pair, ())]) or {}
    entry = {
        "verdict": "switch_fault",
        "scope": "path",
        "source": source,
        "kind": plane.key[0],
        "rail": plane.key[1],
        "test": worst.get("test"),
        "switches": [switch] if switch else [],
        "groups": {},
        "hosts": [host],
        "passed_with": plane.sorted_partners(host),
        "failing": len(pairs),
        "tested": len(pairs) + len(plane.ok.get(host, ())),
        "inside_passing": 0,
        "pairs": sorted(plane.failed[p][0]["link"] for p in pairs if p in plane.failed)[:PAIRS_LISTED],
    }
    entry.update(_brief(worst))
    entry["_pairs"] = set(pairs)
    return entry


def _fabric_fault(plane, links, retest):
    """Failing pairs no host explains and no grouping places: a fault above the hosts, somewhere in the fabric."""
    results = [r for pair in links for r in _pair_results(plane, pair, retest)]
    worst = _worst(results)
    hosts = sorted(set(h for pair in links for h in pair))
    entry = {
        "verdict": "switch_fault",
        "scope": "fabric",
        "source": None,
        "kind": plane.key[0],
        "rail": plane.key[1],
        "test": worst.get("test"),
        "switches": [],
        "groups": {},
        "hosts": hosts,
        "failing": len(links),
        "tested": len(links) + sum(len(plane.ok.get(h, ())) for h in hosts) // 2,
        "inside_passing": 0,
        "pairs": sorted(_worst(_pair_results(plane, p, retest))["link"] for p in links)[:PAIRS_LISTED],
    }
    entry.update(_brief(worst))
    entry["_pairs"] = set(links)
    return entry


def judge_plane(plane, groups=None):
    """Every verdict of one plane: {nodes: [entries], links: [entries], faults: [entries], good, cleared}."""
    first = analyse_first_pass(plane, groups)
    retest = analyse_retests(plane, first)
    decision = retest["decision"]
    nodes, named = _plane_nodes(plane, first, retest)
    faults = list(first["faults"])
    for host, verdict in sorted(decision.items()):
        if verdict == "path":
            pairs = set(p for p in plane.failed if host in p)
            pairs.update(_pair(r["server"], r["client"]) for r in retest["runs"][host] if not r["passed"])
            faults.append(_path_fault(plane, host, pairs, first["leaf_of"].get(host), first["source"]))
            named.add(host)
    links = _remaining_links(plane, first, retest, named)
    if not first["leaf_of"]:
        process = set(p for p in links if p in plane.process_pairs)  # a host's processes, never the fabric's
        path, links = _path_faults(plane, links - process, named)
        faults += path
        if links and (faults or len(links) >= FABRIC_MIN_PAIRS):
            faults.append(_fabric_fault(plane, links, retest))
            links = set()
        links |= process
    cleared = set(h for h, v in decision.items() if v == "cleared")
    link_entries = [_link_entry(_pair_results(plane, pair, retest), cleared) for pair in sorted(links)]
    return {"nodes": nodes, "links": link_entries, "faults": faults, "good": first["good"], "cleared": cleared}


def _plane_nodes(plane, first, retest):
    """(node entries, hosts they name) of one plane."""
    decision, runs = retest["decision"], retest["runs"]
    entries = []
    for host in sorted(first["nodes"] | set(h for h, v in decision.items() if v in ("bad_node", "intermittent"))):
        verdict = decision.get(host)
        if verdict in ("path", "cleared"):
            continue
        entries.append(_node_entry(host, verdict or "suspect", plane, first, runs.get(host, [])))
    named = set(e["host"] for e in entries)
    for partner, subject in sorted(retest["partner_suspects"].items()):
        if partner not in named:
            failed = [r for r in runs.get(subject, []) if not r["passed"] and partner in (r["server"], r["client"])]
            entries.append(_node_entry(partner, "suspect", plane, first, failed, subject))
            named.add(partner)
    return entries, named


def _remaining_links(plane, first, retest, named):
    """Failing pairs of pass 1 (suspect links) and failed retests that no named host explains."""
    links = set(p for p in first["links"] if p[0] not in named and p[1] not in named)
    for res in plane.retests:
        if not res["passed"] and res["server"] not in named and res["client"] not in named:
            links.add(_pair(res["server"], res["client"]))
    return links


def _pair_results(plane, pair, retest):
    found = list(plane.failed.get(pair, ()))
    if not found:
        found = [r for r in plane.retests if _pair(r["server"], r["client"]) == pair and not r["passed"]]
    return found


# ---------------------------------------------------------------------------------------------
# Merging the planes


def _merge_node(into, entry):
    rank = NODE_VERDICTS.index
    if rank(entry["verdict"]) < rank(into["verdict"]):
        into["verdict"] = entry["verdict"]
        if "reason" in entry:
            into["reason"] = entry["reason"]
    for key in ("failed_with", "devices", "rails"):
        into[key] = sorted(set(into[key]) | set(entry[key]), key=str)
    into["first_pass_suspect"] = into["first_pass_suspect"] or entry["first_pass_suspect"]
    into["retest"] = into["retest"] + entry["retest"]


def _public(fault):
    return dict((k, v) for k, v in fault.items() if not k.startswith("_"))


def localize(results, exclude_hosts=(), groups=None):
    """Name the culprits from normalised results, plane by plane (see the module docstring).

    ``groups``: switches.py groups ({host: {rail|device|"*": switch}}), or a (groups, source) tuple; None infers
    them from the results where it can. Returns {suspect_nodes, suspect_links, switch_faults, known_good,
    cleared}.
    """
    planes = build_planes(results, frozenset(exclude_hosts or ()))
    nodes, links, faults = {}, [], []
    good, bad_somewhere, cleared = set(), set(), set()
    for key in sorted(planes, key=str):
        verdict = judge_plane(planes[key], groups)
        for entry in verdict["nodes"]:
            if entry["host"] in nodes:
                _merge_node(nodes[entry["host"]], entry)
            else:
                nodes[entry["host"]] = entry
        links += verdict["links"]
        faults += verdict["faults"]
        good |= verdict["good"]
        cleared |= verdict["cleared"]
        bad_somewhere |= planes[key].hosts() - verdict["good"]
    return {
        "suspect_nodes": [nodes[h] for h in sorted(nodes)],
        "suspect_links": sorted(links, key=lambda x: (x["link"], str(x.get("rail")))),
        "switch_faults": [_public(f) for f in faults],
        "known_good": sorted(good - bad_somewhere),
        "cleared": sorted(cleared - set(nodes)),
    }


# ---------------------------------------------------------------------------------------------
# The first-pass rule as one call (the retest planner and older callers)


def first_pass(results, groups=None):
    """(suspect_nodes, suspect_link_pairs, known_good, failed_partners, failing_roles) over every plane of pass 1:
    the hosts and pairs a retest should measure again, and the hosts that may partner them."""
    planes = build_planes([r for r in results if (r.get("pass") or 1) == 1])
    nodes, links, good, bad_somewhere, failed, roles = set(), set(), set(), set(), {}, {}
    for plane in planes.values():
        first = analyse_first_pass(plane, groups)
        nodes |= first["nodes"]
        links |= first["links"]
        good |= first["good"]
        bad_somewhere |= plane.hosts() - first["good"]
        for host, partners in plane.bad.items():
            failed.setdefault(host, set()).update(partners)
        for host, count in plane.roles.items():
            into = roles.setdefault(host, {"server": 0, "client": 0})
            into["server"] += count["server"]
            into["client"] += count["client"]
    links = set(p for p in links if p[0] not in nodes and p[1] not in nodes)
    return sorted(nodes), sorted(links), sorted(good - bad_somewhere), failed, roles


def first_pass_suspects(results):
    """(suspect_nodes, suspect_link_pairs, known_good, failed_partners): see first_pass."""
    nodes, links, good, failed, _roles = first_pass(results)
    return nodes, links, good, failed
