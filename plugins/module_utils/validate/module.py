# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the fabric_plan, fabric_join and perftest_schedule modules do, each as one function over its parameters
(the modules are glue: common/module.py respond() answers Ansible with the result, or the ModuleError's
sentence)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import signal

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join as join_utils
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import pairs as pairs_utils
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as plan_utils
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile, schedule, sidefiles
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import switches

# --- fabric_plan ----------------------------------------------------------------------------------------------


def _plan_result(p, check_mode):
    rounds = None
    if p["retest_from"]:
        first = resultfile.read_results(p["retest_from"], "retest_from %s" % p["retest_from"])  # a ValueError
        groups = switches.resolve(topology=p["topology"], group_var=p["groups"])
        rounds = pairs_utils.retest_plan(
            first, hosts=p["hosts"], exclude=p["exclude"], rails=p["rails"], groups=groups,
            min_peer_fraction=p["min_peer_fraction"],
        )  # fmt: skip
    gid = p["gid_index"]
    if gid in ("", "null"):
        gid = None
    elif gid not in (None, "auto"):
        gid = int(gid)
    plan = plan_utils.plan_pass(
        p["hosts"],
        p["rails"],
        p["addresses"],
        strategy=p["strategy"],
        pass_no=p["pass_number"],
        base_tcp_port=p["base_tcp_port"],
        rounds=rounds,
        random_rounds=p["random_rounds"],
        seed=p["seed"],
        groups=p["groups"],
        pairs=p["pairs"],
        expect_rails=p["expect_rails"] or None,
        gid_index=gid,
        topology=p["topology"],
    )
    participants = sorted(h for h, doc in plan["slices"].items() if sidefiles.slice_size(doc))
    plan_file = slice_dir = "%s/pass%d" % (p["dest"], p["pass_number"])
    if not check_mode:
        plan_file, slice_dir = plan_utils.write_plan(p["dest"], plan, p["hosts"], p["rails"], p["pass_number"])
    n_sides = sum(sidefiles.slice_size(doc) for doc in plan["slices"].values())
    extra = {}
    coverage = plan.get("coverage") if rounds is None else None
    if coverage is not None:
        extra = dict(
            uncovered_isls=coverage["uncovered_isls"],
            isl_coverage=dict((k, coverage[k]) for k in ("isls", "coverable_isls", "covered_isls")),
        )
    if p["topology"] is not None:
        # the fabric is hundreds of kB: it is not echoed back (invocation.module_args)
        extra["invocation"] = {"module_args": dict(p, topology="(the fabric's topology, not echoed)")}
    result = dict(
        changed=False,
        rounds=plan["rounds"],
        pairs=len(plan["pairs"]),
        sides=n_sides,
        host_failures=plan["host_failures"],
        untested=plan["untested"],
        participants=participants,
        plan_file=plan_file,
        slice_dir=slice_dir,
        estimate_s=plan_utils.estimate_s(plan["rounds"], p["run_s"]),
        budget_s=plan_utils.pass_budget_s(plan["rounds"], p["run_s"], p["connect_timeout"], p["slack"]),
        ideal_s=plan["rounds"] * p["run_s"],
        eta_msg=plan_utils.eta_sentence(plan["rounds"], p["run_s"]),
        msg="pass %d: %d round(s) of %s over %d host(s), %d pair(s), %d side(s)"
        % (
            p["pass_number"],
            plan["rounds"],
            "retests" if rounds is not None else p["strategy"],
            len(p["hosts"]),
            len(plan["pairs"]),
            n_sides,
        ),
        **extra,
    )
    if coverage is not None:
        result["msg"] += "; %d of %d directed inter-switch links covered, %d uncovered" % (
            coverage["covered_isls"],
            coverage["isls"],
            len(coverage["uncovered_isls"]),
        )
    return result


def run_fabric_plan(params, check_mode=False):
    """The fabric_plan result (see the module's RETURN): the pass's plan, written under dest unless check_mode."""
    try:
        return _plan_result(params, check_mode)
    except (ValueError, KeyError) as exc:
        raise ModuleError("fabric_plan: %s" % (exc,))


# --- fabric_join ----------------------------------------------------------------------------------------------

JOIN_SETTINGS = (
    "test",
    "size",
    "qps",
    "duration",
    "bidirectional",
    "min_gbps",
    "min_link_fraction",
    "expect_rate_gbps",
    "max_typical_us",
    "max_p99_us",
)


def _join_result(p, check_mode, warnings):
    # the plan file is 85 MB at 1024 hosts x 8 rails all_pairs (a dict per pair): decoded with the cyclic collector
    # paused, as the join runs (see common/memory.py; 2.7 -> 1.3-1.5 CPU s measured)
    with open(p["plan"]) as handle, paused_gc():
        plan = json.load(handle)
    settings = dict((k, p[k]) for k in JOIN_SETTINGS)
    side_files = sidefiles.iter_side_items(p["sides_dir"]) if p["sides_dir"] else ()
    counts, failed, refused = join_utils.join_written(
        plan["pairs"], p["sides"], plan["rails"], settings, None if check_mode else p["dest"], side_files=side_files
    )
    warnings.extend(refused[:20])
    failures = [
        "%s/%s<->%s/%s rail %s round %s: %s"
        % (r["server"], r["server_device"], r["client"], r["client_device"], r["rail"], r["round"], r["failure"])
        for r in failed[:20]
    ]
    return dict(
        changed=False,
        results_path=p["dest"],
        # not "results": Ansible reserves that key for loops, renames it and warns on every run
        result_count=counts["results"],
        failed_results=counts["failed"],
        failure_kinds=counts["failure_kinds"],
        failures=failures,
        refused=refused,
        msg="pass %s: %d pair result(s), %d failed%s"
        % (
            plan.get("pass"),
            counts["results"],
            counts["failed"],
            (" (%s)" % ", ".join("%s %d" % kv for kv in sorted(counts["failure_kinds"].items())))
            if counts["failed"]
            else "",
        ),
    )


def run_fabric_join(params, check_mode=False):
    """The fabric_join result (see the module's RETURN): the pass's sides joined into pair results, written to dest
    unless check_mode. The first 20 refused sides are the task's warnings, also when it then fails."""
    warnings = []
    try:
        result = _join_result(params, check_mode, warnings)
    except (ValueError, KeyError, IOError, OSError) as exc:
        return {"failed": True, "msg": "fabric_join: %s" % (exc,), "warnings": warnings}
    result["warnings"] = warnings
    return result


# --- perftest_schedule ----------------------------------------------------------------------------------------


class _Stopped(Exception):
    pass


def _on_signal(signum, frame):
    raise _Stopped(signum)


def run_perftest_schedule(params, check_mode=False):
    """The perftest_schedule result (see the module's RETURN): this host's sides run round by round. A signal
    (TERM, INT, HUP) stops it, and every perftest it started, with one sentence."""
    params = dict(params)
    problems = schedule.check_sides(params["sides"])
    if problems:
        raise ModuleError("perftest_schedule: %s." % "; ".join(problems))
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    try:
        result = schedule.run_schedule(params.pop("sides"), params, state_path=params["state_path"])
    except _Stopped as exc:
        raise ModuleError("perftest_schedule: stopped by signal %s; every perftest it started was stopped." % exc)
    except ValueError as exc:
        raise ModuleError("perftest_schedule: %s." % exc)
    result["msg"] = "%d round(s), %d side(s), %d failed, in %.1f s" % (
        result["rounds"],
        len(result["sides"]),
        result["failures"],
        result["elapsed_s"],
    )
    return dict(changed=False, **result)
