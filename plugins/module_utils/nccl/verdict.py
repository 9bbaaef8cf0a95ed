# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The multi-node NCCL verdict: every run of a plan judged (run, transport, curve, per-NIC floor), failed groups
bisected until a node or a pair is named, all of it as checks for the fabric report (report/checks.py).

verdict(params) takes the plan's runs and nccl_test's results (one per run, same ``id``), the reference curves
(gate.py) and the bisections of earlier rounds, and returns the checks, the culprits, the updated bisections,
the runs still to execute (``pending``) and the curves to record. The nccl_verdict module is its glue, called
once per round by the nccl_check role. No Ansible imports.

A check: {suite: "nccl", name, kind (run|transport|curve|nic|plan|bisect), passed, message, hosts, figures,
culprits: [{host, reason, failure_kind}]}. Culprit failure kinds: nccl_transport (the host's ranks used another
network, NICs or GPUDirect than the plan), nccl_node (bisection: fails with known-good partners), nccl_pair (two
hosts that fail only together), nccl_group (no smaller group fails), nccl_plan (a host the plan could not test).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import plan as nccl_plan

SUITE = "nccl"
NIC_GATE_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
DEFAULTS = {
    "min_curve_ratio": gate.DEFAULT_MIN_RATIO,
    "curve_min_size": gate.DEFAULT_MIN_SIZE,
    "nic_fraction": gate.DEFAULT_NIC_FRACTION,
    "rate_gbps": None,
    "nic_gate_collectives": list(NIC_GATE_COLLECTIVES),
    "bisect": True,
    "record": True,
}


class VerdictError(ValueError):
    """One sentence for the module to fail with."""


def _check(name, kind, passed, message, hosts, figures=None, culprits=None):
    return {
        "suite": SUITE,
        "name": name,
        "kind": kind,
        "passed": bool(passed),
        "message": message,
        "hosts": list(hosts),
        "figures": figures or {},
        "culprits": culprits or [],
    }


def identity_of(run, result, collective, identity):
    """The reference-curve identity of one collective of a run (gate.reference_key)."""
    ident = dict(identity or {})
    ident.setdefault("nccl_version", (result.get("nccl_version") or "").split("+", 1)[0] or None)
    if not ident.get("gpu"):
        gpus = result.get("gpus") or []
        ident["gpu"] = gpus[0] if gpus else None
    ident.update(
        {
            "collective": collective,
            "plan": run["plan"] + ("/" + run["rail"] if run.get("rail") else ""),
            "nodes": len(run.get("bisect_parent_hosts") or run["hosts"]),
            "ranks_per_node": run.get("ranks_per_node"),
        }
    )
    if run.get("rail"):
        ident["plan"] = run["plan"]  # every rail of a fabric should draw the same curve
    return ident


def floor_of(run, settings):
    """The per-NIC busbw floor of a run (GB/s), None when no rate is declared or the run stays in one node."""
    if not settings.get("rate_gbps") or len(run["hosts"]) < 2 or not run.get("nics"):
        return None
    if (run.get("expect") or {}).get("transport") is None:
        return None  # inside one NVLink domain: the NICs are not what carries it
    return gate.group_expected(settings["rate_gbps"], run["nics"], settings["nic_fraction"])


def judge_run(run, result, baseline, settings, identity):
    """(checks, curves to record {key: points}, passed) for one run and its nccl_test result."""
    if result is None:
        return [_check(run["id"], "run", False, "no result: the run never came back", run["hosts"])], {}, False
    checks = _transport_checks(run, result)
    if result.get("failed") and not result.get("transport_problems"):
        checks.append(_check(run["id"], "run", False, result.get("msg") or "the run failed", run["hosts"]))
    records = {}
    if not result.get("failed"):
        for collective in run["collectives"]:
            rows = (result.get("collectives") or {}).get(collective, {}).get("rows") or []
            new, record = _collective_checks(run, result, collective, rows, baseline, settings, identity)
            checks += new
            records.update(record)
    passed = all(c["passed"] for c in checks)
    return checks, (records if passed else {}), passed


def _transport_checks(run, result):
    problems = result.get("transport_problems") or []
    if not problems:
        return []
    by_host = {}
    for problem in problems:
        by_host.setdefault(problem["host"], []).append(problem["message"])
    culprits = [
        {"host": host, "reason": "; ".join(messages), "failure_kind": "nccl_transport"}
        for host, messages in sorted(by_host.items())
    ]
    return [
        _check(
            run["id"] + " transport",
            "transport",
            False,
            "NCCL did not do what the plan expects: " + "; ".join(p["message"] for p in problems),
            run["hosts"],
            culprits=culprits,
        )
    ]


