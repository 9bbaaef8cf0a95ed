# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cover_links planned from the routes (pure): rounds of host pairs whose rails' routes cross every directed
inter-switch link, read straight from the compact topology's forwarding tables (validate/fabric.py).

subnet/routes.plan_cover scores every ordered host pair (N^2 x rails routes: 33 M for 2048 hosts x 8 rails)
and needs the tables expanded into dicts (a dict entry per switch and LID: 8.9 M). Here the tables stay what
the compact topology holds, one byte per LID per switch (``bytes.fromhex``), and the candidates come from
the routes themselves: a route depends only on the ingress switch and the destination LID, so for every
ingress leaf of a rail the route to each of the rail's servers is walked once (a few byte lookups) and the
servers are bucketed by the route they get. A leaf then offers one candidate per distinct route (in a
two-level tree one per up port and destination leaf) instead of one per host pair, and every directed ISL a
host pair's route can cross is still in some candidate. The rounds are chosen
greedily as routes.plan_cover chooses them (each round takes, lazily, the pairs covering the most ISLs not
yet covered; a pair runs on all its rails at once, rail r with rail r), and the result has plan_cover's keys.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

MAX_HOPS = 64
KEEP_PER_ISL = 4  # candidates kept per directed ISL (more: more freedom for the rounds, more time)


class Tables(object):
    """The compact topology's forwarding tables and cables, decoded once."""

    def __init__(self, compact):
        self.name = dict((sw[0], sw[2]) for sw in compact.get("switches") or [])
        self.switches = set(self.name)
        self.lid = {}
        for guid, _name, _agg, ports in compact.get("cas") or []:
            lids = [lid for _port, lid in ports if lid]
            if lids:
                self.lid[guid] = int(lids[0])
        self.tables = {}
        for guid, entry in (compact.get("lfts") or {}).items():
            if entry:
                self.tables[guid] = (int(entry[0]), bytes.fromhex(entry[1]))
        self.peer = {}
        self.isls = set()
        self.attach = {}
        for a, ap, b, bp, kind in compact.get("links") or []:
            self.peer[(a, ap)] = (b, bp)
            self.peer[(b, bp)] = (a, ap)
            if kind == "isl":
                self.isls.update(((a, ap), (b, bp)))
            for ca, sw in ((a, b), (b, a)):
                if ca not in self.switches and sw in self.switches:
                    self.attach.setdefault(ca, sw)

    def out_port(self, switch, lid):
        entry = self.tables.get(switch)
        if entry is None:
            return 0
        index = lid - entry[0]
        return entry[1][index] if 0 <= index < len(entry[1]) else 0

    def route(self, switch, lid, dst):
        """The directed ISLs (from guid, from port) of the route from ``switch`` to the CA ``dst`` (LID ``lid``),
        or None when the tables do not lead there."""
        isls = []
        current = switch
        tables, peer, switches = self.tables, self.peer, self.switches
        for _hop in range(MAX_HOPS):
            entry = tables.get(current)
            index = lid - entry[0] if entry else -1
            port = entry[1][index] if 0 <= index < len(entry[1]) else 0
            nxt = peer.get((current, port)) if port else None
            if nxt is None:
                return None
            if nxt[0] == dst:
                return tuple(isls)
            if nxt[0] not in switches:
                return None
            isls.append((current, port))
            current = nxt[0]
        return None

    def label(self, end):
        if end[0] in self.switches:
            return "%s p%d" % (self.name[end[0]], end[1])
        return "%s port %d" % (end[0], end[1])


