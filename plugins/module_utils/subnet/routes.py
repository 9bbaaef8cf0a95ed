# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routes through the fabric from the forwarding tables OpenSM programmed, route-aware test rounds
(``cover_links``: every inter-switch link carries test traffic in each direction in few rounds) and
the cable a set of failing pairs has in common (``name_cables``).

Pure functions over parsers.parse_ibnetdiscover() and parsers.parse_lfts() results. A pair is
[server, client]; the data of a bandwidth test (ib_write_bw) flows client -> server, so the pair's
path is the client's route to the server's LID.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq
from collections import defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid

MAX_HOPS = 64
_RANK = {"leaf": 0, "spine": 1, "core": 2}


def normalize_routes(routes):
    """{switch guid: {lid: port}} with int LIDs and ports (a JSON round trip makes the LIDs strings)."""
    out = {}
    for guid, table in (routes or {}).items():
        out[normalize_guid(guid)] = dict((int(lid), int(port)) for lid, port in table.items())
    return out


class Router:
    """Follows LFTs from a CA port to a destination LID; caches per (ingress switch, destination)."""

    def __init__(self, topology, routes, index=None):
        self.index = index or Index(topology)
        self.routes = normalize_routes(routes)
        self._cache = {}

    def lid_of(self, guid, port=None):
        node = self.index.nodes.get(guid)
        for entry in (node or {}).get("ports", []):
            if (port is None or entry["port"] == port) and entry.get("lid") is not None:
                return entry["lid"]
        return None

    def hops(self, src_guid, dst_guid, src_port=None, dst_port=None):
        """Directed cables [(from guid, from port, to guid, to port), ...] from one CA to another, or
        None when the tables do not lead there (no LFT entry, a loop, a dead end)."""
        attach = self.index.ca_attachment(src_guid)
        if src_port is not None:
            peer = self.index.peer.get((src_guid, src_port))
            attach = (peer[0], peer[1], src_port) if peer else None
        dlid = self.lid_of(dst_guid, dst_port)
        if attach is None or dlid is None:
            return None
        first = (src_guid, attach[2], attach[0], attach[1])
        rest = self._from_switch(attach[0], dlid, dst_guid)
        if rest is None:
            return None
        return [first] + rest

    def _from_switch(self, switch, dlid, dst_guid):
        key = (switch, dlid)
        if key in self._cache:
            return self._cache[key]
        path = []
        current = switch
        result = None
        for _hop in range(MAX_HOPS):
            table = self.routes.get(current)
            out = table.get(dlid) if table else None
            if not out:
                break
            peer = self.index.peer.get((current, out))
            if peer is None:
                break
            path.append((current, out, peer[0], peer[1]))
            if peer[0] == dst_guid:
                result = path
                break
            if not self.index.is_switch(peer[0]):
                break
            current = peer[0]
        self._cache[key] = result
        return result

    def label(self, guid, port):
        """ "A09-P1-IBLEAF-04-04 p17" for a switch port, "node12 mlx5_3" for a CA port."""
        return self.index.port_label(guid, port)

    def rank(self, guid):
        if not self.index.is_switch(guid):
            return 9
        return _RANK.get(self.index.tier.get(guid), 3)

    def hop_dict(self, hop):
        a, ap, b, bp = hop
        return {
            "from": self.label(a, ap),
            "to": self.label(b, bp),
            "from_guid": a,
            "from_port": ap,
            "to_guid": b,
            "to_port": bp,
            "from_rank": self.rank(a),
            "to_rank": self.rank(b),
            "isl": self.index.is_switch(a) and self.index.is_switch(b),
        }


def endpoints(topology, hosts_or_cas=None, index=None):
    """Endpoint name -> {rail: CA guid}.

    hosts_or_cas: None (every CA that is not a SHARP Aggregation Node, named by its description),
    a list of CA GUIDs (or CA names), or an inventory {host: {device: node_guid}} / {host: [guid, ...]}:
    a host pair then tests rail r against rail r for every rail both have.
    """
    index = index or Index(topology)
    by_name = {}
    for ca in topology["cas"]:
        by_name.setdefault(ca["name"], ca["guid"])
    out = {}
    if hosts_or_cas is None:
        for ca in topology["cas"]:
            if not ca["aggregation_node"] and index.ca_attachment(ca["guid"]):
                out[_unique(out, ca["name"] or ca["guid"], ca["guid"])] = {0: ca["guid"]}
        return out
    if isinstance(hosts_or_cas, dict):
        for host, rails in hosts_or_cas.items():
            if isinstance(rails, dict):
                out[host] = dict((dev, normalize_guid(g)) for dev, g in rails.items())
            else:
                out[host] = dict((i, normalize_guid(g)) for i, g in enumerate(rails))
        return out
    for item in hosts_or_cas:
        guid = normalize_guid(item) if normalize_guid(item) in index.nodes else by_name.get(item)
        if guid is None:
            raise ValueError("endpoint %r is neither a CA GUID nor a CA name in the topology: check the list." % item)
        out[str(item)] = {0: guid}
    return out


