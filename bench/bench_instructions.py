"""The controller's CPU work as instructions executed (valgrind's cachegrind, no cache simulation): plan + slice
files, the join and the report of one all_pairs pass (bench_scale.py's phases, on the modules' own code path).

This 2-core machine's speed moves by a third from one run to the next (the same code measured 17.6, 23.0 and
22.0 CPU s for the 1024 x 8 join in three runs), far more than most changes to the join or the report make. The
count of instructions holds still (runs of the same code agree within 0.3%), so a change is read from one run on
each side of it: run this bench in both checkouts and compare the figures. It counts work, not time: a change that
trades instructions for memory traffic (more objects, larger tables) shows as cheaper here and may not be; confirm
such a change with bench_scale.py's CPU seconds, alternated.

Run from the repo root: .venv/bin/python bench/bench_instructions.py [HOSTS]   (default 256 hosts x 8 rails:
262 K results, under a minute on this machine; 1024 hosts, about a quarter of an hour). Each phase runs in a fresh
process; the figure is its instructions less those of a process that only imports the modules and builds the
fleet. Prints figures; asserts nothing. Needs valgrind (Debian's package; scripts/bootstrap.sh installs it).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PHASES = ("plan", "join", "report")  # plan: plan_pass and write_plan (fabric_plan's slice files)
RAILS = 8


def _fleet(n_hosts):
    import bench_scale

    return bench_scale.fleet(n_hosts, RAILS, "all_pairs")


def _plan(hosts, rails, topology):
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    return plan.plan_pass(
        hosts, rails, dict((h, h) for h in hosts), strategy="all_pairs", random_rounds=None, seed="bench",
        topology=topology,
    )  # fmt: skip


def child(work, phase, n_hosts):
    """One phase in this process (run under cachegrind by main); ``none`` only imports and builds the fleet."""
    import bench_scale

    from ansible_collections.ibtune.fabric.plugins.module_utils.report import module as report_module
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import module as validate_module
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    hosts, rails, topology = _fleet(n_hosts)
    if phase == "plan":
        plan.write_plan(tempfile.mkdtemp(dir=work), _plan(hosts, rails, topology), hosts, rails, 1)
    elif phase == "join":  # fabric_join itself, as bench_scale.py runs it
        with open(os.path.join(work, "paths.json")) as handle:
            paths = json.load(handle)
        params = dict((key, None) for key in validate_module.JOIN_SETTINGS)
        params.update(test="write", duration=10, min_link_fraction=0.9, bidirectional=False)
        params.update(plan=paths["plan"], sides=[], sides_dir=paths["results"], dest=paths["joined"])
        result = validate_module.run_fabric_join(params)
        if result.get("failed"):
            raise RuntimeError(result["msg"])
    elif phase == "report":
        with open(os.path.join(work, "paths.json")) as handle:
            paths = json.load(handle)
        report_module.run(bench_scale.report_params(paths["joined"], hosts, os.path.join(work, "report")))
    elif phase != "none":
        raise ValueError("unknown phase %r" % phase)


def instructions(work, phase, n_hosts):
    """Instructions executed by a fresh process running ``phase`` (cachegrind's summary)."""
    out = os.path.join(work, "cachegrind.%s" % phase)
    argv = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=%s" % out,
        sys.executable, os.path.abspath(__file__), "--child", work, phase, str(n_hosts),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONHASHSEED="0")  # the same dict and set layouts in every run
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (phase, (proc.stderr.strip().splitlines() or ["?"])[-1]))
    with open(out) as handle:
        for line in handle:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("%s: no summary line in %s" % (phase, out))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    if shutil.which("valgrind") is None:
        print("bench_instructions.py: valgrind is not installed (apt-get install valgrind; scripts/bootstrap.sh does)")
        return
    import bench_scale

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    n_hosts = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    work = tempfile.mkdtemp(prefix="ibtune-bench-instructions-")
    try:
        hosts, rails, topology = _fleet(n_hosts)
        planned = _plan(hosts, rails, topology)
        plan_file, _slices = plan.write_plan(work, planned, hosts, rails, 1)
        results = os.path.join(work, "results")
        bench_scale.simulate_hosts(planned, results)
        paths = {"plan": plan_file, "results": results, "joined": os.path.join(work, "pass1-results.json")}
        with open(os.path.join(work, "paths.json"), "w") as handle:
            json.dump(paths, handle)
        count = sum(len(pair["rails"]) for pair in planned["pairs"])
        planned = None
        base = instructions(work, "none", n_hosts)
        figures = dict((phase, instructions(work, phase, n_hosts) - base) for phase in PHASES)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(figures.values())
    print("%d hosts x %d rails all_pairs, %d results: instructions executed (10^9), less a process's start (%.2f)"
          % (n_hosts, RAILS, count, base / 1e9))  # fmt: skip
    for phase in PHASES:
        share = 100.0 * figures[phase] / total
        print("  %-8s %8.3f  %5.1f%%  %7.0f a result" % (phase, figures[phase] / 1e9, share, figures[phase] / count))
    print("  %-8s %8.3f" % ("total", total / 1e9))


if __name__ == "__main__":
    main()
