# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The schedule runner as a standalone program: one host's sides of a pass, outside Ansible.

Installed on the nodes as ``ibtune-schedule`` (role schedule_runner), it runs the SAME timing logic as
the perftest_schedule module (schedule.run_schedule): a Slurm job step runs it on every node of a pass,
a sweep runs it between jobs. It reads and writes the pass directory (sidefiles.py):

    ibtune-schedule --pass-dir DIR [--results-dir DIR] [--host NAME]

The host is ``--host``, else the Slurm node this step runs on (SLURMD_NODENAME, mapped to the inventory
name by nodes.json), else the short host name. Side results are appended to results/<host>.sides.jsonl
after every round, and the file is rewritten whole once the schedule has finished (a few table items the
controller reads in a sixth of the time: sidefiles.compact_side_file). SIGTERM/SIGINT/SIGHUP (scancel,
preemption, the time limit) stop every perftest it started and end it with 128 + the signal, after writing
results/<host>.done.json: what came back so far stays. Exit 0 when the schedule ran (failed sides are results,
not errors), 2 on bad input.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import signal
import socket
import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.host import process
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import schedule
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

EXIT_BAD_INPUT = 2
CHECK_TIMEOUT_S = 60.0
CHECK_OUTPUT_CHARS = 2000
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopped(Exception):
    """A signal asked the runner to stop (its number is args[0])."""


def _on_signal(signum, _frame):
    raise Stopped(signum)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="ibtune-schedule", description="Run this host's sides of a validation pass.")
    parser.add_argument("--pass-dir", required=True, help="the pass directory (settings.json, slices/)")
    parser.add_argument("--results-dir", help="where results go (default: PASS_DIR/results)")
    parser.add_argument("--host", help="the inventory name of this host (default: from SLURMD_NODENAME)")
    return parser.parse_args(argv)


def load_json(path, default=None):
    if default is not None and not os.path.exists(path):
        return default
    with open(path) as handle:
        return json.load(handle)


def host_name(given, nodes, environ):
    """The inventory name of this host: --host, else the Slurm node name mapped by nodes.json, else the
    short host name (mapped too)."""
    if given:
        return given
    node = environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    return nodes.get(node, node)


def run_checks(checks, clock=time.monotonic):
    """Run the quick checks (each {name, argv, timeout_s}) one after the other; a check that cannot
    start is a failed check with the reason, never a crash."""
    out = []
    for check in checks or []:
        started = clock()
        try:
            ran = process.run_once(list(check["argv"]), float(check.get("timeout_s") or CHECK_TIMEOUT_S))
        except OSError as exc:
            ran = {
                "rc": None,
                "stdout": "",
                "stderr": "cannot run %s: %s" % (check["argv"][0], exc),
                "timed_out": False,
            }
        text = (ran["stdout"] + ran["stderr"]).strip()
        out.append(
            {
                "check": check["name"],
                "rc": ran["rc"],
                "passed": ran["rc"] == 0 and not ran["timed_out"],
                "timed_out": ran["timed_out"],
                "output": text[-CHECK_OUTPUT_CHARS:],
                "elapsed_s": round(clock() - started, 3),
            }
        )
    return out


def write_atomic(path, doc):
    schedule.write_state(path, doc)


def run(args, environ=None):
    """The runner's work for parsed ``args``; returns the exit code."""
    environ = os.environ if environ is None else environ
    pass_dir = args.pass_dir
    results_dir = args.results_dir or os.path.join(pass_dir, sidefiles.RESULTS)
    settings = load_json(os.path.join(pass_dir, sidefiles.SETTINGS))
    host = host_name(args.host, load_json(os.path.join(pass_dir, sidefiles.NODES), {}), environ)
    sides = sidefiles.slice_sides(load_json(os.path.join(pass_dir, sidefiles.SLICES, "%s.json" % host), []))
    problems = schedule.check_sides(sides)
    if problems:
        raise ValueError("%s: %s" % (host, "; ".join(problems)))
    if not os.path.isdir(results_dir):
        os.makedirs(results_dir)
    sides_path = sidefiles.result_path(results_dir, host, sidefiles.SIDES_SUFFIX)
    done_path = sidefiles.result_path(results_dir, host, sidefiles.DONE_SUFFIX)
    started = time.time()
    done = {"host": host, "started": started, "sides_total": len(sides)}
    try:
        if settings.get("checks"):
            checks = run_checks(settings["checks"])
            write_atomic(sidefiles.result_path(results_dir, host, sidefiles.CHECKS_SUFFIX), checks)
        result = schedule.run_schedule(
            sides,
            settings,
            state_path=sidefiles.result_path(results_dir, host, sidefiles.STATE_SUFFIX),
            on_round=lambda results: sidefiles.append_sides(sides_path, results),
        )
        if os.path.exists(sides_path):
            try:
                sidefiles.compact_side_file(sides_path)
            except (IOError, OSError) as exc:  # the lines are whole: the controller reads them as they are
                done.update(compact_failed=str(exc))
    except Stopped as exc:
        done.update(stopped=signal.Signals(exc.args[0]).name, ended=time.time())
        write_atomic(done_path, done)
        return 128 + exc.args[0]
    done.update(
        finished=True,
        ended=time.time(),
        rounds=result["rounds"],
        failures=result["failures"],
        elapsed_s=result["elapsed_s"],
        round_seconds=result["round_seconds"],
    )
    write_atomic(done_path, done)
    return 0


def main(argv=None, environ=None):
    """Entry point of ibtune-schedule."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)
    try:
        return run(args, environ)
    except (ValueError, KeyError, IOError, OSError) as exc:
        sys.stderr.write("ibtune-schedule: %s\n" % exc)
        return EXIT_BAD_INPUT
