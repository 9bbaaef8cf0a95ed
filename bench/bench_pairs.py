"""Pair planning: time (ms) and rounds per strategy for N = 8, 64, 512, 4096 hosts.

Run from the repo root: /work/main/.venv/bin/python bench/bench_pairs.py
Prints figures; asserts nothing about time (targets: all_pairs for 4096 hosts in < 2 s).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds  # noqa: E402

SIZES = (8, 64, 512, 4096)
REPEAT = 3  # best of 3: the machine is shared


def timed(func):
    """(best wall ms, best CPU ms, result): CPU time is the steadier figure on a shared machine."""
    best = None
    best_cpu = None
    for _unused in range(REPEAT):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = func()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        del out
        best = elapsed if best is None else min(best, elapsed)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    return best * 1000.0, best_cpu * 1000.0, func()


def main():
    print("pair planning, best of %d: wall ms, CPU ms; rounds; pairs" % REPEAT)
    print("%-12s %6s %10s %10s %7s %9s %s" % ("strategy", "N", "wall ms", "CPU ms", "rounds", "pairs", "note"))
    for n in SIZES:
        hosts = ["node%04d" % i for i in range(n)]
        leaves = dict((h, "leaf%02d" % (i // 32)) for i, h in enumerate(hosts))  # 32 hosts per leaf
        cases = [
            ("all_pairs", lambda hosts=hosts: pair_rounds(hosts, "all_pairs"), "N-1 rounds of N/2 pairs"),
            ("ring", lambda hosts=hosts: pair_rounds(hosts, "ring"), ""),
            ("random", lambda hosts=hosts: pair_rounds(hosts, "random", rounds=4, seed=1), "rounds=4"),
            ("halves", lambda hosts=hosts: pair_rounds(hosts, "halves"), ""),
            (
                "cross_group",
                lambda hosts=hosts, leaves=leaves: pair_rounds(hosts, "cross_group", groups=leaves),
                "%d leaves of <= 32" % len(set(leaves.values())) if n > 32 else "1 leaf: n/a",
            ),
        ]
        ring = pair_rounds(hosts, "ring")
        explicit = [p for r in ring for p in r]
        cases.append(
            (
                "explicit",
                lambda hosts=hosts, explicit=explicit: pair_rounds(hosts, "explicit", pairs=explicit),
                "the ring's pairs",
            )
        )
        for name, func, note in cases:
            if name == "cross_group" and n <= 32:
                print("%-12s %6d %10s %10s %7s %9s %s" % (name, n, "-", "-", "-", "-", note))
                continue
            ms, cpu, rounds = timed(func)
            pairs = sum(len(r) for r in rounds)
            print("%-12s %6d %10.2f %10.2f %7d %9d %s" % (name, n, ms, cpu, len(rounds), pairs, note))
            del rounds
        # second pass: one bad node and one bad link in an all_pairs first pass
        # (all_pairs results for 4096 hosts would be 8.4 M dicts, several GB: use 8 random rounds there)
        first = "all_pairs" if n <= 512 else "random"
        plan = pair_rounds(hosts, first, rounds=8, seed=1)
        bad_node, link = plan[0][1][0], set(plan[0][0])  # both measured in the first round
        results = [
            {"server": s, "client": c, "passed": not (bad_node in (s, c) or {s, c} == link), "pass": 1}
            for r in plan
            for s, c in r
        ]
        del plan
        ms, cpu, rounds = timed(lambda results=results, hosts=hosts: retest_rounds(results, hosts))
        print(
            "%-12s %6d %10.2f %10.2f %7d %9d %s"
            % (
                "retest",
                n,
                ms,
                cpu,
                len(rounds),
                sum(len(r) for r in rounds),
                "%d %s first-pass results, 1 bad node + 1 bad link" % (len(results), first),
            )
        )
        del results


if __name__ == "__main__":
    main()
