"""Report generation for 4096 pair results (and 512 / 64 for scale), every renderer timed.

Run from the repo root: /work/main/.venv/bin/python bench/bench_report.py
Prints figures; asserts nothing about time (target: a report of 4096 results in < 2 s).
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils import report as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.pairs import pair_rounds  # noqa: E402


def make_results(count):
    """`count` first-pass results: all_pairs rounds over enough hosts, 8 rails per pair, one slow link,
    one bad node; plus counter violations and a baseline holding 10 runs per link."""
    hosts_needed = 2
    while hosts_needed * (hosts_needed - 1) // 2 * 8 < count:
        hosts_needed += 1
    hosts = ["node%04d" % i for i in range(hosts_needed)]
    results = []
    for index, rnd in enumerate(pair_rounds(hosts)):
        for server, client in rnd:
            for rail in range(8):
                bad = (
                    server == hosts[3] or client == hosts[3] or ({server, client} == {hosts[0], hosts[1]} and rail == 2)
                )
                dev = "mlx5_%d" % rail
                results.append(
                    {
                        "server": server, "server_device": dev, "server_port": 1,
                        "client": client, "client_device": dev, "client_port": 1,
                        "test": "write", "bw_avg_gbps": 180.0 if bad else 392.0 + (len(results) % 7) * 0.1,
                        "bw_peak_gbps": None, "threshold_gbps": 360.0, "passed": not bad,
                        "failure": None, "round": index, "pass": 1, "duration_s": 10.0,
                    }
                )  # fmt: skip
                if len(results) == count:
                    return hosts, results
    return hosts, results


def timed(label, func, rows):
    start = time.perf_counter()
    out = func()
    ms = (time.perf_counter() - start) * 1000.0
    rows.append((label, ms))
    return out


def bench(count):
    hosts, results = make_results(count)
    violations = [
        {"host": hosts[3], "device": "mlx5_%d" % d, "port": 1, "counter": "symbol_error", "before": 0, "after": 7,
         "delta": 7, "allowed": 0, "category": "physical"}
        for d in range(8)
    ]  # fmt: skip
    norm = R.normalize_results(results)
    baseline = R.empty_baseline()
    for run in range(10):
        baseline = R.update_baseline(baseline, norm, "2026-11-%02dT00:00:00Z" % (run + 1))
    rows = []
    total = time.perf_counter()
    report = timed(
        "build_report (normalize, localize, baseline)",
        lambda: R.build_report(results, violations, [], baseline, 0.1, run_id="bench"),
        rows,
    )
    files = {}
    files["report.json"] = timed("to_json", lambda: R.to_json(report), rows)
    files["junit.xml"] = timed("to_junit", lambda: R.to_junit(report), rows)
    files["summary.md"] = timed("to_markdown", lambda: R.to_markdown(report), rows)
    files["ibtune.prom"] = timed("to_prometheus", lambda: R.to_prometheus(report), rows)
    dest = tempfile.mkdtemp(prefix="ibtune-bench-")
    try:
        timed("write_atomic (4 files)", lambda: R.write_atomic(dest, files), rows)
    finally:
        shutil.rmtree(dest)
    total_ms = (time.perf_counter() - total) * 1000.0
    timed(
        "update_baseline (10 runs/link) + to_json",
        lambda: R.to_json(R.update_baseline(baseline, report["results"], "now")),
        rows,
    )
    print(
        "\n%d results (%d hosts x 8 rails, all_pairs), %d failed, verdict: %s"
        % (len(results), len(hosts), report["totals"]["failed"], report["message"][:110])
    )
    for label, ms in rows:
        print("  %-46s %9.1f ms" % (label, ms))
    print("  %-46s %9.1f ms" % ("report total (build + 4 renderers + write)", total_ms))
    print("  sizes: " + ", ".join("%s %d kB" % (k, len(v) // 1024) for k, v in sorted(files.items())))


def bench_module(count):
    """The fabric_report module end to end, in-process: argument validation, report, files, baseline."""
    import contextlib
    import io
    import json

    from ansible.module_utils.testing import patch_module_args

    from ansible_collections.ibtune.fabric.plugins.modules import fabric_report

    _hosts, results = make_results(count)
    dest = tempfile.mkdtemp(prefix="ibtune-bench-")
    try:
        args = {
            "results": results,
            "dest": dest,
            "baseline_path": os.path.join(dest, "baseline.json"),
            "update_baseline": True,
            "fail_on_failure": False,
        }
        out = io.StringIO()
        start = time.perf_counter()
        with patch_module_args(args), contextlib.redirect_stdout(out):
            try:
                fabric_report.main()
            except SystemExit:
                pass
        ms = (time.perf_counter() - start) * 1000.0
        result = json.loads(out.getvalue())
        print(
            "\nfabric_report module, %d results, end to end in-process (incl. baseline update): %.1f ms, passed=%s"
            % (count, ms, result["passed"])
        )
    finally:
        shutil.rmtree(dest)


def main():
    for count in (64, 512, 4096):
        bench(count)
    bench_module(4096)


if __name__ == "__main__":
    main()