def _unique(existing, name, guid):
    return name if name not in existing else "%s (%s)" % (name, guid)


def pair_hops(router, eps, server, client):
    """Directed hops of every rail of a pair (client -> server), or None when no rail is routable."""
    hops = []
    routed = False
    for rail, s_guid in eps[server].items():
        c_guid = eps[client].get(rail)
        if c_guid is None:
            continue
        path = router.hops(c_guid, s_guid)
        if path is not None:
            routed = True
            hops.extend(path)
    return hops if routed else None


def pair_paths(pairs, routes, topology, hosts_or_cas=None):
    """[{"pair": [server, client], "path": [hop dict, ...] or None}] for the lead's pairs: each hop names
    both ends ("A09-P1-IBLEAF-04-04 p17") and their GUIDs/ports. Feed these to name_cables()."""
    router = Router(topology, routes)
    eps = endpoints(topology, hosts_or_cas, router.index)
    out = []
    for pair in pairs:
        server, client = pair[0], pair[1]
        if server not in eps or client not in eps:
            out.append({"pair": [server, client], "path": None})
            continue
        hops = pair_hops(router, eps, server, client)
        out.append({"pair": [server, client], "path": [router.hop_dict(h) for h in hops] if hops is not None else None})
    return out


def _isls(router, hops):
    return frozenset((h[0], h[1]) for h in hops if router.index.is_switch(h[0]) and router.index.is_switch(h[2]))


def all_isls(topology, index=None):
    """Every directed ISL as (from guid, from port)."""
    index = index or Index(topology)
    out = set()
    for link in topology["links"]:
        if link["kind"] == "isl":
            out.add((link["a"]["guid"], link["a"]["port"]))
            out.add((link["b"]["guid"], link["b"]["port"]))
    return out


def _isl_sets(router, eps, names):
    """isls_of(ingress switch, destination LID, destination guid) -> frozenset of directed ISLs, and the
    ingress switch and LID of every endpoint rail. A route depends only on the ingress switch and the
    destination LID: ISL sets are computed once per (ingress switch, LID) and shared by every pair."""
    index = router.index
    ingress, lids, cache = {}, {}, {}
    for name in names:
        for guid in eps[name].values():
            attach = index.ca_attachment(guid)
            ingress[guid] = attach[0] if attach else None
            lids[guid] = router.lid_of(guid)

    def isls_of(sw, dlid, dst):
        key = (sw, dlid)
        if key not in cache:
            hops = router._from_switch(sw, dlid, dst)
            cache[key] = frozenset((h[0], h[1]) for h in hops if index.is_switch(h[2])) if hops is not None else None
        return cache[key]

    return isls_of, ingress, lids


def _pair_isls(eps, server, client, isls_of, ingress, lids):
    """The directed ISLs a pair's rails cross (client -> server, rail r with rail r)."""
    union = frozenset()
    for rail, s_guid in eps[server].items():
        c_guid = eps[client].get(rail)
        if c_guid is None or ingress.get(c_guid) is None or lids.get(s_guid) is None:
            continue
        found = isls_of(ingress[c_guid], lids[s_guid], s_guid)
        if found:
            union = union | found
    return union


def _candidates(router, eps):
    """[(directed ISLs, server, client)] for every ordered pair of endpoints whose route crosses an ISL."""
    names = sorted(eps, key=str)
    isls_of, ingress, lids = _isl_sets(router, eps, names)
    out = []
    for client in names:
        for server in names:
            if client == server:
                continue
            union = _pair_isls(eps, server, client, isls_of, ingress, lids)
            if union:
                out.append((union, server, client))
    return out


def _gain(isls, uncovered, priority):
    """What a pair adds: (ISLs to load first it covers, all ISLs it covers), both still uncovered."""
    fresh = isls & uncovered
    return (len(fresh & priority), len(fresh))


