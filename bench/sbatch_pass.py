"""The submit host's side of bench/bench_sbatch.sh: run INSIDE its slurmctld container (python3 of Debian 12, the
checkout mounted read-only at its own path), next to a real sbatch, squeue, scontrol and sacct.

What it times, on the collection's own code (module_utils/slurm/launcher.py, validate/plan.py, validate/sidefiles.py):
the controller's part once (the plan of the pass, its slices, the bundle slurm_pass packs), then per run the
submit host's part as module slurm_job op=submit does it: ``stage_and_submit`` (a fresh pass directory on the
shared filesystem, the bundle unpacked, job.sh written, ``sbatch --parsable`` run through ``run``), split into the
sbatch call and the rest (staging); after the first, how long until slurmctld allocates its nodes and until sacct
lists it (slurmctld hands a job to slurmdbd in the background); then the bare sbatch (the same argv, no Python
around it but subprocess), the status reads (``launcher.query``: squeue, and scontrol when squeue no longer lists
the job; bare squeue, scontrol show job, sacct) and scancel. Every job it submitted is cancelled before it exits.

Prints one "key value" line per figure (bench_sbatch.sh lays them out); asserts nothing.
Usage: python3 bench/sbatch_pass.py --nodes bench-n[0001-2048] [--step 2] --shared /shared --runs 5 --partition bench
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan, sidefiles  # noqa: E402

RAILS = 8


def run(argv):
    """What slurm_job's module.run_command does, without Ansible: (rc, stdout, stderr)."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def expand(hostlist):
    """The node names of scontrol's hostlist (one call: the bench's own input, not a timed figure)."""
    rc, out, err = run(["scontrol", "show", "hostnames", hostlist])
    if rc != 0:
        raise SystemExit("scontrol show hostnames %s: %s" % (hostlist, err.strip()))
    return out.split()


def say(key, value):
    if isinstance(value, float):
        value = "%.3f" % value
    elif isinstance(value, (list, tuple)):
        value = " ".join("%.3f" % v for v in value)
    print("%s %s" % (key, value), flush=True)


def spread(values):
    return [min(values), statistics.median(values), max(values)]


def controller_side(nodes, work):
    """The plan, the slices and the bundle (slurm_pass's _bundle): the pass the sbatch carries."""
    rails = dict(
        (h, [{"rail": "mlx5_%d:1" % r, "device": "mlx5_%d" % r, "port": 1, "rate_gbps": 400.0} for r in range(RAILS)])
        for h in nodes
    )
    plan_s, planned = timed(
        lambda: plan.plan_pass(
            nodes, rails, dict((h, h) for h in nodes), strategy="random", random_rounds=8, seed="bench"
        )
    )
    slices_s, (_plan_file, slice_dir) = timed(lambda: plan.write_plan(work, planned, nodes, rails, 1))

    def bundle():
        for name, doc in (
            (sidefiles.SETTINGS, {"test": "write", "duration": 10}),
            (sidefiles.NODES, dict((h, h) for h in nodes)),
        ):
            with open(os.path.join(work, name), "w") as handle:
                json.dump(doc, handle, sort_keys=True)
        slices = [(os.path.join(slice_dir, "%s.json" % h), "%s/%s.json" % (sidefiles.SLICES, h)) for h in nodes]
        path = os.path.join(work, "pass.tar.gz")
        sidefiles.pack(work, path, [sidefiles.SETTINGS, sidefiles.NODES], extra=slices)
        return path

    bundle_s, path = timed(bundle)
    return planned["rounds"], path, {"plan_s": plan_s, "slices_s": slices_s, "bundle_s": bundle_s}


def sacct_argv(job_id):
    return [
        "sacct",
        "--jobs=%s" % job_id,
        "--allocations",
        "--noheader",
        "--parsable2",
        "--format=" + ",".join(launcher.SACCT_FIELDS),
    ]


def after_submission(job_id, submitted_at, limit_s=30):
    """Seconds from the submission until slurmctld gave the job its nodes (squeue shows them: cloud nodes) and
    until sacct lists it (slurmctld hands a job to slurmdbd in the background); each "-" when not within
    limit_s (down nodes: the job never gets any)."""
    allocated = listed = None
    row, rc, out, err = None, 0, "", ""
    while (allocated is None or listed is None) and time.time() - submitted_at < limit_s:
        if allocated is None:
            job = launcher.query(run, job_id)
            if job.get("nodes") and job.get("state") != "PENDING":
                allocated = time.time() - submitted_at
                say("allocated", "%s %s" % (job["state"], job["nodes"]))
        if listed is None:
            rc, out, err = run(sacct_argv(job_id))
            row = launcher.parse_sacct(out, job_id) if rc == 0 else None
            if row is not None:
                listed = time.time() - submitted_at
                say("sacct_row", row["state"])
        time.sleep(0.05)
    say("allocated_s", "-" if allocated is None else allocated)
    say("sacct_lag_s", "-" if listed is None else listed)
    if row is None:
        say("sacct_row", "none (rc %s: %s)" % (rc, (err or out).strip()[:120]))


