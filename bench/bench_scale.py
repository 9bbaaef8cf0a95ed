"""The controller at scale, on the modules' own code path: plan + slice files (fabric_plan), the pass bundle and
sbatch call of the Slurm launcher (slurm_pass), the hosts' side files (what ibtune-schedule writes: simulated),
the join reading them (fabric_join itself, run_fabric_join: its plan file decoded too), and the report with every
file format (fabric_report's module.run).

Run from the repo root: .venv/bin/python bench/bench_scale.py [HOSTSxRAILS:strategy[:rounds] ...]
Default: 256, 1024 and 2048 hosts x 8 rails with random 8 rounds and cover_links (a synthetic rail-optimised
fabric, tests/.../validate/planes.py: one two-level plane per rail, 32 hosts a leaf, 32 spines of 64 ports,
up/down routes, built straight into the compact topology), plus 256 x 8 all_pairs.
``1024x8:all_pairs`` (4.2 M results) is the issue's largest case: pass it to measure it (minutes, GiB).
Each configuration runs in a fresh process, so its peak RSS (ru_maxrss) is its own; each phase prints the
peak reached by its end. Side results are made up (client_figures: each link its own figures, 390.5-393.5
Gb/s, one link in 500 at 180 Gb/s).
Prints figures; asserts nothing (issue 23 targets: 2048 x 8 cover_links or random < 10 s and < 1 GiB;
1024 x 8 all_pairs < 30 s and < 2 GiB; one 2048-node sbatch < 5 s).
"""

import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, ROOT)

DEFAULT = (
    "256x8:all_pairs",
    "256x8:random:8",
    "256x8:cover_links",
    "1024x8:random:8",
    "1024x8:cover_links",
    "2048x8:random:8",
    "2048x8:cover_links",
)
PHASES = ("plan", "slices", "bundle", "hosts", "join", "report")


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fleet(n_hosts, n_rails, strategy):
    """Hosts, their rails and (cover_links) the compact topology with routes."""
    hosts = ["node%04d" % i for i in range(n_hosts)]
    rails = dict(
        (h, [{"rail": "mlx5_%d:1" % r, "device": "mlx5_%d" % r, "port": 1, "rate_gbps": 400.0} for r in range(n_rails)])
        for h in hosts
    )
    if strategy != "cover_links":
        return hosts, rails, None
    from tests.unit.plugins.module_utils.validate.planes import rail_planes

    return hosts, rails, rail_planes(n_hosts, n_rails)


