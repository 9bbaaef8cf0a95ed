"""Report generation at scale: the verdict (normalise, peer gate, baseline, localise, hosts) and every renderer.

Run from the repo root: /work/main/.venv/bin/python bench/bench_report.py [HOSTS ...]
Default: 64, 512 and 4096 results (8 rails, all_pairs, with a 10-run baseline), the fabric_report module
end to end on 4096, then 1024 hosts x 8 rails all_pairs (4,190,208 results, the issue's size).
Prints figures; asserts nothing about time (target for 1024 x 8: build_report < 10 s and < 2 GiB RSS).
RSS is the process's peak (resource.getrusage ru_maxrss), printed after the input is built and after each step.
"""

import os
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds  # noqa: E402

RAILS = 8


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def make_results(count=None, hosts_count=None):
    """All_pairs first-pass results over enough hosts for `count` (or over `hosts_count` hosts), 8 rails,
    as the join hands them over (gated, with failure_kind): one bad node (every rail at 180 Gb/s) and one
    link on rail 2 at 64% of its peers (251 Gb/s, below the 360 Gb/s gate too); ~392 Gb/s elsewhere."""
    if hosts_count is None:
        hosts_count = 2
        while hosts_count * (hosts_count - 1) // 2 * RAILS < count:
            hosts_count += 1
    hosts = ["node%04d" % i for i in range(hosts_count)]
    devices = ["mlx5_%d" % r for r in range(RAILS)]
    bad_node, slow = hosts[3], {hosts[0], hosts[1]}
    results = []
    append = results.append
    for index, rnd in enumerate(pair_rounds(hosts)):
        for server, client in rnd:
            node_bad = bad_node in (server, client)
            for rail in range(RAILS):
                if node_bad:
                    bw = 180.0
                elif rail == 2 and {server, client} == slow:
                    bw = 251.0
                else:
                    bw = 392.0 + (len(results) % 7) * 0.1
                ok = bw >= 360.0
                failure = None if ok else "%.1f Gb/s < 360.0 Gb/s (0.9 x 400 Gb/s port rate)" % bw
                append(
                    {
                        "server": server, "server_device": devices[rail], "server_port": 1,
                        "client": client, "client_device": devices[rail], "client_port": 1,
                        "test": "write", "kind": "bandwidth", "rail": rail,
                        "bw_avg_gbps": bw, "bw_peak_gbps": bw + 0.4, "threshold_gbps": 360.0,
                        "passed": ok, "failure": failure,
                        "failure_kind": None if ok else "below_threshold", "round": index, "pass": 1,
                        "duration_s": 10.0,
                    }
                )  # fmt: skip
                if count is not None and len(results) == count:
                    return hosts, results
    return hosts, results


def violations_for(host):
    return [
        {"host": host, "device": "mlx5_%d" % d, "port": 1, "counter": "symbol_error", "before": 0, "after": 7,
         "delta": 7, "allowed": 0, "category": "physical"}
        for d in range(RAILS)
    ]  # fmt: skip


def timed(label, func, rows):
    start = time.perf_counter()
    out = func()
    rows.append((label, (time.perf_counter() - start) * 1000.0, rss_mib()))
    return out


def print_rows(rows):
    for label, ms, rss in rows:
        print("  %-50s %10.1f ms   peak RSS %7.0f MiB" % (label, ms, rss))


def bench(count):
    hosts, results = make_results(count)
    norm = VR.normalize_results(results)
    baseline = RB.empty_baseline()
    for run in range(10):
        baseline = RB.update_baseline(baseline, norm, "2026-11-%02dT00:00:00Z" % (run + 1))
    rows = []
    total = time.perf_counter()
    report = timed(
        "build_report (normalize, peers, baseline, localize)",
        lambda: R.build_report(results, violations_for(hosts[3]), [], baseline, 0.1, run_id="bench"),
        rows,
    )
    files = render(report, rows, baseline)
    dest = tempfile.mkdtemp(prefix="ibtune-bench-")
    try:
        timed("write_atomic (%d files)" % len(files), lambda: RR.write_atomic(dest, files), rows)
    finally:
        shutil.rmtree(dest)
    total_ms = (time.perf_counter() - total) * 1000.0
    timed(
        "update_baseline (10 runs/link) + to_json",
        lambda: RR.to_json(RB.update_baseline(baseline, report["results"], "now")),
        rows,
    )
    print(
        "\n%d results (%d hosts x %d rails, all_pairs), %d failed, verdict: %s"
        % (len(results), len(hosts), RAILS, report["totals"]["failed"], report["message"][:110])
    )
    print_rows(rows)
    print("  %-50s %10.1f ms" % ("report total (build + renderers + write)", total_ms))
    print("  sizes: " + ", ".join("%s %d kB" % (k, len(v) // 1024) for k, v in sorted(files.items())))


def render(report, rows, baseline=None):
    files = {}
    files["report.json"] = timed("to_json", lambda: RR.to_json(report), rows)
    files["junit.xml"] = timed("to_junit", lambda: RR.to_junit(report), rows)
    files["summary.md"] = timed("to_markdown", lambda: RR.to_markdown(report), rows)
    files["ibtune.prom"] = timed("to_prometheus", lambda: RR.to_prometheus(report), rows)
    files["report.html"] = timed("to_html", lambda: RR.to_html(report, baseline), rows)
    return files


def bench_large(hosts_count, renderers=True):
    """The issue's size: hosts_count hosts x 8 rails all_pairs, no baseline (a 10-run baseline of 4 M links
    would be 40 M history points), one bad node, one slow link, counter violations on the bad node."""
    start = time.perf_counter()
    hosts, results = make_results(hosts_count=hosts_count)
    build_s = time.perf_counter() - start
    input_rss = rss_mib()
    print(
        "\n%d hosts x %d rails all_pairs: %d results (synthetic join output built in %.1f s, peak RSS %.0f MiB "
        "with the input alone)" % (len(hosts), RAILS, len(results), build_s, input_rss)
    )
    rows = []
    report = timed(
        "build_report (normalize, peers, localize, hosts)",
        lambda: R.build_report(
            results, violations_for(hosts[3]), expected_hosts=hosts, run_id="bench-large", in_place=True
        ),
        rows,
    )
    print("  verdict: %s" % report["message"][:160])
    print(
        "  suspects: nodes %s, links %s; failed hosts %d; systemic %r"
        % (
            [n["host"] for n in report["suspect_nodes"]],
            [x["link"] for x in report["suspect_links"]],
            len(report["failed_hosts"]),
            report["systemic"],
        )
    )
    print_rows(rows)
    print(
        "  build_report: %.1f s; peak RSS %.0f MiB, %.0f MiB above the input's"
        % (rows[0][1] / 1000.0, rows[0][2], rows[0][2] - input_rss)
    )
    if renderers:
        rows = []
        files = render(report, rows)
        print_rows(rows)
        print("  sizes: " + ", ".join("%s %d MiB" % (k, len(v) >> 20) for k, v in sorted(files.items())))


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
    large = [int(a) for a in sys.argv[1:] if a.isdigit()] or [1024]
    if not sys.argv[1:]:
        for count in (64, 512, 4096):
            bench(count)
        try:
            bench_module(4096)
        except ImportError as exc:  # ansible-core not installed (a bare python): the module bench needs it
            print("\nfabric_report module bench skipped: %s" % exc)
    print("\nload average: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    for hosts_count in large:
        bench_large(hosts_count, renderers="--no-render" not in sys.argv)


if __name__ == "__main__":
    main()
