# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the fabric_report module does, as one function over its parameters (the module is glue).

run(params, check_mode) reads the result files and the baseline, builds the report, writes the
report files and the baseline, and returns (result, failed, warnings); ReportError carries the one
sentence the module fails with. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.report.build import build_report
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable
from ansible_collections.ibtune.fabric.plugins.module_utils.report.baseline import (
    load_baseline,
    locked,
    update_baseline,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report.checks import attach as attach_checks
from ansible_collections.ibtune.fabric.plugins.module_utils.report.checks import extend_files
from ansible_collections.ibtune.fabric.plugins.module_utils.report.render import (
    report_files,
    render_files,
    to_json,
    write_atomic,
)

INVOCATION_LIMIT = 100  # list arguments longer than this are not echoed back
NOT_ECHOED = {
    "topology": "(the fabric's topology, not echoed)",
    "phy": "(the PHY verdict, see report.json phy_findings)",
    "lldp": "(the hosts' LLDP neighbours, not echoed)",
    "host_rails": "(the hosts' rails, not echoed)",
    "switch_groups": "(the hosts' switches, see report.json settings.switch_groups)",
    "netdevs": "(the hosts' netdevs, not echoed)",
}


class ReportError(Exception):
    """The module fails with this one sentence."""


def read_results_files(paths, table=None):
    """The pair results of every file in `paths` (each a results file as fabric_join writes it, in either of the
    forms of validate/resultfile.py), concatenated into a ResultTable (``table``, appended to, or a new one): a
    table item's rows stay columns (resultfile.read_table)."""
    out = ResultTable() if table is None else table
    for index, path in enumerate(paths or []):
        try:
            out.extend(resultfile.read_table(path, "results_paths[%d] %s" % (index, path), len(out)))
        except resultfile.ResultsFileError as exc:
            raise ReportError(str(exc))
        except resultfile.NotAPairResult as exc:  # named as build_report names it
            raise ReportError("fabric_report: %s" % exc)
    return out


def read_baseline(path):
    """The baseline dict from `path` (None when no path; a missing file is an empty baseline)."""
    if not path:
        return None
    if os.path.isdir(path):
        raise ReportError("baseline_path %s is a directory: give a file, e.g. %s/baseline.json" % (path, path))
    text = None
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (IOError, OSError) as exc:
            raise ReportError("cannot read baseline %s: %s" % (path, exc))
    try:
        return load_baseline(text)
    except ValueError as exc:
        raise ReportError("baseline %s: %s" % (path, exc))


def _check_params(p):
    if p["baseline_keep"] < 1:
        raise ReportError("baseline_keep must be >= 1, got %d: keep at least the last run" % p["baseline_keep"])
    if p["update_baseline"] and not p["baseline_path"]:
        raise ReportError("update_baseline is true but baseline_path is not set: give the baseline file to update")


REPORT_OPTIONS = (
    "regression_tolerance", "min_gbps", "run_id", "expected_hosts", "host_failures", "min_hosts", "min_peer_fraction",
    "line_rate_gbps", "topology", "host_rails", "switch_groups", "lldp", "netdevs", "phy",
)  # fmt: skip


def _build(p, baseline):
    try:
        results = ResultTable.from_dicts(p.get("results") or [])
    except ValueError as exc:
        raise ReportError("fabric_report: %s" % exc)
    read_results_files(p.get("results_paths"), results)
    options = dict((k, p[k]) for k in REPORT_OPTIONS if p.get(k) is not None)
    try:
        report = build_report(results, p["counter_violations"], p["saturated"], baseline, **options)
        # issue 24 hook: checks of other suites (NCCL across nodes) in the same verdict and files
        attach_checks(report, p.get("checks"))
    except ValueError as exc:
        raise ReportError("fabric_report: %s" % exc)
    return report


def _write_files(dest, files, check_mode):
    if check_mode:
        return [os.path.join(dest, name) for name in report_files()]
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise ReportError("dest %s exists and is not a directory: give a directory for the report files" % dest)
    try:
        return write_atomic(dest, files)
    except (IOError, OSError) as exc:
        raise ReportError("cannot write the report into %s: %s" % (dest, exc))


def _write_baseline(p, baseline, report, check_mode):
    """Whether the baseline changed (and, unless in check mode, was written under its lock)."""
    if not p["update_baseline"]:
        return False
    new_baseline = update_baseline(baseline, report["results"], report["timestamp"], keep=p["baseline_keep"])
    if new_baseline["links"] == (baseline or {}).get("links"):
        return False
    if not check_mode:
        path = p["baseline_path"]
        try:
            write_atomic(os.path.dirname(path) or ".", {os.path.basename(path): to_json(new_baseline)})
        except (IOError, OSError) as exc:
            raise ReportError("cannot write the baseline %s: %s" % (path, exc))
    return True


def _invocation(p):
    """The module arguments as Ansible echoes them (invocation.module_args), long lists summarised: for thousands
    of pair results echoing and scanning them for secrets is most of the module's time and a copy nobody reads."""
    args = dict(p)
    for key in ("results", "counter_violations", "saturated", "expected_hosts", "host_failures", "checks"):
        if isinstance(args.get(key), list) and len(args[key]) > INVOCATION_LIMIT:
            args[key] = "%d entries (not echoed, see report.json)" % len(args[key])
    for key, text in NOT_ECHOED.items():
        if args.get(key) is not None:
            args[key] = text
    return {"module_args": args}


RESULT_KEYS = (
    "passed", "failed_pairs", "suspect_nodes", "suspect_links", "switch_faults", "regressions", "counter_violations",
    "failed_hosts", "passed_hosts", "systemic",
)  # fmt: skip


def run(params, check_mode=False):
    """(result, failed, warnings) for the module's params; raises ReportError. With update_baseline the baseline is
    read, compared and rewritten under its lock (baseline.locked): concurrent reports never lose an update."""
    _check_params(params)
    if not params["update_baseline"] or check_mode:
        return _run(params, check_mode)
    path = params["baseline_path"]
    try:
        directory = os.path.dirname(path) or "."
        if not os.path.isdir(directory):
            os.makedirs(directory)
        with locked(path):
            return _run(params, check_mode)
    except (IOError, OSError) as exc:
        raise ReportError("cannot lock the baseline %s: %s" % (path, exc))


def _run(p, check_mode):
    # The cyclic collector sleeps from reading to writing (common/memory.py): nothing here makes reference cycles,
    # and between the steps that pause it each full pass ran over the tens of millions of objects a 1024 hosts x 8
    # rails report holds (9 of them, 2.8 s of 32).
    with paused_gc():
        return _run_paused(p, check_mode)


def _run_paused(p, check_mode):
    baseline = read_baseline(p["baseline_path"])
    report = _build(p, baseline)
    warnings = []
    if not report["results"] and not report.get("checks"):
        warnings.append(
            "fabric_report got no pair results: no link was measured (fewer than two hosts, or no round ran)"
        )
    warnings += report.get("refused") or []
    files = extend_files(render_files(report, history=baseline), report)
    paths = _write_files(p["dest"], files, check_mode)
    baseline_updated = _write_baseline(p, baseline, report, check_mode)
    # The report files are this run's output, like a log: rewriting them is not a change to the
    # managed state. Only the baseline is state, so a repeated healthy run reports no change.
    result = dict((k, report[k]) for k in RESULT_KEYS)
    result.update(
        changed=baseline_updated,
        summary=files["summary.md"],
        files=paths,
        baseline_updated=baseline_updated,
        msg=report["message"],
        invocation=_invocation(p),
    )
    if "suspect_cables" in report:
        result["suspect_cables"] = report["suspect_cables"]
        result["switch_counter_violations"] = report["switch_counter_violations"]
    if "phy_findings" in report:
        result["phy_findings"] = report["phy_findings"]
    failed = not report["passed"] and p["fail_on_failure"]
    return result, failed, warnings
