"""Write a healthy and a faulty fabric report (every report file + report.html) for the browser check.

The inputs are shaped like the lab's runs (molecule/lab): 4 hosts, 2 rails (mlx5_0, mlx5_1), all_pairs
rounds and the retest plan from the real planner (module_utils/validate/pairs.py); the faulty run has the lab's
degraded link (ibt-lab-node2/mlx5_0 <-> ibt-lab-node3/mlx5_0 at 180 Gb/s) and climbing symbol errors on
ibt-lab-node4 mlx5_1. The files come from the real fabric_report code: report.build_report, render_all,
write_atomic, and report_html.to_html with the baseline the faulty run was compared against.

Usage: .venv/bin/python scripts/browser_reports.py OUT_DIR   (writes OUT_DIR/healthy and OUT_DIR/faulty)
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds  # noqa: E402
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html  # noqa: E402

HOSTS = ["ibt-lab-node%d" % i for i in range(1, 5)]
RAILS = ("mlx5_0", "mlx5_1")
DEGRADED = (frozenset(("ibt-lab-node2", "ibt-lab-node3")), "mlx5_0")
NOW = 1796119200.0  # 2026-12-01T10:00:00Z


def _result(server, client, dev, bw, round_, pass_):
    return {
        "server": server, "server_device": dev, "server_port": 1,
        "client": client, "client_device": dev, "client_port": 1,
        "test": "write", "bw_avg_gbps": bw, "bw_peak_gbps": bw + 0.4 if bw else None,
        "threshold_gbps": 360.0, "passed": bw is not None and bw >= 360.0,
        "failure": None, "round": round_, "pass": pass_, "duration_s": 5.0,
    }  # fmt: skip


def lab_results(degraded, jitter=0.0):
    """First pass over all_pairs rounds and both rails, then the retest plan on the same fabric."""

    def measure(server, client, round_, pass_):
        out = []
        for dev in RAILS:
            bw = 180.0 if degraded and (frozenset((server, client)), dev) == DEGRADED else 392.0 + jitter
            out.append(_result(server, client, dev, round(bw, 1), round_, pass_))
        return out

    results = []
    for index, rnd in enumerate(pair_rounds(HOSTS)):
        for server, client in rnd:
            results += measure(server, client, index, 1)
    if degraded:
        for index, rnd in enumerate(retest_rounds(results, HOSTS)):
            for server, client in rnd:
                results += measure(server, client, index, 2)
    return results


def baseline():
    """Five earlier healthy runs recorded with the real update_baseline."""
    base = RB.empty_baseline()
    for run, jitter in enumerate((0.6, -0.4, 0.9, 0.1, -0.7)):
        ts = R._iso(NOW - (5 - run) * 86400)
        base = RB.update_baseline(base, VR.normalize_results(lab_results(False, jitter)), ts)
    return base


SYMBOL_ERRORS = {
    "host": "ibt-lab-node4", "device": "mlx5_1", "port": 1, "counter": "symbol_error",
    "before": 0, "after": 7, "delta": 7, "allowed": 0, "category": "physical",
}  # fmt: skip


def write(out_dir):
    base = baseline()
    runs = {
        "healthy": R.build_report(lab_results(False), baseline=base, run_id="healthy", now=NOW),
        "faulty": R.build_report(
            lab_results(True), counter_violations=[SYMBOL_ERRORS], baseline=base, run_id="faulty", now=NOW
        ),
    }
    for name, report in runs.items():
        files = RR.render_all(report)
        files["report.html"] = to_html(report, base)
        RR.write_atomic(os.path.join(out_dir, name), files)
        print(
            "%s: %s (%s, %d results)" % (name, os.path.join(out_dir, name), report["headline"], len(report["results"]))
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/browser_reports.py OUT_DIR (writes OUT_DIR/healthy and OUT_DIR/faulty)")
    write(sys.argv[1])
