# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair planning for fabric validation: rounds of disjoint [server, client] pairs.

Pure functions; the filters ``pair_rounds`` and ``retest_rounds`` wrap them. A round is a list of
pairs in which no host appears twice, so every pair of a round can run at the same time.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import random

# The first-pass localization rule is the report's (one rule for who is suspect and who is known-good).
# first_pass_suspects is part of this module's API (the tests and callers import it from here).
from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.localize import (  # noqa: F401 pylint: disable=unused-import
    analyse_first_pass,
    build_planes,
    first_pass,
    first_pass_suspects,
    implicates_link,
    subjects_of,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.peer import peer_gate
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import normalize_result
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.switches import switch_of

STRATEGIES = ("all_pairs", "ring", "random", "halves", "cross_group", "explicit")


def _check_hosts(hosts):
    if hosts is None:
        return []
    if isinstance(hosts, (str, bytes, dict)):
        raise ValueError(
            "hosts must be a list of host names, got %s %r: pass e.g. groups['gpu_nodes']"
            % (type(hosts).__name__, hosts)
        )
    try:
        hosts = list(hosts)
    except TypeError:
        raise ValueError("hosts must be a list of host names, got %s" % type(hosts).__name__)
    seen = set()
    for host in hosts:
        if not isinstance(host, str) or not host:
            raise ValueError("hosts must be non-empty host name strings, got %r" % (host,))
        if host in seen:
            raise ValueError("host %s appears twice in hosts: each host must be listed once" % host)
        seen.add(host)
    return hosts


def _all_pairs(hosts):
    """Circle method (round-robin tournament).

    Even N: host N-1 stays put, the others rotate; round r pairs it with host r and pairs
    host (r+k) with host (r-k) mod (N-1) for k = 1..N/2-1: N-1 rounds, every pair once.
    Odd N: the same with a phantom host; whoever meets the phantom sits the round out: N rounds.
    Each host is server in about half of its rounds.
    """
    n = len(hosts)
    if n % 2:
        ring = list(hosts)
        fixed = None
        m = n
    else:
        ring = list(hosts[:-1])
        fixed = hosts[-1]
        m = n - 1
    half = (m + 1) // 2  # pairs of the rotating ring per round (+1 with the fixed host)
    # ring tripled, so (r + k) and (r - k) mod m are plain slices: up = r+1 .. r+half-1,
    # down = r-1 .. r-half+1 (read backwards), both offset by m.
    triple = ring * 3
    rounds = []
    append = rounds.append
    # Millions of small lists for thousands of hosts: the cyclic GC would rescan them again and
    # again (4x slower); none of them can form a cycle, so pause it while building.
    with paused_gc():
        for r in range(m):
            base = r + m
            up = triple[base + 1 : base + half]
            down = triple[base - half + 1 : base][::-1]
            pairs = [[a, b] for a, b in zip(up, down)]
            if fixed is not None:
                pairs.append([fixed, ring[r]] if r % 2 else [ring[r], fixed])
            append(pairs)
    return rounds


def _ring(hosts):
    n = len(hosts)
    if n == 2:
        return [[[hosts[0], hosts[1]]]]
    edges = [[hosts[i], hosts[(i + 1) % n]] for i in range(n)]
    if n % 2 == 0:
        return [edges[0::2], edges[1::2]]
    # odd cycle: 3 colours; the closing edge (N-1, 0) goes alone into a third round.
    return [edges[0 : n - 1 : 2], edges[1 : n - 1 : 2], [edges[n - 1]]]


def _default_seed(hosts):
    # Deterministic from the host list: every host that evaluates the filter sees the same plan.
    digest = hashlib.sha256("\n".join(hosts).encode("utf-8")).hexdigest()
    return int(digest[:16], 16)


def _random_rounds(rounds):
    if rounds is None:
        return 1
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        try:
            rounds = int(rounds)
        except (TypeError, ValueError):
            raise ValueError("rounds must be a whole number >= 1 for strategy random, got %r" % (rounds,))
    if rounds < 1:
        raise ValueError("rounds must be >= 1 for strategy random, got %d" % rounds)
    return rounds


def _shuffled_round(rng, order, used):
    """The matching with the fewest pairs already measured among a few reshuffles (cheap; rare for large N)."""
    n = len(order)
    best, best_repeats = None, None
    for _attempt in range(8):
        rng.shuffle(order)
        pairs = [[order[i], order[i + 1]] for i in range(0, n - 1, 2)]
        repeats = sum(1 for a, b in pairs if (a, b) in used or (b, a) in used)
        if best is None or repeats < best_repeats:
            best, best_repeats = pairs, repeats
        if repeats == 0:
            break
    return best


def _random(hosts, rounds, seed):
    rounds = _random_rounds(rounds)
    if seed is not None and not isinstance(seed, (int, float, str)):
        raise ValueError("seed must be a number or a string, got %r" % (seed,))
    rng = random.Random(_default_seed(hosts) if seed is None else seed)
    order = list(hosts)
    used = set()
    out = []
    for _round in range(rounds):
        best = _shuffled_round(rng, order, used)
        used.update((a, b) for a, b in best)
        out.append(best)
    return out


def _halves(hosts):
    """First half against second half in one round; with odd N the host left over meets the first
    host in a second round, so every host is tested."""
    half = len(hosts) // 2
    out = [[[hosts[i], hosts[i + half]] for i in range(half)]]
    if len(hosts) % 2:
        out.append([[hosts[-1], hosts[0]]])
    return out


def _group_members(hosts, groups):
    """({group: [hosts]}, groups in first-seen order); ValueError names a host without a usable group."""
    if not isinstance(groups, dict):
        raise ValueError(
            "strategy cross_group needs groups, a dict of host -> group (e.g. leaf switch), got %r" % (groups,)
        )
    members, order = {}, []
    for host in hosts:
        if host not in groups:
            raise ValueError("host %s is missing from groups: give every host its group (e.g. its leaf switch)" % host)
        group = groups[host]
        if group is None or isinstance(group, (list, dict)):
            raise ValueError("group of host %s must be a name, got %r" % (host, group))
        group = str(group)
        if group not in members:
            members[group] = []
            order.append(group)
        members[group].append(host)
    if len(order) < 2:
        raise ValueError(
            "strategy cross_group needs hosts in at least two groups, all %d hosts are in group %s: "
            "use all_pairs or fix the groups" % (len(hosts), order[0])
        )
    return members, order


def _meeting(subrounds, a, b, index):
    """Add one meeting of groups a and b: the smaller group's members matched one-to-one into the larger one, one
    sub-round per len(small) members of the larger (every member meets someone), the offset rotating."""
    small, large = (b, a) if len(a) > len(b) else (a, b)
    needed = -(-len(large) // len(small))
    for sub in range(needed):
        if len(subrounds) <= sub:
            subrounds.append([])
        offset = (index * len(small) + sub * len(small)) % len(large)
        for i, host in enumerate(small):
            other = large[(i + offset) % len(large)]
            # alternate who serves so both sides act as server and client
            subrounds[sub].append([host, other] if (i + index + sub) % 2 == 0 else [other, host])


def _cross_group(hosts, groups):
    # Round-robin tournament of the groups: each group-round pairs groups disjointly, every pair of groups meets
    # exactly once (no host is left untested silently).
    members, order = _group_members(hosts, groups)
    out = []
    for index, grounds in enumerate(_all_pairs(order)):
        subrounds = []
        for ga, gb in grounds:
            _meeting(subrounds, members[ga], members[gb], index)
        out.extend(subrounds)
    return out


def _pair_of(item, index):
    if isinstance(item, dict):
        if "server" not in item or "client" not in item:
            raise ValueError("pairs[%d] must have server and client keys, got %r" % (index, item))
        return item["server"], item["client"]
    if isinstance(item, (str, bytes)):
        raise ValueError("pairs[%d] must be a [server, client] list, got %r" % (index, item))
    try:
        pair = list(item)
    except TypeError:
        raise ValueError("pairs[%d] must be a [server, client] list, got %r" % (index, item))
    if len(pair) != 2:
        raise ValueError("pairs[%d] must have exactly two hosts [server, client], got %r" % (index, item))
    return pair[0], pair[1]


def split_disjoint(pairs):
    """Greedy first fit: each pair goes into the first round where neither host is busy."""
    busy = []  # per round: set of hosts
    rounds = []
    for server, client in pairs:
        for index, hosts in enumerate(busy):
            if server not in hosts and client not in hosts:
                hosts.add(server)
                hosts.add(client)
                rounds[index].append([server, client])
                break
        else:
            busy.append({server, client})
            rounds.append([[server, client]])
    return rounds


def _explicit(hosts, pairs):
    if pairs is None or isinstance(pairs, (str, bytes, dict)):
        raise ValueError("strategy explicit needs pairs, a list of [server, client] lists, got %r" % (pairs,))
    known = set(hosts)
    seen = set()
    checked = []
    for index, item in enumerate(pairs):
        server, client = _pair_of(item, index)
        for host in (server, client):
            if host not in known:
                raise ValueError(
                    "pairs[%d] names host %s, which is not in hosts: add it or fix the pair" % (index, host)
                )
        if server == client:
            raise ValueError("pairs[%d] pairs host %s with itself: a pair needs two different hosts" % (index, server))
        if (server, client) in seen:
            raise ValueError("pairs[%d] [%s, %s] is listed twice: list each pair once" % (index, server, client))
        seen.add((server, client))
        checked.append((server, client))
    return split_disjoint(checked)


def pair_rounds(hosts, strategy="all_pairs", rounds=None, seed=None, groups=None, pairs=None):
    """Plan validation rounds: a list of rounds, each a list of disjoint [server, client] pairs.

    Raises ValueError with one sentence on bad input.
    """
    if strategy not in STRATEGIES:
        raise ValueError("unknown pair strategy %r: use one of %s" % (strategy, ", ".join(STRATEGIES)))
    hosts = _check_hosts(hosts)
    if len(hosts) < 2:
        return []
    if strategy == "all_pairs":
        return _all_pairs(hosts)
    if strategy == "ring":
        return _ring(hosts)
    if strategy == "random":
        return _random(hosts, rounds, seed)
    if strategy == "halves":
        return _halves(hosts)
    if strategy == "cross_group":
        return _cross_group(hosts, groups)
    return _explicit(hosts, pairs)


# ---------------------------------------------------------------------------------------------
# Second pass


def _check_results(results):
    if results is None:
        return []
    if isinstance(results, (str, bytes, dict)):
        raise ValueError("results must be a list of pair result dicts, got %s" % type(results).__name__)
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise ValueError("results[%d] must be a dict with server, client and passed, got %r" % (index, item))
    return results


def _check_partners(partners):
    try:
        partners = int(partners)
    except (TypeError, ValueError):
        raise ValueError("partners must be a whole number >= 1, got %r" % (partners,))
    if partners < 1:
        raise ValueError("partners must be >= 1, got %d" % partners)
    return partners


def _first_pass_gated(results, min_peer_fraction):
    """Pass-1 results as the report judges them: normalised copies with the peer gate applied, so that a pair that
    fails only the peer gate is retested too."""
    first = []
    for index, item in enumerate(r for r in results if r.get("pass") in (None, 1, "1", "")):
        res = normalize_result(dict(item), index)
        if "bw_avg_gbps" not in item and "t_typical_us" not in item and item.get("passed") is not None:
            # a bare verdict (server, client, passed: the filter's minimum) is taken as it is, not as a claim
            # its missing figure contradicts
            res["passed"] = bool(item["passed"])
            if res["passed"]:
                res["failure"] = res["failure_kind"] = None
        first.append(res)
    peer_gate(first, min_peer_fraction)
    return first


def _host_rails(rails, first):
    """{host: set of rail names}: the plan's rails (names or rail dicts), else the rails a host's results carry."""
    out = {}
    for res in first:
        out.setdefault(res["server"], set()).add(res["rail"])
        out.setdefault(res["client"], set()).add(res["rail"])
    for host, items in (rails or {}).items():
        out[host] = set(r.get("rail") if isinstance(r, dict) else r for r in items or [])
    return out


class _Retest:
    """The retest's inputs, per (bandwidth) plane: subjects, known-good partners, their failed partners."""

    def __init__(self, first, groups, allowed, barred, host_rails):
        self.planes = {}
        for key, plane in build_planes(first).items():
            if key[0] != "bandwidth":
                continue  # the retest pass measures bandwidth only
            analysis = analyse_first_pass(plane, groups)
            good = set(h for h in analysis["good"] if h not in barred and (allowed is None or h in allowed))
            self.planes[key] = (plane, analysis, good)
        self.groups = groups[0] if isinstance(groups, tuple) else groups
        self.allowed = allowed
        self.host_rails = host_rails

    def requests(self, partners):
        """[(subject, rails, role)], the rails a subject failed on together (one partner can retest them all)."""
        failing = {}
        roles = {}
        for (_kind, rail), (plane, analysis, _good) in sorted(self.planes.items(), key=str):
            for host in sorted(subjects_of(analysis)):
                if self.allowed is None or host in self.allowed:
                    failing.setdefault(host, []).append(rail)
                    count = plane.roles.get(host, {"server": 0, "client": 0})
                    into = roles.setdefault(host, {"server": 0, "client": 0})
                    into["server"] += count["server"]
                    into["client"] += count["client"]
        out = []
        for host in sorted(failing):
            first = "server" if roles[host]["server"] >= roles[host]["client"] else "client"
            second = "client" if first == "server" else "server"
            out.extend((host, failing[host], first if i % 2 == 0 else second) for i in range(partners))
        return out

    def candidates(self, subject, rails):
        """{partner: rank} of the hosts known-good on every one of ``rails`` that have them; rank (failed with the
        subject, not behind its switch): a pair that failed is measured again only when no other partner exists,
        and a partner on the subject's own switch separates the node from the path above it."""
        good = None
        failed_with = set()
        for rail in rails:
            plane, _analysis, plane_good = self.planes[("bandwidth", rail)]
            good = set(plane_good) if good is None else good & plane_good
            failed_with |= plane.bad.get(subject, set())
        own = switch_of(self.groups, subject, rails[0], None)
        ranks = {}
        for host in good or ():
            named = set(r for r in rails if r is not None)  # a result without a rail name: any partner has it
            if host != subject and named <= self.host_rails.get(host, set()):
                other = switch_of(self.groups, host, rails[0], None)
                ranks[host] = (host in failed_with, own is None or other != own)
        return ranks


def _schedule(retest, pending):
    """Disjoint rounds of [server, client, rails] for the requests, each partner used as little as possible."""
    usage = {}
    used_with = {}
    out = []
    while pending:
        busy = set()
        this_round, left = [], []
        for subject, rails, role in pending:
            partner = (
                None
                if subject in busy
                else _pick(retest, subject, rails, busy, usage, used_with.setdefault(subject, set()))
            )
            if partner is None:
                left.append((subject, rails, role))
                continue
            busy.update((subject, partner))
            usage[partner] = usage.get(partner, 0) + 1
            used_with[subject].add(partner)
            rail_names = [r for r in rails if r is not None] or None
            pair = [subject, partner] if role == "server" else [partner, subject]
            this_round.append(pair + [rail_names])
        if not this_round:
            break  # cannot progress (fewer good partners than requested): stop
        out.append(this_round)
        pending = left
    return out


def _pick(retest, subject, rails, busy, usage, used):
    ranks = retest.candidates(subject, rails)
    free = [h for h in ranks if h not in busy and h not in used]
    if not free:
        return None
    return min(free, key=lambda h: (ranks[h], usage.get(h, 0), h))


def retest_plan(results, hosts=None, partners=1, exclude=None, rails=None, groups=None, min_peer_fraction=0.9):
    """Second-pass plan: rounds of disjoint [server, client, rails] entries that measure every suspect node and both
    ends of every suspect link again, on the rail(s) it failed on only, with a partner known-good on those rails
    (from the same switch when ``groups`` know it), never the partner it failed with when another exists.

    Pass-1 results are judged as the report judges them (the peer gate applied, switch faults set aside: a host
    whose failures are above it is no subject). ``hosts`` limits who may take part; ``exclude`` bars hosts from
    being partners (counter violations, failed preflight); ``rails``: {host: [rail names or rail dicts]} (default:
    the rails its results carry); ``groups``: switches.py groups (or a (groups, source) tuple). ``rails`` of an
    entry is None where the results name no rail. [] when there is nothing to retest or no partner.
    """
    results = _check_results(results)
    partners = _check_partners(partners)
    first = _first_pass_gated(results, min_peer_fraction)
    allowed = None if hosts is None else set(_check_hosts(hosts))
    retest = _Retest(first, groups, allowed, set(exclude or ()), _host_rails(rails, first))
    return _schedule(retest, retest.requests(partners))


def retest_rounds(results, hosts=None, partners=1, exclude=None, rails=None, groups=None, min_peer_fraction=0.9):
    """retest_plan's rounds as [server, client] pairs (the filter's shape): each pair runs on its common rails."""
    plan = retest_plan(results, hosts, partners, exclude, rails, groups, min_peer_fraction)
    return [[[entry[0], entry[1]] for entry in round_pairs] for round_pairs in plan]