class Planner(object):
    """One cover_links plan over ``eps`` ({host: {rail: CA guid}})."""

    def __init__(self, tables, eps):
        self.t = tables
        self.eps = eps
        self.by_rail = {}
        for host in sorted(eps):
            for rail, guid in eps[host].items():
                leaf, lid = tables.attach.get(guid), tables.lid.get(guid)
                if leaf is None or lid is None:
                    continue
                entry = self.by_rail.setdefault(rail, {"clients": {}, "servers": []})
                entry["clients"].setdefault(leaf, []).append(host)
                entry["servers"].append((host, lid, guid))
        self._pair_cache = {}

    def candidates(self, keep=KEEP_PER_ISL):
        """[(isls, rail, client leaf, [server hosts])]: for each rail and ingress leaf, one candidate per
        distinct route (its directed ISLs) to that rail's servers, with every server the route reaches; a route
        whose every ISL is already in ``keep`` candidates is left out (a two-level plane of 2048 hosts has 1 M
        distinct routes for 32 K ISLs: a few candidates per ISL are enough for the greedy rounds)."""
        out = []
        count = {}
        for rail, entry in sorted(self.by_rail.items(), key=lambda kv: str(kv[0])):
            servers = entry["servers"]
            tails = {}  # this rail's routes from the switch after the first hop (every leaf meets the same spines)
            for number, leaf in enumerate(sorted(entry["clients"])):
                # each leaf starts its walk at another server, so the kept routes spread over the destinations
                start = (number * len(servers)) // max(1, len(entry["clients"]))
                buckets = self._buckets(leaf, servers[start:] + servers[:start], tails, count, keep)
                out.extend((frozenset(isls), rail, leaf, hosts) for isls, hosts in buckets.items())
        return out

    def _buckets(self, leaf, servers, tails, count, keep):
        """{route: [server hosts]} of one ingress leaf, in the order first met; ``count`` ({ISL: candidates}) is
        updated for the routes kept."""
        buckets = {}
        for host, lid, guid in servers:
            isls = self.route_from(leaf, lid, guid, tails)
            if not isls:
                continue
            hosts = buckets.get(isls)
            if hosts is not None:
                hosts.append(host)
                continue
            for isl in isls:  # any ISL of the route in fewer than `keep` candidates yet?
                if count.get(isl, 0) < keep:
                    break
            else:
                continue
            for isl in isls:
                count[isl] = count.get(isl, 0) + 1
            buckets[isls] = [host]
        return buckets

    def route_from(self, leaf, lid, dst, tails):
        """Tables.route(leaf, lid, dst), with the rest of the route after the first hop looked up in ``tails``
        ({(switch, lid, dst): Tables.route from there}) and added there when new: a route depends only on the
        switch and the destination, so the leaves whose first hop meets the same switch share the rest."""
        t = self.t
        entry = t.tables.get(leaf)  # Tables.out_port, inline (once per server and leaf)
        index = lid - entry[0] if entry else -1
        port = entry[1][index] if 0 <= index < len(entry[1]) else 0
        nxt = t.peer.get((leaf, port)) if port else None
        if nxt is None:
            return None
        if nxt[0] == dst:
            return ()
        if nxt[0] not in t.switches:
            return None
        key = (nxt[0], lid, dst)
        if key in tails:
            tail = tails[key]
        else:
            tail = tails[key] = t.route(nxt[0], lid, dst)
        # Tables.route walks at most MAX_HOPS hops, the first one included
        if tail is None or len(tail) + 2 > MAX_HOPS:
            return None
        return ((leaf, port),) + tail

    def pair_isls(self, server, client):
        """Every rail's ISLs of the pair (client -> server, rail r with rail r)."""
        key = (server, client)
        if key not in self._pair_cache:
            found = set()
            for rail, s_guid in self.eps[server].items():
                c_guid = self.eps[client].get(rail)
                leaf = self.t.attach.get(c_guid) if c_guid else None
                lid = self.t.lid.get(s_guid)
                if leaf is not None and lid is not None:
                    found.update(self.t.route(leaf, lid, s_guid) or ())
            self._pair_cache[key] = found
        return self._pair_cache[key]

    def gain(self, server, client, uncovered, priority):
        """(ISLs to load first, ISLs) the pair would newly cover."""
        new = self.pair_isls(server, client) & uncovered
        return (len(new & priority), len(new)) if priority else (0, len(new))

    def best_client(self, rail, leaf, used, server, uncovered, priority, tries=8):
        """(gain, client): of the first ``tries`` free hosts on the leaf, the one whose pair with ``server``
        covers the most still-uncovered ISLs (those to load first before the others) on all rails."""
        best = ((0, 0), None)
        looked = 0
        for host in self.by_rail[rail]["clients"].get(leaf) or []:
            if host in used or host == server:
                continue
            gain = self.gain(server, host, uncovered, priority)
            if gain > best[0]:
                best = (gain, host)
            looked += 1
            if looked >= tries:
                break
        return best

    def best_pair(self, rail, leaf, servers, used, uncovered, priority):
        """(gain, server, client): the bucket's first free server (the bucket's servers share this rail's route)
        and its best client on the leaf."""
        for server in servers:
            if server not in used:
                gain, client = self.best_client(rail, leaf, used, server, uncovered, priority)
                return gain, server, client
        return (0, 0), None, None

    def one_round(self, candidates, uncovered, priority):
        """Disjoint pairs, greedily and lazily: the most still-uncovered ISLs to load first, then the most ISLs.
        Returns (pairs, ISLs covered)."""
        heap = []
        for i, (isls, _rail, _leaf, _servers) in enumerate(candidates):
            new = isls & uncovered
            if new:  # a rail's own ISLs, times the rails a pair runs on: an estimate the lazy heap corrects
                heap.append((-len(new & priority) * 8, -len(new) * 8, i))
        heapq.heapify(heap)
        used, chosen, gained = set(), [], 0
        while heap:
            _p, _g, i = heapq.heappop(heap)
            _isls, rail, leaf, servers = candidates[i]
            gain, server, client = self.best_pair(rail, leaf, servers, used, uncovered, priority)
            if client is None or gain[1] == 0:
                continue
            if heap and (-gain[0], -gain[1]) > heap[0][:2]:
                heapq.heappush(heap, (-gain[0], -gain[1], i))
                continue
            covered = self.pair_isls(server, client) & uncovered
            chosen.append([server, client])
            used.update((server, client))
            uncovered -= covered
            gained += len(covered)
        return chosen, gained


