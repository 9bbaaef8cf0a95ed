# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sweeps between jobs: what a sweep takes, how it judges, what it does (pure; sweep_run.py executes).

A sweep (role fabric_sweep: a systemd timer on the Slurm controller runs ``ibtune-sweep``) takes IDLE nodes of
its partition, never more than ``max_share`` of it, through one low-priority, preemptible Slurm job: the quick
checks on every node (node health, a PHY snapshot where one is configured) and a short pair pass, within
``budget_s``. Its verdict goes into the history and the baseline, and acts through slurm_remediate's rules
(remediate.plan: our reason namespace, the max-drain guard, a systemic verdict drains nothing).

Nodes the validation or a sweep drained are on probation: a sweep takes them too (in a reservation of the
sweep's nodes, undrained for the job's time), and puts them back exactly as they were until they have passed
``undrain_after`` sweeps in a row since they were drained; then they stay in service. A sweep that did not
finish (preempted, cancelled, out of time, never started) judges nothing: a lost measurement is never a
reason to drain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as _remediate

VERSION = 1
REACTIONS = ("drain", "comment", "none")
CHECKS = ("pairs", "node_health", "phy")
RECENT_KEEP = 20  # outcomes kept per node
RUNS_KEEP = 50  # sweep runs kept in the history
ROUND_OVERHEAD_S = 2.0  # a healthy round: the test plus connecting and parsing
JOB_START_S = 30.0  # what a sweep keeps of its budget for the job to start and end

DEFAULTS = {
    "partition": "",
    "qos": "",
    "account": "",
    "nice": 10000,
    "exclusive": True,
    "max_share": 0.25,
    "budget_s": 600,
    "start_timeout_s": 120,
    "strategy": "random",
    "rounds": 3,
    "test": "write",
    "size": "65536",
    "duration_s": 5,
    "connect_timeout": 20,
    "slack": 10,
    "executable": "",
    "rails": [],
    "addresses": {},
    "min_link_fraction": 0.9,
    "min_gbps": None,
    "expect_rate_gbps": None,
    "min_peer_fraction": 0.9,
    # the quick checks, run on every node before the pairs: node_health's program (empty: none), a PHY snapshot
    # command where one is available (an argument list; empty: none), and what each kind of failure does
    "node_health": "",
    "phy": [],
    "checks_timeout_s": 30,
    "reactions": {"pairs": "drain", "node_health": "drain", "phy": "comment"},
    "undrain_after": 3,
    "stale_after_s": 86400,
    "max_drain_fraction": 0.1,
    "max_drain": -1,
    "shared_dir": "",
    "runner": "/usr/local/libexec/ibtune-schedule",
    "state_dir": "/var/lib/ibtune-sweep",
    "textfile": "",
    "user": "root",
    "commands": {},
    "srun_args": [],
    "sbatch_args": [],
}


# --- configuration ----------------------------------------------------------------------------------


def _problems(cfg):
    out = []
    if not 0 < float(cfg["max_share"]) <= 1:
        out.append("max_share=%r must be above 0 and at most 1 (0.25 = a quarter of the partition)" % cfg["max_share"])
    if not str(cfg["shared_dir"]).startswith("/"):
        out.append(
            "shared_dir=%r must be an absolute directory every node sees (the shared filesystem)" % cfg["shared_dir"]
        )
    if not cfg["partition"]:
        out.append("partition is empty: name the partition whose idle nodes a sweep may take")
    if not cfg["rails"]:
        out.append("rails is empty: list the nodes' rails ({rail, device, port, rate_gbps})")
    if int(cfg["undrain_after"]) < 1:
        out.append("undrain_after=%r must be 1 or more sweeps" % cfg["undrain_after"])
    for name, reaction in sorted((cfg["reactions"] or {}).items()):
        if name not in CHECKS:
            out.append("reactions names %r: the checks are %s" % (name, ", ".join(CHECKS)))
        elif reaction not in REACTIONS:
            out.append("reactions.%s is %r: use one of %s" % (name, reaction, ", ".join(REACTIONS)))
    return out


def _checks(cfg):
    """The quick checks the runner runs on every node ({name, argv, timeout_s, reaction})."""
    out = []
    if cfg["node_health"]:
        out.append({"name": "node_health", "argv": [cfg["node_health"], "--all", "--no-drain"]})
    if cfg["phy"]:
        out.append({"name": "phy", "argv": list(cfg["phy"])})
    for check in out:
        check.update(timeout_s=float(cfg["checks_timeout_s"]), reaction=cfg["reactions"].get(check["name"], "drain"))
    return out