def argv_build(base, runs):
    """The argv and the script alone (what bench_scale's bundle phase times)."""
    build = []
    for _index in range(runs):
        spec = dict(base, pass_dir=base["pass_dir"] + "1")
        seconds, argv = timed(
            lambda spec=spec: (
                launcher.sbatch_argv(dict(spec, script=spec["pass_dir"] + "/job.sh")),
                launcher.job_script(spec),
            )[0]
        )
        build.append(seconds)
    nodelist = [a for a in argv if a.startswith("--nodelist=")][0]
    say("hostlist_chars", len(nodelist) - len("--nodelist="))
    say("argv_chars", sum(len(a) + 1 for a in argv))
    say("argv_build_s", spread(build))


def recording(calls):
    """``run`` that appends each call's wall seconds to ``calls``."""

    def timed_run(argv):
        seconds, out = timed(lambda: run(argv))
        calls.append(seconds)
        return out

    return timed_run


def submissions(base, runs, bundle, jobs, limit_s):
    """The collection's path, as slurm_job op=submit: stage_and_submit, its sbatch call timed through ``run``.
    After the first, how long until its allocation and until sacct lists it. Returns the argv of the last."""
    total, in_sbatch, cpu = [], [], []
    for index in range(runs):
        spec = dict(base, pass_dir=base["pass_dir"] + str(index + 1))
        calls = []
        submitted_at, cpu_at = time.time(), time.process_time()
        seconds, submitted = timed(
            lambda spec=spec, calls=calls: launcher.stage_and_submit(spec, recording(calls), bundle=bundle)
        )
        cpu.append(time.process_time() - cpu_at)
        jobs.append(submitted["job_id"])
        total.append(seconds)
        in_sbatch.append(calls[0])
        if index == 0:
            after_submission(submitted["job_id"], submitted_at, limit_s=limit_s)
    say("staging_s", spread([t - c for t, c in zip(total, in_sbatch)]))
    # this process's CPU time in stage_and_submit (sbatch's own is the child's): the load-proof part of staging
    say("staging_cpu_s", spread(cpu))
    say("sbatch_launcher_s", spread(in_sbatch))
    say("submit_total_s", spread(total))
    return submitted["argv"]


def bare_sbatch(argv, runs, jobs):
    """The same argv straight to sbatch."""
    bare = []
    for _index in range(runs):
        seconds, (rc, out, err) = timed(lambda: run(argv))
        bare.append(seconds)
        jobs.append(launcher.parse_sbatch(out, err, rc))
    say("sbatch_bare_s", spread(bare))


def status_reads(job_id, runs):
    job = launcher.query(run, job_id)
    say("job", "%s %s %s" % (job_id, job.get("state"), (job.get("reason") or "-").split(",")[0]))
    reads = {
        "query_s": lambda: launcher.query(run, job_id),
        "squeue_s": lambda: run(
            ["squeue", "--states=all", "--jobs=%s" % job_id, "--noheader", "--format=" + launcher.SQUEUE_FORMAT]
        ),
        "scontrol_s": lambda: run(["scontrol", "show", "job", "--oneliner", str(job_id)]),
        "sacct_s": lambda: run(sacct_argv(job_id)),
    }
    for key, func in reads.items():
        say(key, spread([timed(func)[0] for _index in range(runs)]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", required=True, help="the pass's nodes, as a Slurm hostlist")
    parser.add_argument("--shared", required=True, help="the shared filesystem's directory for pass directories")
    parser.add_argument("--step", type=int, default=1, help="take every STEP-th node of --nodes (a scattered pass)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--partition", default=None)
    parser.add_argument("--wait-s", type=float, default=30, help="how long to wait for the allocation after the first")
    args = parser.parse_args()

    nodes = expand(args.nodes)[:: args.step]
    work = tempfile.mkdtemp(prefix="ibtune-bench-sbatch-")
    jobs = []
    try:
        rounds, bundle, ctl = controller_side(nodes, work)
        say("nodes", len(nodes))
        say("rounds", rounds)
        for key in ("plan_s", "slices_s", "bundle_s"):
            say(key, ctl[key])
        say("bundle_mib", os.path.getsize(bundle) / 2**20)
        base = {
            "nodes": nodes,
            "pass_dir": "%s/ibtune/run/pass" % args.shared,
            "job_name": "ibtune-bench-sbatch",
            "runner": "/usr/local/libexec/ibtune-schedule",
            "budget_s": plan.pass_budget_s(rounds, 10, 30, 20),
            "partition": args.partition,
            "exclusive": True,
        }
        argv_build(base, args.runs)
        argv = submissions(base, args.runs, bundle, jobs, args.wait_s)
        bare_sbatch(argv, args.runs, jobs)
        status_reads(jobs[0], args.runs)
    finally:
        cancel = [timed(lambda job_id=job_id: launcher.cancel(run, job_id))[0] for job_id in jobs]
        if cancel:
            say("scancel_s", spread(cancel))
        say("jobs_cancelled", len(cancel))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