def _pick_round(candidates, uncovered, priority):
    """One round, greedily and lazily: the pair that covers the most still-uncovered ISLs to load first, then
    the most still-uncovered ISLs, while its two hosts are free. Returns (pairs, ISLs covered)."""
    heap = []
    for i, (isls, _server, _client) in enumerate(candidates):
        gain = _gain(isls, uncovered, priority)
        if gain[1]:
            heap.append((-gain[0], -gain[1], i))
    heapq.heapify(heap)
    used, chosen, gained = set(), [], 0
    while heap:
        _p, _g, i = heapq.heappop(heap)
        isls, server, client = candidates[i]
        if server in used or client in used:
            continue
        gain = _gain(isls, uncovered, priority)
        if gain[1] == 0:
            continue
        if heap and (-gain[0], -gain[1]) > heap[0][:2]:
            heapq.heappush(heap, (-gain[0], -gain[1], i))
            continue
        chosen.append([server, client])
        used.update((server, client))
        uncovered -= isls
        gained += gain[1]
    return chosen, gained


def _uncovered_report(router, every, coverable, uncovered, max_rounds):
    def entry(isl, reason):
        peer = router.index.peer[isl]
        return {
            "from": router.label(*isl),
            "to": router.label(*peer),
            "text": "%s -> %s" % (router.label(*isl), router.label(*peer)),
            "reason": reason,
        }

    report = [entry(isl, "no candidate pair's route crosses it") for isl in sorted(every - coverable)]
    report += [entry(isl, "not covered within %d rounds" % max_rounds) for isl in sorted(uncovered)]
    return report


def load_first_isls(topology, load_first, index=None):
    """The directed ISLs of the switch ports to load first ([[switch guid, port], ...]): each port's cable in
    both directions."""
    index = index or Index(topology)
    out = set()
    for guid, port in load_first or []:
        end = (normalize_guid(guid), int(port))
        peer = index.peer.get(end)
        if peer is not None and index.is_switch(end[0]) and index.is_switch(peer[0]):
            out.update((end, peer))
    return out


def plan_cover(hosts_or_cas, routes, topology, max_rounds=8, load_first=None):
    """cover_links planner; returns {"rounds", "uncovered", "coverable", "covered", "total", "per_round",
    "endpoints", "load_first"}.

    load_first: switch ports ([[guid, port], ...], e.g. an oversubscribed leaf's uplinks) whose cables the
    rounds cover before any other ISL; ``load_first`` in the result counts their directions per round."""
    router = Router(topology, routes)
    eps = endpoints(topology, hosts_or_cas, router.index)
    candidates = _candidates(router, eps)
    every = all_isls(topology, router.index)
    coverable = set()
    for isls, _server, _client in candidates:
        coverable |= isls
    priority = load_first_isls(topology, load_first, router.index) & coverable
    uncovered = set(coverable)
    rounds, per_round, first = [], [], []
    while uncovered and len(rounds) < max_rounds:
        before = len(priority & uncovered)
        chosen, gained = _pick_round(candidates, uncovered, priority)
        if not chosen:
            break
        rounds.append(chosen)
        per_round.append(gained)
        first.append(before - len(priority & uncovered))
    return {
        "rounds": rounds,
        "uncovered": _uncovered_report(router, every, coverable, uncovered, max_rounds),
        "total": len(every),
        "coverable": len(coverable),
        "covered": len(coverable) - len(uncovered),
        "per_round": per_round,
        "endpoints": eps,
        "load_first": {"directions": len(priority), "per_round": first},
    }


def cover_links_rounds(hosts_or_cas, routes, topology, max_rounds=8):
    """Rounds of disjoint [server, client] pairs so every directed ISL carries test traffic at least once
    (greedy: each round takes, lazily, the pairs that cover the most still-uncovered ISLs), and the ISLs
    left uncovered ([{from, to, text, reason}]: none of the candidates' routes crosses them, or the round
    budget ran out)."""
    plan = plan_cover(hosts_or_cas, routes, topology, max_rounds)
    return plan["rounds"], plan["uncovered"]


def _cable(hop):
    """(key, a label, b label) of the cable a hop crosses, switch end first, lower tier first."""
    ends = [
        (hop.get("from_rank", 0), hop["from_guid"], hop["from_port"], hop["from"]),
        (hop.get("to_rank", 0), hop["to_guid"], hop["to_port"], hop["to"]),
    ]
    ends.sort(key=lambda e: (e[0], e[1], e[2]))
    key = ((ends[0][1], ends[0][2]), (ends[1][1], ends[1][2]))
    return tuple(sorted(key)), ends[0][3], ends[1][3]


def _hops_of(path):
    if isinstance(path, dict):
        return path.get("path") or []
    return path or []


