"""Topology: parse the 582-HCA NDR ibnetdiscover dump, map 512 hosts x 8 rails to leaf ports, and plan
cover_links rounds on that fabric's real routes (OpenSM LFTs captured from the simulated subnet).

Run from the repo root: .venv/bin/python bench/bench_topology.py
Prints figures; asserts nothing about time. Targets (issue 12): parse < 1 s; map 512 x 8 < 1 s;
cover_links: every ISL covered in each direction in <= 8 rounds (all_pairs: N-1), planned in < 10 s.
"""

import gzip
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import fabric_view, run_checks  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.checks import check_rail_alignment  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover, parse_lfts  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import map_rails  # noqa: E402

CORPUS = os.environ.get("IBTUNE_CORPUS") or os.path.join(ROOT, "..", "shared", "corpus")
NDR = os.path.join(
    CORPUS, "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"
)
FIX = os.path.join(ROOT, "tests", "fixtures", "topology")
REPEAT = 3  # best of 3: the machine is shared


def timed(func, repeat=REPEAT):
    best = best_cpu = None
    out = None
    for _unused in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = func()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        best = elapsed if best is None else min(best, elapsed)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    return best * 1000.0, best_cpu * 1000.0, out


def _leaf_guid(r, g):
    return 0x10000 + r * 256 + g


def _spine_guid(s):
    return 0x20000 + s


def _ca_guid(h, r):
    return 0x1000000 + h * 16 + r


def _rail_leaf(n, r, g, hosts, rails, per_leaf, spines):
    lines = [
        'Switch\t64 "S-%016x"\t\t# "MF0;leaf-r%d-%02d:MQM9700/U1" enhanced port 0 lid %d lmc 0'
        % (_leaf_guid(r, g), r, g, n + 1)
    ]
    for p in range(per_leaf):
        h = g * per_leaf + p
        if h < hosts:
            c = _ca_guid(h, r)
            lines.append(
                '[%d]\t"H-%016x"[1](%x)\t\t# "node%04d mlx5_%d" lid %d 4xNDR'
                % (p + 1, c, c, h, r, 5000 + h * rails + r)
            )
    lines += [
        '[%d]\t"S-%016x"[%d]\t\t# "MF0;spine-%02d:MQM9700/U1" lid %d 4xNDR'
        % (33 + s, _spine_guid(s), n + 1, s, 3000 + s)
        for s in range(spines)
    ]
    return lines + [""]


def _rail_spine(s, all_leaves):
    lines = [
        'Switch\t%d "S-%016x"\t\t# "MF0;spine-%02d:MQM9700/U1" enhanced port 0 lid %d lmc 0'
        % (len(all_leaves), _spine_guid(s), s, 3000 + s)
    ]
    lines += [
        '[%d]\t"S-%016x"[%d]\t\t# "MF0;leaf-r%d-%02d:MQM9700/U1" lid %d 4xNDR'
        % (n + 1, _leaf_guid(r, g), 33 + s, r, g, n + 1)
        for n, (r, g) in enumerate(all_leaves)
    ]
    return lines + [""]


def _rail_ca(h, r, rails, per_leaf):
    c, g = _ca_guid(h, r), h // per_leaf
    return [
        'Ca\t1 "H-%016x"\t\t# "node%04d mlx5_%d"' % (c, h, r),
        '[1](%x)\t"S-%016x"[%d]\t\t# lid %d lmc 0 "MF0;leaf-r%d-%02d:MQM9700/U1" lid 1 4xNDR'
        % (c, _leaf_guid(r, g), h % per_leaf + 1, 5000 + h * rails + r, r, g),
        "",
    ]


def rail_fabric(hosts, rails, per_leaf=32, spines=16):
    """ibnetdiscover text of a rail-optimised two-level fabric: rail r of host h on leaf (r, h // per_leaf)."""
    leaves_per_rail = (hosts + per_leaf - 1) // per_leaf
    all_leaves = [(r, g) for r in range(rails) for g in range(leaves_per_rail)]
    lines = []
    for n, (r, g) in enumerate(all_leaves):
        lines += _rail_leaf(n, r, g, hosts, rails, per_leaf, spines)
    for s in range(spines):
        lines += _rail_spine(s, all_leaves)
    for h in range(hosts):
        for r in range(rails):
            lines += _rail_ca(h, r, rails, per_leaf)
    inventory = dict(
        ("node%04d" % h, dict(("mlx5_%d" % r, "%016x" % _ca_guid(h, r)) for r in range(rails))) for h in range(hosts)
    )
    return "\n".join(lines) + "\n", inventory