def load_first_isls(tables, load_first):
    """Both directions of the cables of the switch ports to load first ([[guid, port], ...])."""
    out = set()
    for guid, port in load_first or []:
        end = (guid, int(port))
        peer = tables.peer.get(end)
        if peer is not None and end[0] in tables.switches and peer[0] in tables.switches:
            out.update((end, peer))
    return out


def plan_cover(eps, compact, max_rounds=8, load_first=None):
    """routes.plan_cover's result ({rounds, uncovered, coverable, covered, total, per_round, load_first}) from the
    compact topology's own tables; ``eps``: {host: {rail: CA guid}} (fabric.rail_endpoints); ``load_first``: switch
    ports whose cables the rounds cover before any other ISL (fabric.load_first)."""
    tables = Tables(compact)
    planner = Planner(tables, eps)
    candidates = planner.candidates()
    coverable = set()
    for isls, _rail, _leaf, _servers in candidates:
        coverable |= isls
    priority = load_first_isls(tables, load_first) & coverable
    uncovered = set(coverable)
    rounds, per_round, first = [], [], []
    while uncovered and len(rounds) < max_rounds:
        before = len(priority & uncovered)
        chosen, gained = planner.one_round(candidates, uncovered, priority)
        if not chosen:
            break
        rounds.append(chosen)
        per_round.append(gained)
        first.append(before - len(priority & uncovered))
    return {
        "rounds": rounds,
        "uncovered": _uncovered_report(tables, tables.isls - coverable, uncovered, max_rounds),
        "total": len(tables.isls),
        "coverable": len(coverable),
        "covered": len(coverable) - len(uncovered),
        "per_round": per_round,
        "load_first": {"directions": len(priority), "per_round": first},
    }


def _uncovered_report(tables, never, left, max_rounds):
    out = []
    for isls, reason in (
        (never, "no candidate pair's route crosses it"),
        (left, "not covered within %d rounds" % max_rounds),
    ):
        for end in sorted(isls):
            text = "%s -> %s" % (tables.label(end), tables.label(tables.peer[end]))
            out.append(
                {"from": tables.label(end), "to": tables.label(tables.peer[end]), "text": text, "reason": reason}
            )
    return out
