"""A full validation of 512 nodes x 8 rails NDR through the Slurm launcher, on paper, from measured costs.

Run from the repo root: .venv/bin/python bench/model_512.py
The rounds come from the real planners (cover_links on bench_topology's rail-optimised fat tree of 512 hosts,
32 a leaf, 16 spines, with up/down routes; random 8 rounds), the controller's seconds from bench_scale.py's
measurement of the same configuration (run here, in a fresh process), and the per-round and per-job costs from
the measurements listed in INPUTS (each with where it was measured). Prints the model; asserts nothing.
Target (issue 23): bandwidth + latency + counters on 512 x 8 in < 15 minutes wall, against ~4.3 h for an N-1
all_pairs sweep at 30 s a round.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

HOSTS, RAILS = 512, 8
INPUTS = {
    # what a round costs beyond its test: connect (the client retries 0.2 s, 0.4 s, ... until its server
    # listens), perftest's own setup and report, the runner's poll (50 ms), the next round's start. Measured on
    # the lab simulator through molecule slurm's real Slurm job: a 2 s test's sides took 2.8 - 3.4 s
    # (slurm_pass sides elapsed_s, load average 10-25 on 2 cores); real ib_write_bw adds its QP setup (< 1 s).
    "round_overhead_s": 1.5,
    # fabric_validate's defaults for a full validation: 10 s bandwidth tests (FACTS: peaks are not measured
    # with -D; 10 s reaches the steady average), latency 1000 iterations of 2 bytes (~0.1 s at NDR) + setup
    "bw_test_s": 10.0,
    "lat_test_s": 1.0,
    # sbatch to RUNNING: 1.1 - 2.0 s measured on molecule slurm (idle 2-node cluster); a 512-node allocation
    # with a prolog (node_health) waits for every node's prolog: taken as 30 s, per job
    "job_start_s": 30.0,
    # counters before/after the passes (ib_counters over Ansible, forks 50): 512 / 50 batches of one module
    # run each (~2 s over ssh with pipelining, measured ~0.5 s module time per host in the lab)
    "counters_read_s": 2.0 * (HOSTS // 50 + 1),
    # the retest pass: suspects against known-good partners, a few rounds (fabric_validate_second_pass)
    "retest_rounds": 3,
    # a round of an N-1 all_pairs sweep at 30 s (FACTS: "4.3 h for 512 nodes")
    "all_pairs_round_s": 30.0,
}


def controller_seconds(spec):
    """bench_scale.py's controller seconds (plan, slices, bundle, join, report) for ``spec``."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "bench_scale.py"), "--one", spec],
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def model(rounds, controller, inputs):
    """Seconds per phase of plan -> counters -> bandwidth pass -> retest -> latency pass -> counters -> report."""
    bw_round = inputs["bw_test_s"] + inputs["round_overhead_s"]
    lat_round = inputs["lat_test_s"] + inputs["round_overhead_s"]
    rows = [
        ("plan + slices + bundle (controller)", controller["plan_s"] + controller["slices_s"] + controller["bundle_s"]),
        ("counters before (Ansible)", inputs["counters_read_s"]),
        ("bandwidth pass: job start", inputs["job_start_s"]),
        ("bandwidth pass: %d rounds x %.1f s" % (rounds, bw_round), rounds * bw_round),
        (
            "retest pass: job start + %d rounds" % inputs["retest_rounds"],
            inputs["job_start_s"] + inputs["retest_rounds"] * bw_round,
        ),
        (
            "latency pass: job start + %d rounds x %.1f s" % (rounds, lat_round),
            inputs["job_start_s"] + rounds * lat_round,
        ),
        ("counters after (Ansible)", inputs["counters_read_s"]),
        ("join + report, 3 passes (controller)", 3 * controller["join_s"] + controller["report_s"]),
    ]
    return rows, sum(seconds for _label, seconds in rows)


def main():
    print("inputs (seconds unless named):")
    for key, value in INPUTS.items():
        print("  %-20s %s" % (key, value))
    for strategy in ("cover_links", "random:8"):
        spec = "%dx%d:%s" % (HOSTS, RAILS, strategy)
        measured = controller_seconds(spec)
        rows, total = model(measured["rounds"], measured, INPUTS)
        print(
            "\n%s: %d rounds, %d pair results a pass (controller measured by bench_scale.py, peak %.0f MiB)"
            % (spec, measured["rounds"], measured["results"], measured["report_rss_mib"])
        )
        for label, seconds in rows:
            print("  %-48s %7.1f s" % (label, seconds))
        print("  %-48s %7.1f s = %.1f min" % ("total", total, total / 60.0))
    sweep = (HOSTS - 1) * INPUTS["all_pairs_round_s"]
    print(
        "\nfor comparison, all_pairs (N-1 = %d rounds) at %.0f s a round: %.0f s = %.1f h, bandwidth only"
        % (HOSTS - 1, INPUTS["all_pairs_round_s"], sweep, sweep / 3600.0)
    )


if __name__ == "__main__":
    main()
