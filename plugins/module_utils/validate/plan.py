# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan a validation pass once, on the controller, and slice it per host (pure).

A pass is a list of rounds of disjoint [server, client] host pairs (pairs.py). Each pair runs on
every rail both hosts have, matched by rail NAME (preflight.py), never by list position. A rail
that most hosts have (or the inventory expects) and a host lacks is a named failure of that host,
not a silent skip; a host that no pair of the plan tests is named too.

Every (round, rail) gets its own TCP port, so a late client can only ever reach the server of its
own round and rail: ``base + (round_index % window) * rails + rail_index``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import pairs as _pairs
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as _routes
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import cover as _cover
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as _vt
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles as _sidefiles
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.preflight import natural_key

MAX_TCP_PORT = 65535
# cover_links scores every host pair up to this many routes (hosts^2 x rails: 256 hosts x 8 rails), and plans
# from the routes above it (bench/bench_scale.py: 2048 x 8 in seconds instead of minutes and GiB)
EXHAUSTIVE_COVER_ROUTES = 600000
# perftest processes on ports [base, base + OWN_PORT_SPAN) are this validation's (the leftover check); a pass
# uses rounds x rails ports from base (tcp_port_for), so the window holds e.g. 512 rounds of 8 rails
OWN_PORT_SPAN = 4096


def rail_order(rails):
    """Every rail name seen on any host, naturally sorted (mlx5_2 before mlx5_10)."""
    names = set()
    for host_rails in rails.values():
        for rail in host_rails:
            names.add(rail["rail"])
    return sorted(names, key=natural_key)


def expected_rails(rails, expect_names=None):
    """Rail names every host should have: the inventory's list, else those on a strict majority."""
    if expect_names:
        return sorted(set(expect_names), key=natural_key)
    counts = {}
    for host_rails in rails.values():
        for name in set(r["rail"] for r in host_rails):
            counts[name] = counts.get(name, 0) + 1
    hosts = len(rails)
    return sorted((n for n, c in counts.items() if c * 2 > hosts), key=natural_key)


def missing_rails(rails, expect_names=None):
    """[{host, failure_kind: missing_rail, reason}] for every expected rail a host lacks."""
    expected = expected_rails(rails, expect_names)
    counts = {}
    for host_rails in rails.values():
        for name in set(r["rail"] for r in host_rails):
            counts[name] = counts.get(name, 0) + 1
    out = []
    for host in sorted(rails, key=natural_key):
        have = set(r["rail"] for r in rails[host])
        lacking = [n for n in expected if n not in have]
        if lacking:
            out.append(
                {
                    "host": host,
                    "failure_kind": "missing_rail",
                    "reason": (
                        "rail%s %s not ACTIVE on this host (%s): it was not tested; "
                        "check its cable, port and the subnet manager"
                    )
                    % (
                        "s" if len(lacking) > 1 else "",
                        ", ".join(lacking),
                        "; ".join("%d of %d hosts have %s" % (counts.get(n, 0), len(rails), n) for n in lacking),
                    ),
                }
            )
    return out


