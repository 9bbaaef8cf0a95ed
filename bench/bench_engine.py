"""The validation engine's controller side on synthetic inputs: plan + slices + join + report.

Run from the repo root: .venv/bin/python bench/bench_engine.py [HOSTSxRAILS:strategy[:rounds] ...]
Each configuration runs in a fresh process so its peak RSS is its own. Prints figures; asserts nothing.
Targets (issue 11): 1024 hosts x 8 rails all_pairs < 10 s and < 2 GiB (not met: 4.2 M result dicts alone
take more; pass 1024x8:all_pairs to measure it), 4096 x 8 random 8 rounds < 10 s.
Side results are made up (every client measures 392 Gb/s, one link in 500 at 180 Gb/s); the planner,
the join, the gate and the report are the collection's own code.
"""

import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))

DEFAULT = (
    "64x8:all_pairs",
    "256x8:all_pairs",
    "512x8:all_pairs",
    "1024x8:random:8",
    "4096x8:random:8",
)


def one(spec):
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as report

    size, strategy, *rest = spec.split(":")
    n_hosts, n_rails = (int(x) for x in size.split("x"))
    rounds = int(rest[0]) if rest else None
    hosts = ["node%04d" % i for i in range(n_hosts)]
    rails = dict(
        (h, [{"rail": "mlx5_%d:1" % r, "device": "mlx5_%d" % r, "port": 1, "rate_gbps": 400.0} for r in range(n_rails)])
        for h in hosts
    )
    addresses = dict((h, h) for h in hosts)
    figures = {}
    t0 = time.perf_counter()
    planned = plan.plan_pass(hosts, rails, addresses, strategy=strategy, random_rounds=rounds, seed="bench")
    figures["plan_slice_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    sides = []
    for doc in planned["slices"].values():
        for side in sidefiles.slice_sides(doc):
            out = {
                "pass": 1,
                "round": side["round"],
                "role": side["role"],
                "host": side["host"],
                "peer": side["peer"],
                "rail": side["rail"],
                "failure_kind": None,
                "failure": None,
            }
            if side["role"] == "client":
                out["bw_avg_gbps"] = 180.0 if hash((side["host"], side["peer"])) % 500 == 0 else 392.0
            sides.append(out)
    figures["fake_sides_s"] = time.perf_counter() - t1
    del planned["slices"]
    t2 = time.perf_counter()
    results = join.join_pass(
        planned["pairs"], sides, rails, {"test": "write", "duration": 10, "min_link_fraction": 0.9}
    )
    figures["join_s"] = time.perf_counter() - t2
    del sides
    t3 = time.perf_counter()
    doc = report.build_report(results, expected_hosts=hosts)
    figures["report_s"] = time.perf_counter() - t3
    figures["controller_s"] = figures["plan_slice_s"] + figures["join_s"] + figures["report_s"]
    figures["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    figures.update(rounds=planned["rounds"], pairs=len(planned["pairs"]), results=len(results), verdict=doc["passed"])
    print(json.dumps(figures))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        one(sys.argv[2])
        return
    specs = sys.argv[1:] or DEFAULT
    head = "%-22s %7s %9s %10s %9s %8s %9s %10s %9s"
    print(head % ("config", "rounds", "pairs", "results", "plan+sl s", "join s", "report s", "control s", "RSS MiB"))
    for spec in specs:
        proc = subprocess.run(
            [sys.executable, __file__, "--one", spec], capture_output=True, text=True, timeout=1800, check=False
        )
        if proc.returncode != 0:
            print("%-22s failed: %s" % (spec, (proc.stderr.strip().splitlines() or ["?"])[-1]))
            continue
        f = json.loads(proc.stdout.strip().splitlines()[-1])
        figures = (f["rounds"], f["pairs"], f["results"], f["plan_slice_s"], f["join_s"], f["report_s"])
        print(
            "%-22s %7d %9d %10d %9.2f %8.2f %9.2f" % ((spec,) + figures)
            + " %10.2f %9.0f" % (f["controller_s"], f["rss_mib"])
        )
    with open("/proc/loadavg") as handle:
        load = " ".join(handle.read().split()[:3])
    print("load average: %s on %d cores" % (load, os.cpu_count()))


if __name__ == "__main__":
    main()