def _collective_checks(run, result, collective, rows, baseline, settings, identity):
    checks = []
    records = {}
    key = gate.reference_key(identity_of(run, result, collective, identity))
    reference = (baseline.get("curves") or {}).get(key)
    judged = gate.judge_curve(
        rows,
        reference["points"] if reference else None,
        min_size=settings["curve_min_size"],
        min_ratio=settings["min_curve_ratio"],
    )
    figures = {"reference_key": key, "ratio": judged.get("ratio"), "small_sizes": gate.small_sizes(rows)}
    name = "%s %s" % (run["id"], collective)
    if judged["status"] == "recorded":
        if settings["record"] and not run.get("bisect_of"):
            records[key] = judged["points"]
        checks.append(_check(name + " curve", "curve", True, judged["message"], run["hosts"], figures))
    elif judged["status"] == "no_data":
        checks.append(_check(name + " curve", "curve", True, "not gated: " + judged["message"], run["hosts"], figures))
    else:
        checks.append(
            _check(name + " curve", "curve", judged["status"] == "passed", judged["message"], run["hosts"], figures)
        )
    floor = floor_of(run, settings)
    if floor is not None and collective in settings["nic_gate_collectives"]:
        judged_floor = gate.judge_floor(rows, floor)
        figures = {"busbw": judged_floor["busbw"], "size": judged_floor["size"], "floor": floor, "nics": run["nics"]}
        message = "%s (%d NIC%s per node x %.1f GB/s)" % (
            judged_floor["message"],
            run["nics"],
            "" if run["nics"] == 1 else "s",
            floor / run["nics"],
        )
        checks.append(_check(name + " nic", "nic", judged_floor["passed"], message, run["hosts"], figures))
    return checks, records


def plan_checks(findings):
    """The plan's findings (a host missing a rail, fewer GPUs) as failed checks naming the host."""
    return [
        _check(
            "plan %s %s" % (f["kind"], f["host"]),
            "plan",
            False,
            f["message"],
            [f["host"]],
            culprits=[{"host": f["host"], "reason": f["message"], "failure_kind": "nccl_plan"}],
        )
        for f in findings or []
    ]


def known_good(runs, outcomes):
    """Hosts of the passing runs, per (plan, rail): who may partner a suspect in a bisection."""
    good = {}
    for run in runs:
        if outcomes.get(run["id"]):
            good.setdefault((run["plan"], run.get("rail")), set()).update(run["hosts"])
    return good


VERDICT_KINDS = {"node": "nccl_node", "nodes": "nccl_node", "pair": "nccl_pair", "group": "nccl_group"}


def bisect_check(state):
    """The check a finished bisection gives: what it named, and why."""
    run = state["run"]
    culprits = []
    parts = []
    for item in state["verdicts"]:
        text = _verdict_text(item)
        parts.append(text)
        for host in item["hosts"]:
            culprits.append(
                {"host": host, "reason": "%s (%s)" % (text, run["id"]), "failure_kind": VERDICT_KINDS[item["kind"]]}
            )
    tested = ", ".join("%s %s" % ("+".join(t["hosts"]), "passed" if t["passed"] else "FAILED") for t in state["tested"])
    message = "%s; bisection of %s: %s" % ("; ".join(parts) or "nothing named", run["id"], tested or "no retest")
    return _check("bisect " + run["id"], "bisect", False, message, run["hosts"], {"rounds": state["depth"]}, culprits)


def _verdict_text(item):
    hosts = ", ".join(item["hosts"])
    if item["kind"] == "node":
        return "slow node %s: %s" % (hosts, item["why"])
    if item["kind"] == "nodes":
        return "slow nodes %s: %s" % (hosts, item["why"])
    if item["kind"] == "pair":
        return "pair %s fails only together: %s" % (" <-> ".join(item["hosts"]), item["why"])
    return "group %s: %s" % (hosts, item["why"])


def settings_of(params):
    settings = dict(DEFAULTS)
    for key in DEFAULTS:
        if params.get(key) is not None:
            settings[key] = params[key]
    settings["curve_min_size"] = int(settings["curve_min_size"])
    if not 0 < float(settings["min_curve_ratio"]) <= 1.5:
        raise VerdictError("min_curve_ratio must be in (0, 1.5], got %r" % settings["min_curve_ratio"])
    return settings