def tcp_port_for(base, round_index, rail_index, n_rails):
    """The TCP port of (round, rail): unique within a window of rounds that fits below 65536."""
    n_rails = max(1, n_rails)
    window = max(1, (MAX_TCP_PORT - int(base) + 1) // n_rails)
    return int(base) + (round_index % window) * n_rails + rail_index


def check_base_port(base, n_rails):
    if not 1024 <= int(base) <= MAX_TCP_PORT - max(1, n_rails) + 1:
        raise ValueError(
            "fabric_validate_base_tcp_port=%s leaves no room for %d rail(s): use 1024..%d"
            % (base, n_rails, MAX_TCP_PORT - max(1, n_rails) + 1)
        )


def plan_rounds(hosts, strategy, rounds=None, seed=None, groups=None, pairs=None):
    """The strategy's rounds (pairs.pair_rounds)."""
    return _pairs.pair_rounds(hosts, strategy=strategy, rounds=rounds, seed=seed, groups=groups, pairs=pairs)


def cover_links_plan(hosts, rails, topology, max_rounds=8):
    """cover_links rounds for ``hosts`` from the fabric_validate topology (validate_topology.compact()):
    host pairs whose rails (rail r meets rail r) make every directed ISL carry traffic (routes.plan_cover
    scoring every host pair, or cover.plan_cover from the routes on large fabrics), then every host no such
    pair tests is paired into a round where it is free, so a pass still tests every host's own cables.
    Returns (rounds, {uncovered_isls, isls, covered_isls, coverable_isls} and, when the topology names
    switches above their design ratio (its ``load_first`` uplinks), load_first: {directions, per_round}: their
    cables are covered before any other ISL).
    """
    if not topology:
        raise ValueError(
            "strategy cover_links needs the fabric's routes: set fabric_validate_topology=true "
            "(fabric_plan option topology) or choose another strategy"
        )
    compact = topology if topology.get("version") == _vt.VERSION else _vt.compact(topology)
    eps = _vt.rail_endpoints(hosts, rails, compact.get("hosts") or {})
    load_first = _vt.load_first(topology)
    if len(eps) ** 2 * max([len(r) for r in eps.values()] or [1]) <= EXHAUSTIVE_COVER_ROUTES:
        # few enough to score every host pair (routes.plan_cover: the rounds the verdict's cable naming was
        # tuned on); above, planned from the routes (cover.plan_cover: the same ISLs reachable, other rounds)
        topo, lfts, _hosts = _vt.expand(compact)
        cover = _routes.plan_cover(eps, lfts, topo, max_rounds=max_rounds, load_first=load_first)
    else:
        cover = _cover.plan_cover(eps, compact, max_rounds=max_rounds, load_first=load_first)
    rounds = fill_untested(hosts, cover["rounds"])
    coverage = {
        "uncovered_isls": cover["uncovered"],
        "isls": cover["total"],
        "covered_isls": cover["covered"],
        "coverable_isls": cover["coverable"],
    }
    if cover["load_first"]["directions"]:
        coverage["load_first"] = cover["load_first"]
    return rounds, coverage


def fill_untested(hosts, rounds):
    """``rounds`` plus pairs for every host of ``hosts`` they leave out: each put in the first round where
    it is free, with another left-out host or else any free host (a round is added when none has room)."""
    out = [[list(pair) for pair in round_pairs] for round_pairs in rounds if round_pairs]
    tested = set(h for round_pairs in out for pair in round_pairs for h in pair)
    todo = [h for h in hosts if h not in tested]
    if len(hosts) < 2:
        return out
    index = 0
    while todo:
        if index == len(out):
            out.append([])
        busy = set(h for pair in out[index] for h in pair)
        free_todo = [h for h in todo if h not in busy]
        free_other = [h for h in hosts if h not in busy and h not in todo]
        while free_todo and (len(free_todo) > 1 or free_other):
            server = free_todo.pop(0)
            client = free_todo.pop(0) if free_todo else free_other.pop(0)
            out[index].append([server, client])
            todo = [h for h in todo if h not in (server, client)]
        index += 1
    return out


def untested_hosts(hosts, pairs_list):
    """Hosts of ``hosts`` that appear in no planned pair."""
    seen = set()
    for pair in pairs_list:
        seen.add(pair["server"])
        seen.add(pair["client"])
    return [h for h in hosts if h not in seen]


def slice_pass(rounds, rails, addresses, pass_no=1, base_tcp_port=18515, gid_index=None):
    """Slice a pass into each host's sides, and list the pairs the join will expect.

    ``rounds``: [[[server, client], ...], ...] (an entry may be [server, client, [rail names]]: only those);
    ``rails``: {host: [rail dicts]} (preflight.host_rails);
    ``addresses``: {host: address clients use to reach its server}; ``gid_index``: None, "auto"
    (each rail's RoCE v2 IPv4 GID from ib_facts) or a number for every rail.

    Returns {slices: {host: slice (sidefiles.compact_slice: one entry per round and pair; sidefiles.slice_sides
    makes the sides)}, pairs: [{pass, round, server, client, rails: [name]}], rail_order: [name],
    no_common_rail: [{server, client, round}]}.
    """
    order = rail_order(rails)
    check_base_port(base_tcp_port, len(order))
    index_of = dict((name, i) for i, name in enumerate(order))
    by_name = dict((host, dict((r["rail"], r) for r in host_rails)) for host, host_rails in rails.items())
    own = dict((host, [name for name in order if name in by_name[host]]) for host in rails)
    entries = dict((host, []) for host in rails)
    planned = []
    lonely = []
    shared_rails = _SharedRails(order, by_name, own)
    for round_index, round_pairs in enumerate(rounds):
        round_no = round_index + 1
        first_port = tcp_port_for(base_tcp_port, round_index, 0, len(order))
        for entry in round_pairs:
            server, client = entry[0], entry[1]
            # a retest entry [server, client, rails] runs on those rails only (the ones the subject failed on)
            only = entry[2] if len(entry) > 2 and entry[2] else None
            common, sown, cown = shared_rails.common(server, client, only)
            if not common:
                lonely.append({"server": server, "client": client, "round": round_no})
                continue
            planned.append(
                {"pass": pass_no, "round": round_no, "server": server, "client": client, "rails": list(common)}
            )
            entries[server].append([round_no, "server", client, None, first_port, None if sown else list(common)])
            entries[client].append(
                [round_no, "client", server, addresses[server], first_port, None if cown else list(common)]
            )
    slices = dict(
        (
            host,
            _sidefiles.compact_slice(
                pass_no, host, _slice_rails(by_name[host], own[host], gid_index), own[host], index_of, entries[host]
            ),
        )
        for host in rails
    )
    return {"slices": slices, "pairs": planned, "rail_order": order, "no_common_rail": lonely}


class _SharedRails:
    """The rails two hosts have in common, worked out once per pair of rail sets (all_pairs at 1024 hosts plans
    523,776 pairs over one or a few)."""

    def __init__(self, order, by_name, own):
        self.order, self.by_name, self.own = order, by_name, own
        numbers = {}  # each distinct set of rails as a number: a key of two numbers hashes fast
        self.sets = dict((host, numbers.setdefault(tuple(names), len(numbers))) for host, names in own.items())
        self.held = {}

    def common(self, server, client, only):
        """(the rails of ``order`` both hold, among ``only`` when given; whether they are all the server's, whether
        all the client's)."""
        key = (self.sets.get(server, -1), self.sets.get(client, -1)) if only is None else None
        got = self.held.get(key)
        if got is None:
            srails, crails = self.by_name.get(server, {}), self.by_name.get(client, {})
            common = [n for n in self.order if n in srails and n in crails and (only is None or n in only)]
            got = (common, common == self.own.get(server), common == self.own.get(client))
            if key is not None and -1 not in key:
                self.held[key] = got
        return got


def _slice_rails(mine, names, gid_index):
    """{rail: {device, port[, gid_index]}} of a host's rails ``names`` for its slice."""
    out = {}
    for name in names:
        rail = {"device": mine[name]["device"], "port": mine[name]["port"]}
        gid = mine[name].get("gid_index") if gid_index == "auto" else gid_index
        if gid is not None:
            rail["gid_index"] = int(gid)
        out[name] = rail
    return out


def plan_pass(
    hosts,
    rails,
    addresses,
    strategy="all_pairs",
    pass_no=1,
    base_tcp_port=18515,
    rounds=None,
    random_rounds=None,
    seed=None,
    groups=None,
    pairs=None,
    expect_rails=None,
    gid_index=None,
    topology=None,
):
    """Plan one pass for ``hosts`` (the hosts that passed preflight, in inventory order).

    ``rounds`` (a precomputed plan, e.g. the second pass) wins over ``strategy``. Returns
    slice_pass()'s dict plus ``rounds`` (count), ``host_failures`` (missing rails, hosts the plan
    leaves untested) and ``untested``.
    """
    hosts = list(hosts)
    rails = dict((h, rails.get(h) or []) for h in hosts)
    missing = missing_rails(rails, expect_rails) if pass_no == 1 else []
    coverage = None
    if rounds is None:
        grp = None
        if groups is not None:
            grp = dict((h, groups[h]) for h in hosts if h in groups)
            lacking = [h for h in hosts if h not in grp]
            if lacking:
                raise ValueError(
                    "fabric_validate_group_var is unset for %s: give every host its group (e.g. its leaf switch)"
                    % ", ".join(lacking)
                )
        if strategy == "cover_links":
            rounds, coverage = cover_links_plan(hosts, rails, topology)
        else:
            rounds = plan_rounds(hosts, strategy, rounds=random_rounds, seed=seed, groups=grp, pairs=pairs)
    sliced = slice_pass(rounds, rails, addresses, pass_no=pass_no, base_tcp_port=base_tcp_port, gid_index=gid_index)
    failures = list(missing)
    untested = []
    if pass_no == 1:
        untested = untested_hosts(hosts, sliced["pairs"]) if len(hosts) > 1 else list(hosts)
        for host in untested:
            reason = "the %s plan paired it with no host sharing a rail" % strategy
            if len(hosts) < 2:
                reason = "it is the only host left to validate: a pair needs two"
            elif not rails[host]:
                reason = "it has no ACTIVE rail to test"
            failures.append({"host": host, "failure_kind": "unpaired", "reason": "not tested: %s" % reason})
    sliced.update(rounds=len(rounds), host_failures=failures, untested=untested, strategy=strategy)
    if coverage is not None:
        sliced["coverage"] = coverage
    return sliced


def pass_budget_s(n_rounds, run_s, connect_timeout, slack):
    """Upper bound of a pass on one host: every round may take connect window + test + slack."""
    return int(n_rounds * (float(connect_timeout) + float(run_s) + float(slack)) + 60)


def estimate_s(n_rounds, run_s, overhead_s=1.0):
    """What a healthy pass should take: rounds x (test + a little setup)."""
    return n_rounds * (float(run_s) + overhead_s)


def own_ports(base_tcp_port):
    """The TCP ports this validation's perftest processes may listen on (the leftover check's window)."""
    base = int(base_tcp_port)
    return range(base, min(base + OWN_PORT_SPAN, MAX_TCP_PORT + 1))


def eta_sentence(n_rounds, run_s):
    """How long a pass should take, for the play's output: rounds x test time, every rail in parallel."""
    return "about %.1f min (%d x %s s tests, every rail in parallel)" % (
        estimate_s(n_rounds, run_s) / 60.0,
        n_rounds,
        _plain(run_s),
    )


def _plain(number):
    """10.0 -> "10", 2.5 -> "2.5" (as the role's variables were written)."""
    number = float(number)
    return "%d" % number if number == int(number) else "%s" % number


def write_json(path, data):
    """Write a plan file (compact JSON) atomically: a reader never sees half a plan."""
    return files.write_json(path, data, sort_keys=True, separators=(",", ":"))


def write_plan(dest, plan, hosts, rails, pass_no):
    """pass<N>.json (pairs and rails, for the join) and pass<N>/<host>.json (each host's slice).

    Every host of ``hosts`` gets a slice file, empty when the plan gives it no side, so a host's
    task can always read its own file.
    """
    import os

    slice_dir = os.path.join(dest, "pass%d" % pass_no)
    for host in hosts:
        write_json(os.path.join(slice_dir, "%s.json" % host), plan["slices"].get(host, []))
    doc = {
        "pass": pass_no,
        "strategy": plan.get("strategy"),
        "rounds": plan["rounds"],
        "rail_order": plan["rail_order"],
        "pairs": plan["pairs"],
        "rails": dict((h, rails.get(h) or []) for h in hosts),
        "host_failures": plan["host_failures"],
    }
    if plan.get("coverage") is not None:
        # what cover_links claims, next to what the switches counted afterwards (report.json isl_traffic)
        doc["uncovered_isls"] = plan["coverage"]["uncovered_isls"]
        doc["isl_coverage"] = dict((k, plan["coverage"][k]) for k in ("isls", "coverable_isls", "covered_isls"))
        if plan["coverage"].get("load_first"):
            doc["isl_coverage"]["load_first"] = plan["coverage"]["load_first"]
    path = os.path.join(dest, "pass%d.json" % pass_no)
    write_json(path, doc)
    return path, slice_dir