def load_config(doc):
    """The sweep's settings: DEFAULTS overlaid with ``doc``; ValueError naming every bad key."""
    unknown = sorted(set(doc or {}) - set(DEFAULTS))
    cfg = dict(DEFAULTS)
    cfg.update(doc or {})
    cfg["reactions"] = dict(DEFAULTS["reactions"], **(cfg["reactions"] or {}))
    problems = ["unknown key %s (known: %s)" % (k, ", ".join(sorted(DEFAULTS))) for k in unknown] + _problems(cfg)
    if problems:
        raise ValueError("the sweep's configuration: " + "; ".join(problems))
    cfg["checks"] = _checks(cfg)
    cfg["pairs_reaction"] = cfg["reactions"]["pairs"]
    return cfg


def rounds_that_fit(cfg):
    """Rounds of the pair pass within the budget (the job's start and the checks kept aside); ValueError when
    not even one fits."""
    checks_s = sum(float(c["timeout_s"]) for c in cfg["checks"])
    per_round = float(cfg["duration_s"]) + ROUND_OVERHEAD_S
    room = float(cfg["budget_s"]) - JOB_START_S - checks_s
    fit = int(room // per_round) if room > 0 else 0
    if fit < 1:
        raise ValueError(
            "budget_s=%s leaves no room for one round of %s s tests after %d s for the job's start and %d s of checks: "
            "raise budget_s or lower duration_s" % (cfg["budget_s"], cfg["duration_s"], JOB_START_S, checks_s)
        )
    return min(int(cfg["rounds"]), fit)


def time_limit(cfg):
    """sbatch --time of a sweep: its budget in whole minutes, rounded DOWN (a sweep never holds nodes longer
    than its budget), at least one minute."""
    return _slurm_args.time_text(max(1, int(float(cfg["budget_s"]) // 60)))


# --- the history ---------------------------------------------------------------------------------------


def empty_history():
    return {"version": VERSION, "nodes": {}, "runs": []}


def load_history(text):
    """The history document (a missing or empty file is an empty history)."""
    if not (text or "").strip():
        return empty_history()
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError("not a sweep history of version %d" % VERSION)
    doc.setdefault("nodes", {})
    doc.setdefault("runs", [])
    return doc


def last_tested(history, host):
    recent = (history["nodes"].get(host) or {}).get("recent") or []
    judged = [ts for ts, outcome in recent if outcome in ("pass", "fail")]
    return judged[-1] if judged else None


def passes_since(history, host, since):
    """Passing sweeps in a row, the latest ones, after ``since`` (epoch seconds; None: all)."""
    count = 0
    for ts, outcome in reversed((history["nodes"].get(host) or {}).get("recent") or []):
        if since is not None and ts <= since:
            break
        if outcome == "pass":
            count += 1
        elif outcome == "fail":
            break
    return count


def record(history, outcomes, now, run):
    """History with this sweep's ``outcomes`` ({host: {passed, failures}} or {host: None} when not judged) and
    its ``run`` summary appended."""
    for host, outcome in sorted(outcomes.items()):
        entry = history["nodes"].setdefault(host, {"recent": []})
        word = "incomplete" if outcome is None else ("pass" if outcome["passed"] else "fail")
        entry["recent"] = (entry.get("recent") or [])[-(RECENT_KEEP - 1) :] + [[now, word]]
        if outcome is not None and not outcome["passed"]:
            entry["last_failure"] = "; ".join(f["reason"] for f in outcome["failures"])
        if outcome is not None and outcome["passed"]:
            entry["last_pass"] = now
    history["runs"] = history["runs"][-(RUNS_KEEP - 1) :] + [run]
    return history


# --- what a sweep takes ---------------------------------------------------------------------------------


def _drained_at(node):
    """Epoch seconds of the node's reason ([user@2026-12-01T07:42:25], slurmctld's local time), or None."""
    try:
        return time.mktime(time.strptime(node["reason_time"], "%Y-%m-%dT%H:%M:%S"))
    except (TypeError, ValueError):
        return None


def on_probation(node):
    """A node our validation or a sweep drained (slurm_remediate's ``validation`` source: never the health check's
    drains, which the health check itself lifts) and that holds no job (IDLE+DRAIN)."""
    return (
        node["state"] == "IDLE"
        and "DRAIN" in node["flags"]
        and _remediate.is_ours(node.get("reason"), source="validation")
    )


def is_idle(node):
    """IDLE and nothing else: no job, no drain, no reservation, no maintenance, responding."""
    return node["state"] == "IDLE" and not node["flags"] and not _remediate.is_held(node)


def pick(nodes, history, cfg):
    """{take, probation, limit, size, why}: the idle nodes (stalest first) and nodes on probation this sweep takes,
    at most ``max_share`` of the partition; ``why`` says why it takes none."""
    members = [n for n in nodes if cfg["partition"] in n["partitions"]]
    limit = int(float(cfg["max_share"]) * len(members) + 1e-9)
    probation = sorted(n["name"] for n in members if on_probation(n))[:limit]
    idle = sorted((n["name"] for n in members if is_idle(n)), key=lambda h: (last_tested(history, h) or 0, h))
    take = idle[: max(0, limit - len(probation))]
    out = {"take": take, "probation": probation, "limit": limit, "size": len(members), "why": None}
    if len(take) + len(probation) < 2:
        out["why"] = (
            "%d idle node(s) and %d on probation in partition %s, at most %d of its %d nodes at once (max_share %s): "
            "a pair needs two" % (len(idle), len(probation), cfg["partition"], limit, len(members), cfg["max_share"])
        )
        out["take"], out["probation"] = [], []
    return out


# --- the verdict --------------------------------------------------------------------------------------------


def _pair_failures(report, pairs_reaction):
    """{host: (reason, reaction)} from the report: the hosts the verdict blames take ``pairs_reaction``, a failed
    host it does not blame (untested, behind a switch fault) is a failure that does nothing (reaction none)."""
    blamed = _remediate.verdict_from_report(report)["failed"]
    out = dict((host, (reason, pairs_reaction)) for host, reason in blamed.items())
    for item in report.get("failed_hosts") or []:
        host = item.get("host") if isinstance(item, dict) else item
        if host and host not in out:
            out[host] = ((item.get("reason") if isinstance(item, dict) else None) or "not validated", "none")
    return out


def _check_failures(results, reactions):
    out = []
    for check in results or []:
        if not check.get("passed"):
            text = (check.get("output") or "rc %s" % check.get("rc")).strip().splitlines()
            out.append(
                {
                    "check": check["check"],
                    "reason": "%s: %s" % (check["check"], text[0] if text else "failed"),
                    "reaction": reactions.get(check["check"], "drain"),
                }
            )
    return out


def outcomes(hosts, report, checks, cfg):
    """{host: {passed, failures: [{check, reason, reaction}]}} from the pass's report (its verdict, through
    slurm_remediate's reading of it) and the quick checks ({host: [check result]})."""
    reactions = dict((c["name"], c.get("reaction", "drain")) for c in cfg["checks"])
    pairs = _pair_failures(report, cfg["pairs_reaction"])
    out = {}
    for host in hosts:
        failures = []
        if host in pairs:
            failures.append({"check": "pairs", "reason": pairs[host][0], "reaction": pairs[host][1]})
        failures.extend(_check_failures((checks or {}).get(host), reactions))
        out[host] = {"passed": not failures, "failures": failures}
    return out


def comment_argv(node, text, scontrol="scontrol"):
    return [scontrol, "update", "NodeName=%s" % node, "Comment=%s" % " ".join(text.split())[:250]]


def _drain_verdict(outcome_of, report):
    failed = {}
    for host, outcome in sorted(outcome_of.items()):
        drains = [f["reason"] for f in outcome["failures"] if f["reaction"] == "drain"]
        if drains:
            failed[host] = "sweep: " + "; ".join(drains)
    return {"failed": failed, "passed": [], "expected": sorted(outcome_of), "systemic": report.get("systemic")}


def actions(nodes_now, probation_before, outcome_of, history, report, cfg, today):
    """What the sweep does now, as data: {remediate: remediate.plan's result, comments: [...], restore: [...],
    resumed: [...]}.

    ``nodes_now``: the nodes as Slurm shows them after the job (probation nodes are undrained then);
    ``probation_before``: {node: its node record before the sweep undrained it}.
    """
    scontrol = cfg["commands"].get("scontrol") or "scontrol"
    plan = _remediate.plan(
        nodes_now,
        _drain_verdict(outcome_of, report),
        today,
        partition=cfg["partition"],
        max_drain_fraction=float(cfg["max_drain_fraction"]),
        max_drain=None if int(cfg["max_drain"]) < 0 else int(cfg["max_drain"]),
        scontrol=scontrol,
    )
    drained_now = set(a["node"] for a in plan["actions"] if a["action"] == "drain")
    comments = [
        {
            "node": host,
            "argv": comment_argv(
                host,
                "ibtune sweep: " + "; ".join(f["reason"] for f in o["failures"] if f["reaction"] == "comment"),
                scontrol,
            ),
        }
        for host, o in sorted(outcome_of.items())
        if any(f["reaction"] == "comment" for f in o["failures"])
    ]
    restore, resumed = [], []
    for host, before in sorted(probation_before.items()):
        outcome = outcome_of.get(host)
        if host in drained_now:
            continue  # drained again, with this sweep's reason
        if (
            outcome is not None
            and outcome["passed"]
            and passes_since(history, host, _drained_at(before)) >= int(cfg["undrain_after"])
        ):
            resumed.append(host)
            continue
        restore.append({"node": host, "argv": _remediate.drain_argv(host, before["reason"], scontrol)})
    return {"remediate": plan, "comments": comments, "restore": restore, "resumed": resumed}


def restore_all(probation_before, cfg):
    """Every probation node drained again exactly as it was (a sweep that judged nothing)."""
    scontrol = cfg["commands"].get("scontrol") or "scontrol"
    return [
        {"node": h, "argv": _remediate.drain_argv(h, n["reason"], scontrol)}
        for h, n in sorted(probation_before.items())
    ]


# --- Prometheus -------------------------------------------------------------------------------------------


def _label(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def stale_hosts(history, hosts, now, stale_after_s):
    """Hosts whose last judged sweep is older than ``stale_after_s`` (or that no sweep ever judged)."""
    return [h for h in sorted(hosts) if (last_tested(history, h) or 0) < now - float(stale_after_s)]


def prom_text(history, hosts, now, stale_after_s, run):
    """The sweep's textfile for node_exporter: per node its last judged result, when, whether it is stale, its
    passing streak; per run what it took and how it ended."""
    stale = set(stale_hosts(history, hosts, now, stale_after_s))
    lines = [
        "# HELP ibtune_sweep_last_run_timestamp_seconds When the last sweep ended.",
        "# TYPE ibtune_sweep_last_run_timestamp_seconds gauge",
        "ibtune_sweep_last_run_timestamp_seconds %d" % int(now),
        "# HELP ibtune_sweep_last_run_nodes Nodes the last sweep took.",
        "# TYPE ibtune_sweep_last_run_nodes gauge",
        'ibtune_sweep_last_run_nodes{outcome="%s"} %d' % (_label(run["outcome"]), len(run.get("nodes") or [])),
        "# HELP ibtune_sweep_node_passed 1 when the node's last judged sweep passed, 0 when it failed.",
        "# TYPE ibtune_sweep_node_passed gauge",
    ]
    metrics = {"passed": [], "tested": [], "stale": [], "streak": []}
    for host in sorted(hosts):
        recent = (history["nodes"].get(host) or {}).get("recent") or []
        judged = [o for _ts, o in recent if o in ("pass", "fail")]
        label = 'host="%s"' % _label(host)
        if judged:
            metrics["passed"].append("ibtune_sweep_node_passed{%s} %d" % (label, 1 if judged[-1] == "pass" else 0))
            metrics["tested"].append(
                "ibtune_sweep_node_last_tested_timestamp_seconds{%s} %d" % (label, int(last_tested(history, host)))
            )
        metrics["stale"].append("ibtune_sweep_node_stale{%s} %d" % (label, 1 if host in stale else 0))
        metrics["streak"].append("ibtune_sweep_node_passing_streak{%s} %d" % (label, passes_since(history, host, None)))
    lines += metrics["passed"]
    lines += [
        "# HELP ibtune_sweep_node_last_tested_timestamp_seconds When a sweep last judged the node.",
        "# TYPE ibtune_sweep_node_last_tested_timestamp_seconds gauge",
    ] + metrics["tested"]
    lines += [
        "# HELP ibtune_sweep_node_stale 1 when no sweep judged the node within the validity window.",
        "# TYPE ibtune_sweep_node_stale gauge",
    ] + metrics["stale"]
    lines += [
        "# HELP ibtune_sweep_node_passing_streak Passing sweeps in a row, the latest ones.",
        "# TYPE ibtune_sweep_node_passing_streak gauge",
    ] + metrics["streak"]
    return "\n".join(lines) + "\n"