def main():
    with open(NDR) as handle:
        text = handle.read()
    wall, cpu, topo = timed(lambda: parse_ibnetdiscover(text))
    print(
        "parse ibnetdiscover, 582-HCA NDR dump (%d lines): %.0f ms wall, %.0f ms CPU (target < 1000 ms); "
        "%d switches, %d CAs, %d links, %d leaves, %d spines"
        % (
            text.count("\n"),
            wall,
            cpu,
            len(topo["switches"]),
            len(topo["cas"]),
            len(topo["links"]),
            len(topo["tiers"]["leaf"]),
            len(topo["tiers"]["spine"]),
        )
    )
    wall, cpu, found = timed(lambda: run_checks(topo))
    print("fabric checks on it: %.0f ms wall, %.0f ms CPU; %d findings" % (wall, cpu, len(found)))
    wall, cpu, view = timed(lambda: fabric_view(topo))
    print(
        "oversubscription per switch, rail group and tier, and the dragonfly test, on it: %.0f ms wall, %.0f ms CPU; %s"
        % (wall, cpu, view["oversubscription"]["text"])
    )

    big, inventory = rail_fabric(512, 8)
    wall, cpu, btopo = timed(lambda: parse_ibnetdiscover(big))
    print(
        "parse a 512-host x 8-rail fabric (%d CAs, %d switches): %.0f ms wall, %.0f ms CPU"
        % (len(btopo["cas"]), len(btopo["switches"]), wall, cpu)
    )
    index = Index(btopo)
    wall, cpu, mapped = timed(lambda: map_rails(btopo, inventory, index))
    rails = sum(len(v) for v in mapped["rails"].values())
    print(
        "map 512 hosts x 8 rails to leaf ports: %.0f ms wall, %.0f ms CPU (target < 1000 ms); %d rails, %d missing"
        % (wall, cpu, rails, len(mapped["missing"]))
    )
    wall, cpu, aligned = timed(lambda: check_rail_alignment(btopo, mapped, index=index))
    print("rail alignment on it: %.0f ms wall, %.0f ms CPU; %d findings" % (wall, cpu, len(aligned)))
    wall, cpu, bview = timed(lambda: fabric_view(btopo, mapped, index=index))
    print(
        "oversubscription, rail groups and tiers on it: %.0f ms wall, %.0f ms CPU; %s; %d rail groups"
        % (wall, cpu, bview["oversubscription"]["text"], len(bview["oversubscription"]["rail_groups"]))
    )

    with open(os.path.join(FIX, "ndr582-sim.ibnetdiscover")) as handle:
        sim = parse_ibnetdiscover(handle.read())
    with gzip.open(os.path.join(FIX, "ndr582-sim.dump_lfts.gz"), "rt") as handle:
        lfts = parse_lfts(handle.read())
    wall, cpu, plan = timed(lambda: R.plan_cover(None, lfts, sim, max_rounds=8), repeat=1)
    endpoints = len(plan["endpoints"])
    print(
        "cover_links on the 582-HCA fabric's OpenSM routes (%d endpoints, %d directed ISLs): planned in %.1f s wall, "
        "%.1f s CPU (target < 10 s)" % (endpoints, plan["total"], wall / 1000.0, cpu / 1000.0)
    )
    print(
        "  rounds: %d (target <= 8; all_pairs: %d); covered %d of %d directed ISLs (%d coverable); uncovered: %d"
        % (
            len(plan["rounds"]),
            endpoints - 1,
            plan["covered"],
            plan["total"],
            plan["coverable"],
            len(plan["uncovered"]),
        )
    )
    total = 0
    for n, (pairs, gain) in enumerate(zip(plan["rounds"], plan["per_round"]), 1):
        total += gain
        print(
            "  round %d: %3d pairs, +%3d ISL directions (%4d/%d), e.g. %s"
            % (n, len(pairs), gain, total, plan["total"], "; ".join("%s <- %s" % tuple(p) for p in pairs[:2]))
        )
    load_first = fabric_view(sim)["oversubscription"]["load_first"]
    wall, cpu, first = timed(lambda: R.plan_cover(None, lfts, sim, max_rounds=8, load_first=load_first), repeat=1)
    print(
        "cover_links loading the uplinks of the leaves above 1:1 first (%d ports, %d directions): %.1f s wall, "
        "%.1f s CPU; their directions per round %s; all ISLs covered in %d rounds"
        % (
            len(load_first),
            first["load_first"]["directions"],
            wall / 1000.0,
            cpu / 1000.0,
            first["load_first"]["per_round"],
            len(first["rounds"]),
        )
    )


if __name__ == "__main__":
    main()
