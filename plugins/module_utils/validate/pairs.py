# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair planning for fabric validation: rounds of disjoint [server, client] pairs.

Pure functions; the filters ``pair_rounds`` and ``retest_rounds`` wrap them. A round is a list of
pairs in which no host appears twice, so every pair of a round can run at the same time.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import hashlib
import random

# The first-pass localization rule is the report's (one rule for who is suspect and who is known-good).
# first_pass_suspects is part of this module's API (the tests and callers import it from here).
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.localize import (  # noqa: F401 pylint: disable=unused-import
    first_pass,
    first_pass_suspects,
    implicates_link,
)

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
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(m):
            base = r + m
            up = triple[base + 1 : base + half]
            down = triple[base - half + 1 : base][::-1]
            pairs = [[a, b] for a, b in zip(up, down)]
            if fixed is not None:
                pairs.append([fixed, ring[r]] if r % 2 else [ring[r], fixed])
            append(pairs)
    finally:
        if was_enabled:
            gc.enable()
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


def _random(hosts, rounds, seed):
    if rounds is None:
        rounds = 1
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        try:
            rounds = int(rounds)
        except (TypeError, ValueError):
            raise ValueError("rounds must be a whole number >= 1 for strategy random, got %r" % (rounds,))
    if rounds < 1:
        raise ValueError("rounds must be >= 1 for strategy random, got %d" % rounds)
    if seed is not None and not isinstance(seed, (int, float, str)):
        raise ValueError("seed must be a number or a string, got %r" % (seed,))
    rng = random.Random(_default_seed(hosts) if seed is None else seed)
    order = list(hosts)
    n = len(order)
    used = set()
    out = []
    for _round in range(rounds):
        best = None
        best_repeats = None
        # a few reshuffles to avoid repeating a pair already measured (cheap; rare for large N)
        for _attempt in range(8):
            rng.shuffle(order)
            pairs = [[order[i], order[i + 1]] for i in range(0, n - 1, 2)]
            repeats = sum(1 for a, b in pairs if (a, b) in used or (b, a) in used)
            if best is None or repeats < best_repeats:
                best, best_repeats = pairs, repeats
            if repeats == 0:
                break
        for a, b in best:
            used.add((a, b))
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


def _cross_group(hosts, groups):
    if not isinstance(groups, dict):
        raise ValueError(
            "strategy cross_group needs groups, a dict of host -> group (e.g. leaf switch), got %r" % (groups,)
        )
    members = {}
    order = []
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
    # Round-robin tournament of the groups: each group-round pairs groups disjointly, every
    # pair of groups meets exactly once; inside a meeting the smaller group's members are
    # matched one-to-one into the larger group, the offset rotating so idle members vary.
    # With unequal groups one sub-round per len(small) members of the larger group, so every
    # member of the larger group meets someone (no host is left untested silently).
    group_rounds = _all_pairs(order)
    out = []
    for index, grounds in enumerate(group_rounds):
        subrounds = []
        for ga, gb in grounds:
            a, b = members[ga], members[gb]
            swap = len(a) > len(b)
            small, large = (b, a) if swap else (a, b)
            needed = -(-len(large) // len(small))
            for sub in range(needed):
                if len(subrounds) <= sub:
                    subrounds.append([])
                offset = (index * len(small) + sub * len(small)) % len(large)
                for i, host in enumerate(small):
                    other = large[(i + offset) % len(large)]
                    # alternate who serves so both sides act as server and client
                    pair = [host, other] if (i + index + sub) % 2 == 0 else [other, host]
                    subrounds[sub].append(pair)
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


def retest_rounds(results, hosts=None, partners=1, exclude=None):
    """Second-pass plan: pair every suspect node and both ends of every suspect link with
    known-good partners (nodes all of whose first-pass pairs passed, pairs with a suspect node
    aside), in disjoint rounds.

    ``hosts`` limits who can take part (e.g. the hosts still reachable); None means every host
    seen in the results. ``partners`` is how many different known-good partners each subject
    gets; ``exclude`` lists hosts that must not serve as known-good partners (counter violations,
    failed preflight). Each subject first plays the role (server or client) it failed in most. Returns []
    when there is nothing to retest or no known-good partner exists.
    """
    if results is None:
        results = []
    if isinstance(results, (str, bytes, dict)):
        raise ValueError("results must be a list of pair result dicts, got %s" % type(results).__name__)
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise ValueError("results[%d] must be a dict with server, client and passed, got %r" % (index, item))
    try:
        partners = int(partners)
    except (TypeError, ValueError):
        raise ValueError("partners must be a whole number >= 1, got %r" % (partners,))
    if partners < 1:
        raise ValueError("partners must be >= 1, got %d" % partners)
    # failures that say nothing about the link (a missing rail, an invalid figure) retest nothing
    results = [r for r in results if r.get("passed") or implicates_link(dict(r, passed=False))]
    suspect_nodes, links, known_good, failed, roles = first_pass(results)
    allowed = None if hosts is None else set(_check_hosts(hosts))
    subjects = []
    for host in suspect_nodes + [h for link in links for h in link]:
        if host not in subjects and (allowed is None or host in allowed):
            subjects.append(host)
    # a host whose error counters rose, or that failed preflight, is no known-good partner
    barred = set(exclude or ())
    good = [h for h in known_good if (allowed is None or h in allowed) and h not in barred]
    if not subjects or not good:
        return []

    # requests: (subject, role, partners to avoid); the fresh partner should not be one the
    # subject already failed with (it is not known-good anyway) nor one already used in the retest.
    usage = dict((h, 0) for h in good)
    used_with = dict((s, set()) for s in subjects)
    pending = []
    for subject in subjects:
        counts = roles.get(subject, {"server": 0, "client": 0})
        first = "server" if counts["server"] >= counts["client"] else "client"
        second = "client" if first == "server" else "server"
        for i in range(min(partners, len(good))):
            pending.append((subject, first if i % 2 == 0 else second))
    out = []
    while pending:
        busy = set()
        this_round = []
        left = []
        candidates = sorted(good, key=lambda h: (usage[h], h))
        for subject, role in pending:
            if subject in busy:
                left.append((subject, role))
                continue
            # prefer a partner the subject has not failed with (fresh evidence: if the first-pass
            # naming was wrong, that partner may be the culprit); else any known-good one
            partner = None
            fallback = None
            for cand in candidates:
                if cand in busy or cand in used_with[subject]:
                    continue
                if cand not in failed.get(subject, ()):
                    partner = cand
                    break
                if fallback is None:
                    fallback = cand
            if partner is None:
                partner = fallback
            if partner is None:
                left.append((subject, role))
                continue
            busy.add(subject)
            busy.add(partner)
            usage[partner] += 1
            used_with[subject].add(partner)
            this_round.append([subject, partner] if role == "server" else [partner, subject])
        if not this_round:
            break  # cannot progress (fewer good partners than requested): stop
        out.append(this_round)
        pending = left
    return out