def verdict(params):
    """One round: {checks, culprits, bisections, pending, done, records, passed, outcomes}.

    params: runs, results (nccl_test results with ``id``), baseline (dict), identity, bisections (from the last
    round; None for the first), findings (the plan's), and the settings of DEFAULTS."""
    settings = settings_of(params)
    baseline = gate.load_baseline(params.get("baseline"))
    results = dict((r.get("id"), r) for r in params.get("results") or [] if isinstance(r, dict))
    checks, records, outcomes = [], {}, {}
    for run in params.get("runs") or []:
        new, record, passed = judge_run(run, results.get(run["id"]), baseline, settings, params.get("identity"))
        outcomes[run["id"]] = passed
        records.update(record)
        if not run.get("bisect_of"):
            checks += new
    if params.get("bisections") is None:
        checks += plan_checks(params.get("findings"))
        bisections = _start_bisections(params.get("runs") or [], results, outcomes, settings)
    else:
        bisections = [_advance(state, outcomes) for state in params["bisections"]]
    for state in bisections:
        if nccl_plan.bisect_done(state):
            checks.append(bisect_check(state))
    pending = [run for state in bisections for run in state["pending"]]
    active = [state for state in bisections if not nccl_plan.bisect_done(state)]
    return {
        "checks": checks,
        "culprits": [c for check in checks for c in check["culprits"]],
        "bisections": active,
        "pending": pending,
        "done": not pending,
        "records": records,
        "outcomes": outcomes,
        "passed": all(c["passed"] for c in checks),
    }


def _start_bisections(runs, results, outcomes, settings):
    """A bisection for every failed run whose failure names no host yet (a slow group, not a transport)."""
    if not settings["bisect"]:
        return []
    good = known_good(runs, outcomes)
    states = []
    for run in runs:
        result = results.get(run["id"]) or {}
        if outcomes.get(run["id"]) or result.get("transport_problems") or result.get("id") is None:
            continue
        partners = good.get((run["plan"], run.get("rail")), set())
        states.append(nccl_plan.bisect_start(_parent(run), partners))
    return states


def _parent(run):
    out = dict(run)
    out["bisect_parent_hosts"] = list(run["hosts"])
    return out


def _advance(state, outcomes):
    mine = dict((run["id"], outcomes.get(run["id"], False)) for run in state["pending"])
    return nccl_plan.bisect_advance(state, mine)


def message(result):
    """One line for the verdict of a whole check run."""
    failed = [c for c in result["checks"] if not c["passed"]]
    if not failed:
        return "NCCL across nodes passed: %d checks" % len(result["checks"])
    named = sorted(set(c["host"] for c in result["culprits"]))
    return "NCCL across nodes failed: %d of %d checks%s; %s" % (
        len(failed),
        len(result["checks"]),
        " naming %s" % ", ".join(named) if named else "",
        "; ".join(c["message"] for c in failed[:5]),
    )


def read_baseline(path):
    """The reference curves in ``path`` (an empty set when the file does not exist yet)."""
    if not path or not os.path.exists(path):
        return gate.empty_baseline()
    try:
        with open(path) as handle:
            return gate.load_baseline(json.load(handle))
    except (IOError, OSError, ValueError) as exc:
        raise VerdictError("reference curves %s: %s" % (path, exc))


def write_baseline(path, baseline):
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory)
    fd, tmp = tempfile.mkstemp(prefix=".nccl-curves.", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w") as handle:
        json.dump(baseline, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def run(params, check_mode=False, now=None):
    """(result, changed) for the nccl_verdict module: one round, the first run's curves recorded in the file."""
    baseline = read_baseline(params.get("baseline_path"))
    out = verdict(dict(params, baseline=baseline))
    recorded = sorted(key for key in out["records"] if key not in baseline["curves"])
    changed = bool(recorded) and bool(params.get("baseline_path"))
    if changed and not check_mode:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now or time.time()))
        for key in recorded:
            baseline = gate.record(baseline, key, out["records"][key], when, "first run of %s" % key.split("|", 4)[-1])
        write_baseline(params["baseline_path"], baseline)
    out["recorded"] = recorded
    out["msg"] = message(out)
    del out["records"]
    return out, changed
