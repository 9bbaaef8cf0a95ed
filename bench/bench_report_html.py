"""report.html at 512 hosts x 8 rails: file size, render time, and headless Chromium load+render time.

Run from the repo root: .venv/bin/python bench/bench_report_html.py
Synthetic results go through the real report.build_report (one bad node, one bad link, a 10-run baseline);
pairs from the real planner (strategy random, N rounds: each host meets N partners on each of 8 rails).
Prints figures; asserts nothing about time (target: the 512-host page opens and renders in a few seconds).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import browser_check  # noqa: E402

HOSTS = ["gpu%03d" % i for i in range(512)]
RAILS = 8


def make_results(rounds):
    bad_node, bad_link = HOSTS[3], {HOSTS[0], HOSTS[1]}
    results = []
    for index, rnd in enumerate(pair_rounds(HOSTS, "random", rounds=rounds, seed=7)):
        for server, client in rnd:
            for rail in range(RAILS):
                bad = bad_node in (server, client) or ({server, client} == bad_link and rail == 2)
                dev = "mlx5_%d" % rail
                results.append(
                    {
                        "server": server, "server_device": dev, "server_port": 1,
                        "client": client, "client_device": dev, "client_port": 1,
                        "test": "write", "bw_avg_gbps": 180.0 if bad else 380.0 + (len(results) % 23),
                        "bw_peak_gbps": None, "threshold_gbps": 360.0, "passed": not bad,
                        "failure": None, "round": index, "pass": 1, "duration_s": 10.0,
                    }
                )  # fmt: skip
    return results


def chromium(args):
    binary = shutil.which("chromium")
    if binary is None:
        return None, None
    with tempfile.TemporaryDirectory(prefix="ibtune-chromium-") as profile:
        argv = [binary, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=%s" % profile] + args  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        return proc, time.perf_counter() - start


def bench(rounds):
    results = make_results(rounds)
    norm = VR.normalize_results(results)
    baseline = RB.empty_baseline()
    for run in range(10):
        baseline = RB.update_baseline(baseline, norm, "2026-11-%02dT00:00:00Z" % (run + 1))
    start = time.perf_counter()
    report = R.build_report(results, baseline=baseline, run_id="bench")
    build_ms = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    page = to_html(report, baseline)
    html_ms = (time.perf_counter() - start) * 1000.0
    size = len(page.encode("utf-8"))
    print(
        "\n512 hosts x %d rails, random %d rounds: %d results, %d failed"
        % (RAILS, rounds, len(results), report["totals"]["failed"])
    )
    print("  %-44s %9.1f ms" % ("build_report", build_ms))
    print("  %-44s %9.1f ms" % ("to_html (with the baseline trends)", html_ms))
    print("  %-44s %9.1f kB (%d bytes per result)" % ("report.html size", size / 1024.0, size // len(results)))
    dest = tempfile.mkdtemp(prefix="ibtune-bench-html-")
    try:
        path = os.path.join(dest, "report.html")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(page)
        proc, secs = chromium(["--dump-dom", "file://" + path])
        if proc is None:
            print("  chromium not installed (Debian package chromium): browser timing skipped")
            return
        problems = ["chromium rc %d" % proc.returncode]
        if proc.returncode == 0:
            problems = browser_check.check_dom(report, browser_check.parse_dom(proc.stdout))
        state = "DOM matches report.json" if not problems else "DOM WRONG: %s" % problems[0]
        print("  %-44s %9.2f s (%s)" % ("chromium --dump-dom (load, parse, layout)", secs, state))
        proc, secs = chromium(["--screenshot=%s" % os.path.join(dest, "shot.png"), "--window-size=1600,1200",
                               "file://" + path])  # fmt: skip
        print("  %-44s %9.2f s (rc %d)" % ("chromium --screenshot (load, render, paint)", secs, proc.returncode))
    finally:
        shutil.rmtree(dest)


def main():
    rounds = [int(a) for a in sys.argv[1:]] or [8, 32]
    print("load average: %.1f %.1f %.1f, %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    for n in rounds:
        bench(n)


if __name__ == "__main__":
    main()