def simulate_hosts(planned, results_dir):
    """Each host's side file as ibtune-schedule leaves it when its schedule finished: its rounds' sides written
    whole (sidefiles.write_sides: a few table items whose rows name their rounds, what compact_side_file makes of
    the lines appended a round at a time)."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    os.makedirs(results_dir)
    for host, doc in planned["slices"].items():
        rounds = {}
        for side in sidefiles.slice_sides(doc):
            res = dict((k, side[k]) for k in ("pass", "round", "role", "host", "peer", "rail", "device", "port"))
            res.update(
                failure_kind=None, failure=None, rc=0, attempts=1, elapsed_s=10.4, test="write", kind="bandwidth"
            )
            if side["role"] == "client":
                res.update(client_figures(side["host"], side["peer"], side["rail"]), msg_size=65536)
            rounds.setdefault(side["round"], []).append(res)
        in_order = [res for r in sorted(rounds) for res in rounds[r]]
        sidefiles.write_sides(os.path.join(results_dir, host + sidefiles.SIDES_SUFFIX), in_order)


def client_figures(host, peer, rail):
    """A client side's figures as perftest prints them (two decimals), each link its own: 390.50-393.49 Gb/s on a
    400 Gb/s port, and one link in 500 at 180 (below the 360 Gb/s gate). The same for the same link in every run
    (crc32, not Python's per-process string hash)."""
    mark = zlib.crc32(("%s %s %s" % (host, peer, rail)).encode())
    average = 180.0 if mark % 500 == 0 else round(390.5 + (mark % 300) / 100.0, 2)
    return {"bw_avg_gbps": average, "bw_peak_gbps": round(average + 1.5 + (mark % 7) / 10.0, 2)}


def report_params(results_path, hosts, dest):
    return {
        "results": [],
        "results_paths": [results_path],
        "counter_violations": [],
        "saturated": [],
        "baseline_path": "",
        "update_baseline": False,
        "baseline_keep": 20,
        "regression_tolerance": 0.1,
        "min_gbps": None,
        "run_id": "bench",
        "expected_hosts": hosts,
        "host_failures": [],
        "min_hosts": 2,
        "min_peer_fraction": 0.9,
        "line_rate_gbps": None,
        "topology": None,
        "dest": dest,
        "fail_on_failure": False,
    }


def one(spec):
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import module as report_module
    from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import module as validate_module
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan, sidefiles

    size, strategy, *rest = spec.split(":")
    n_hosts, n_rails = (int(x) for x in size.split("x"))
    hosts, rails, topology = fleet(n_hosts, n_rails, strategy)
    work = tempfile.mkdtemp(prefix="ibtune-bench-scale-")
    figures = {"input_rss_mib": rss_mib()}

    def phase(name, func):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = func()
        figures[name + "_s"] = time.perf_counter() - start
        figures[name + "_cpu_s"] = time.process_time() - start_cpu
        figures[name + "_rss_mib"] = rss_mib()
        # each phase is a module in its own process on a real controller (fabric_plan, slurm_pass, fabric_join,
        # fabric_report): the next one starts without what this one let go. A full collection (outside the
        # timings) gives it back here: after the 1024 x 8 all_pairs join, 1095 MiB resident -> 248, no cyclic
        # garbage found, so it is what the collection's clean-up returns, not this phase's data
        gc.collect()
        return out

    try:
        planned = phase(
            "plan",
            lambda: plan.plan_pass(
                hosts,
                rails,
                dict((h, h) for h in hosts),
                strategy=strategy,
                random_rounds=int(rest[0]) if rest else None,
                seed="bench",
                topology=topology,
            ),
        )
        plan_file, slice_dir = phase("slices", lambda: plan.write_plan(work, planned, hosts, rails, 1))

        def bundle():
            spec_ = {
                "pass_dir": "/shared/ibtune/run/pass1",
                "nodes": hosts,
                "runner": "/usr/local/libexec/ibtune-schedule",
                "budget_s": plan.pass_budget_s(planned["rounds"], 10, 30, 20),
                "partition": "gpu",
                "exclusive": True,
            }
            argv = launcher.sbatch_argv(dict(spec_, script="/shared/ibtune/run/pass1/job.sh"))
            launcher.job_script(spec_)
            # what slurm_pass packs: the participants' slice files, straight from the plan directory
            slices = [(os.path.join(slice_dir, "%s.json" % h), "%s/%s.json" % (sidefiles.SLICES, h)) for h in hosts]
            sidefiles.pack(work, os.path.join(work, "pass.tar.gz"), [], extra=slices)
            return argv

        argv = phase("bundle", bundle)
        figures["nodelist_chars"] = len([a for a in argv if a.startswith("--nodelist=")][0])
        figures["bundle_mib"] = os.path.getsize(os.path.join(work, "pass.tar.gz")) / 2**20
        results_dir = os.path.join(work, "results")
        phase("hosts", lambda: simulate_hosts(planned, results_dir))
        figures.update(rounds=planned["rounds"], pairs=len(planned["pairs"]))
        planned = None  # on disk: the join reads the plan file, as fabric_join does

        def joined():  # fabric_join itself: decode the plan file, read the side files as it indexes them, write
            # the results as they are joined (run_fabric_join, with fabric_join's parameters)
            params = dict((key, None) for key in validate_module.JOIN_SETTINGS)
            params.update(test="write", duration=10, min_link_fraction=0.9, bidirectional=False)
            params.update(
                plan=plan_file, sides=[], sides_dir=results_dir, dest=os.path.join(work, "pass1-results.json")
            )
            result = validate_module.run_fabric_join(params)
            if result.get("failed"):
                raise RuntimeError(result["msg"])
            return result["result_count"]

        figures["results"] = phase("join", joined)
        dest = os.path.join(work, "report")
        result, _failed, _warnings = phase(
            "report", lambda: report_module.run(report_params(os.path.join(work, "pass1-results.json"), hosts, dest))
        )
        figures["files_mib"] = dict((os.path.basename(p), os.path.getsize(p) / 2**20) for p in result["files"])
        figures["passed"] = result["passed"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures["controller_s"] = sum(figures[p + "_s"] for p in PHASES if p != "hosts")
    figures["controller_cpu_s"] = sum(figures[p + "_cpu_s"] for p in PHASES if p != "hosts")
    print(json.dumps(figures))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        one(sys.argv[2])
        return
    specs = sys.argv[1:] or DEFAULT
    head = "%-19s %6s %8s %9s" + " %7s" * len(PHASES) + " %9s %9s %8s"
    print("wall seconds per phase (the machine is shared: CPU seconds are the steadier figure), peak RSS")
    print(
        head
        % (
            ("config", "rounds", "pairs", "results")
            + tuple(p + " s" for p in PHASES)
            + ("control s", "ctl CPU s", "peak MiB")
        )
    )
    files = []
    for spec in specs:
        proc = subprocess.run(
            [sys.executable, __file__, "--one", spec], capture_output=True, text=True, timeout=3600, check=False
        )
        if proc.returncode != 0:
            print("%-19s failed: %s" % (spec, (proc.stderr.strip().splitlines() or ["?"])[-1]))
            continue
        f = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            ("%-19s %6d %8d %9d" % (spec, f["rounds"], f["pairs"], f["results"]))
            + "".join(" %7.2f" % f[p + "_s"] for p in PHASES)
            + " %9.2f %9.2f %8.0f" % (f["controller_s"], f["controller_cpu_s"], f["report_rss_mib"])
        )
        files.append((spec, f))
    print("\npeak RSS (MiB) at the end of each phase, and what the pass writes")
    for spec, f in files:
        print(
            "%-19s input %5.0f, " % (spec, f["input_rss_mib"])
            + ", ".join("%s %5.0f" % (p, f[p + "_rss_mib"]) for p in PHASES)
        )
        print("%-19s CPU s: " % "" + ", ".join("%s %.2f" % (p, f[p + "_cpu_s"]) for p in PHASES))
        print(
            "%-19s bundle %.2f MiB, --nodelist %d chars; " % ("", f["bundle_mib"], f["nodelist_chars"])
            + ", ".join("%s %.1f MiB" % kv for kv in sorted(f["files_mib"].items()))
        )
    with open("/proc/loadavg") as handle:
        load = " ".join(handle.read().split()[:3])
    print("load average: %s on %d cores" % (load, os.cpu_count()))


if __name__ == "__main__":
    main()