def _pair_text(path):
    if isinstance(path, dict) and path.get("pair"):
        return "%s <- %s" % (path["pair"][0], path["pair"][1])
    hops = _hops_of(path)
    return "%s -> %s" % (hops[0]["from"], hops[-1]["to"]) if hops else "?"


def _failing_cables(failing_pairs_paths, passing):
    """(labels {cable key: (a, b)}, [(pair text, cables on it that no passing path crosses)])."""
    labels = {}
    failing = []
    for path in failing_pairs_paths or []:
        cables = set()
        for hop in _hops_of(path):
            key, a, b = _cable(hop)
            labels.setdefault(key, (a, b))
            if key not in passing:
                cables.add(key)
        if cables:
            failing.append((_pair_text(path), cables))
    return labels, failing


def _most_failing(open_paths, failing):
    """(failing path indexes, cable keys): the cables on the most still-unexplained failing paths; cables on
    exactly the same paths cannot be told apart and come together."""
    on = defaultdict(set)
    for i in open_paths:
        for key in failing[i][1]:
            on[key].add(i)
    best = max(len(v) for v in on.values())
    groups = defaultdict(list)
    for key, paths in on.items():
        if len(paths) == best:
            groups[frozenset(paths)].append(key)
    paths, keys = min(groups.items(), key=lambda kv: (-len(kv[0]), min(kv[1])))
    return paths, sorted(keys)


def name_cables(failing_pairs_paths, passing_pairs_paths):
    """Suspect cables: on failing pairs' paths and on no passing pair's path.

    Each argument: a list of paths as pair_paths() returns them (dicts with "pair" and "path") or bare
    hop lists. Greedy cover: the cable on the most failing paths first, until every failing path that has
    an unexplained cable is explained; cables that tie on the same paths are all named (ambiguous).
    Returns [{"a": "A09-P1-IBLEAF-04-04 p38", "b": "A10-P1-IBSPINE-03 p32", "reason": str, "failing": n}].
    """
    passing = set()
    for path in passing_pairs_paths or []:
        passing.update(_cable(hop)[0] for hop in _hops_of(path))
    labels, failing = _failing_cables(failing_pairs_paths, passing)
    total = len(failing_pairs_paths or [])
    open_paths = list(range(len(failing)))
    suspects = []
    while open_paths:
        paths, keys = _most_failing(open_paths, failing)
        names = sorted(failing[i][0] for i in paths)
        reason = "on %d of %d failing paths (%s) and on none of the %d passing paths" % (
            len(paths),
            total,
            ", ".join(names[:4]) + (", ..." if len(names) > 4 else ""),
            len(passing_pairs_paths or []),
        )
        if len(keys) > 1:
            reason += "; %d cables share exactly these paths, one of them is the fault" % len(keys)
        suspects += [{"a": labels[k][0], "b": labels[k][1], "reason": reason, "failing": len(paths)} for k in keys]
        open_paths = [i for i in open_paths if i not in paths]
    return suspects


def describe_cables(suspects):
    if not suspects:
        return "no cable is common to the failing pairs alone"
    return "; ".join("cable %s <-> %s (%s)" % (s["a"], s["b"], s["reason"]) for s in suspects)


def paths_for_results(results, routes, topology, hosts):
    """Report results -> (failing paths, passing paths) for name_cables(), one path per rail pair.

    results: entries with server, server_device, client, client_device, passed (and kind: a latency test
    is ping-pong, so its path holds both directions); hosts: {host: {device: node_guid}} (ib_facts GUIDs).
    Results whose host or device is not in hosts, or whose route the tables do not give, are left out.
    """
    router = Router(topology, routes)
    guids = dict(
        (h, dict((d, normalize_guid(g)) for d, g in (devs or {}).items())) for h, devs in (hosts or {}).items()
    )
    failing, passing = [], []
    for res in results or []:
        s_guid = guids.get(res.get("server"), {}).get(res.get("server_device"))
        c_guid = guids.get(res.get("client"), {}).get(res.get("client_device"))
        if not s_guid or not c_guid:
            continue
        hops = router.hops(c_guid, s_guid)
        if hops is None:
            continue
        if res.get("kind") == "latency":
            back = router.hops(s_guid, c_guid)
            hops = hops + (back or [])
        entry = {
            "pair": ["%s %s" % (res["server"], res["server_device"]), "%s %s" % (res["client"], res["client_device"])],
            "path": [router.hop_dict(h) for h in hops],
        }
        (passing if res.get("passed") else failing).append(entry)
    return failing, passing
