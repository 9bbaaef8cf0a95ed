# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``ibtune-sweep``: one sweep between jobs, run by role fabric_sweep's systemd timer on the Slurm controller.

The decisions are sweep.py's, the pass is the validation's own (validate/plan.py, the schedule runner on the
nodes through ONE Slurm job: launcher.py, validate/join.py) and the verdict is fabric_report's
(report/module.run: report files, the baseline); this module only runs the commands and moves the files, in
this order: lock, read the nodes, pick, [reserve and undrain the probation nodes], submit, wait, judge,
record, act, [drain the probation nodes again that have not earned their return, end the reservation],
write the textfile. Everything it started or changed is undone in a ``finally``: the job (scancel), the
reservation, the probation nodes' drain, the pass directory.

    ibtune-sweep [--config /etc/ibtune-sweep.json] [--check]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args
from ansible_collections.ibtune.fabric.plugins.module_utils.report import module as _report
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher as _launcher
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as _remediate
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import sweep as _sweep
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join as _join
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import pairs as _pairs
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as _plan
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles as _sidefiles

DEFAULT_CONFIG = "/etc/ibtune-sweep.json"
POLL_S = 1.0


def run_command(argv):
    """(rc, stdout, stderr) of argv (an argument list; no shell)."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


class SweepError(Exception):
    """The sweep stops here; the message is one sentence."""


class Sweep(object):
    """One sweep; ``run`` runs a command, ``clock``/``sleep`` keep time (injected for tests)."""

    def __init__(self, cfg, run=run_command, clock=time.time, sleep=time.sleep, log=None):
        self.cfg = cfg
        self.run = run
        self.clock = clock
        self.sleep = sleep
        self.log = log or (lambda text: sys.stdout.write(text + "\n"))
        self.scontrol = cfg["commands"].get("scontrol") or "scontrol"
        self.state_dir = cfg["state_dir"]
        self.reservation = None
        self.probation_before = {}
        self.job_id = None
        self.pass_dir = None

    # -- Slurm ------------------------------------------------------------------------------------------

    def _must(self, argv):
        rc, out, err = self.run(argv)
        if rc != 0:
            raise SweepError("%s failed: %s" % (" ".join(argv[:3]), (err or out).strip() or "rc %d" % rc))
        return out

    def nodes(self):
        return _remediate.parse_show_node(self._must([self.scontrol, "show", "node", "--oneliner"]))

    def _reserve(self, names, now):
        name = "ibtune-sweep-%d" % int(now)
        minutes = max(1, int(float(self.cfg["budget_s"]) // 60) + 1)
        self._must(
            [
                self.scontrol,
                "create",
                "reservation",
                "ReservationName=%s" % name,
                "StartTime=now",
                "Duration=%d" % minutes,
                "Nodes=%s" % _slurm_args.compress_hostlist(names),
                "Users=%s" % self.cfg["user"],
            ]
        )
        self.reservation = name

    def _undrain_probation(self, nodes, names):
        by_name = dict((n["name"], n) for n in nodes)
        for host in names:
            self._must(_remediate.resume_argv(host, self.scontrol))
            self.probation_before[host] = by_name[host]

    # -- the pass -------------------------------------------------------------------------------------

    def _settings(self):
        cfg = self.cfg
        return {
            "test": cfg["test"],
            "size": cfg["size"],
            "duration": int(cfg["duration_s"]),
            "connect_timeout": float(cfg["connect_timeout"]),
            "slack": float(cfg["slack"]),
            "executable": cfg["executable"] or None,
            "checks": [dict((k, c[k]) for k in ("name", "argv", "timeout_s") if k in c) for c in cfg["checks"]],
        }

    def _write_pass(self, hosts, now):
        cfg = self.cfg
        rails = dict((h, [dict(r) for r in cfg["rails"]]) for h in hosts)
        addresses = dict((h, cfg["addresses"].get(h, h)) for h in hosts)
        rounds = _pairs.pair_rounds(
            hosts, strategy=cfg["strategy"], rounds=_sweep.rounds_that_fit(cfg), seed=str(int(now))
        )
        plan = _plan.plan_pass(hosts, rails, addresses, rounds=rounds[: _sweep.rounds_that_fit(cfg)])
        self.pass_dir = os.path.join(cfg["shared_dir"], "sweep-%d" % int(now), "pass1")
        _sidefiles.fresh_pass_dir(self.pass_dir)
        for host, sides in plan["slices"].items():
            _plan.write_json(os.path.join(self.pass_dir, _sidefiles.SLICES, "%s.json" % host), sides)
        _plan.write_json(os.path.join(self.pass_dir, _sidefiles.SETTINGS), self._settings())
        return plan, rails

    def _submit(self, hosts):
        cfg = self.cfg
        spec = {
            "pass_dir": self.pass_dir,
            "nodes": hosts,
            "runner": cfg["runner"],
            "job_name": "ibtune-sweep",
            "partition": cfg["partition"],
            "qos": cfg["qos"],
            "account": cfg["account"],
            "nice": cfg["nice"],
            "exclusive": cfg["exclusive"],
            "reservation": self.reservation,
            "time_limit": _sweep.time_limit(cfg),
            "extra_args": cfg["sbatch_args"],
            "srun_args": cfg["srun_args"],
            "sbatch": cfg["commands"].get("sbatch"),
            "srun": cfg["commands"].get("srun"),
        }
        self.job_id = _launcher.stage_and_submit(spec, self.run)["job_id"]
        self.log("sweep: Slurm job %s on %s" % (self.job_id, _slurm_args.compress_hostlist(hosts)))

    def _wait(self):
        started = self.clock()
        running_since = None
        run_timeout = float(self.cfg["budget_s"]) + 120
        while True:
            job = _launcher.query(self.run, self.job_id, self.cfg["commands"])
            now = self.clock()
            if running_since is None and job.get("state") not in _launcher.PENDING_STATES:
                running_since = now
            step = _launcher.next_step(
                job,
                now - started,
                None if running_since is None else now - running_since,
                float(self.cfg["start_timeout_s"]),
                run_timeout,
            )
            if step == "done":
                return job
            if step != "wait":
                _launcher.cancel(self.run, self.job_id, self.cfg["commands"])
                return dict(job, state="CANCELLED", never_started=step == "cancel_pending")
            self.sleep(POLL_S)

    # -- the verdict ----------------------------------------------------------------------------------

    def _judge(self, plan, rails, hosts, now):
        results_dir = os.path.join(self.pass_dir, _sidefiles.RESULTS)
        back = [s for sides in _sidefiles.read_sides(results_dir).values() for s in sides]
        settings = {
            "test": self.cfg["test"],
            "duration": self.cfg["duration_s"],
            "min_link_fraction": self.cfg["min_link_fraction"],
            "min_gbps": self.cfg["min_gbps"],
            "expect_rate_gbps": self.cfg["expect_rate_gbps"],
        }
        results = _join.join_pass(plan["pairs"], back, rails, settings)
        report, _failed, _warnings = _report.run(self._report_params(results, hosts, now))
        return report, _sidefiles.read_checks(results_dir)

    def _report_params(self, results, hosts, now):
        return {
            "results": results,
            "results_paths": [],
            "counter_violations": [],
            "saturated": [],
            "baseline_path": os.path.join(self.state_dir, "baseline.json"),
            "update_baseline": True,
            "baseline_keep": 20,
            "regression_tolerance": 0.1,
            "min_gbps": self.cfg["min_gbps"],
            "run_id": "sweep-%d" % int(now),
            "expected_hosts": hosts,
            "host_failures": [],
            "min_hosts": 2,
            "min_peer_fraction": self.cfg["min_peer_fraction"],
            "line_rate_gbps": None,
            "topology": None,
            "dest": os.path.join(self.state_dir, "report"),
            "fail_on_failure": False,
        }

    # -- acting -----------------------------------------------------------------------------------------

    def _act(self, decided):
        plan = decided["remediate"]
        if plan["refused"]:
            self.log("sweep: %s" % plan["refused"])
        for action in plan["actions"] + decided["comments"] + decided["restore"]:
            self._must(action["argv"])
        for host in decided["resumed"]:
            self.log("sweep: %s back in service after %s passing sweeps" % (host, self.cfg["undrain_after"]))
        self.probation_before = {}  # each one restored or back in service: nothing left to undo

    def _undo(self):
        """Whatever is still ours: the job, the probation drains, the reservation, the pass directory."""
        if self.job_id is not None:
            job = _launcher.query(self.run, self.job_id, self.cfg["commands"])
            if not _launcher.is_terminal(job):
                _launcher.cancel(self.run, self.job_id, self.cfg["commands"])
        for item in _sweep.restore_all(self.probation_before, self.cfg):
            self.run(item["argv"])
        if self.reservation:
            self.run([self.scontrol, "delete", "ReservationName=%s" % self.reservation])
        if self.pass_dir:
            _sidefiles.remove_pass_dir(self.pass_dir)

    # -- one sweep --------------------------------------------------------------------------------------

    def sweep(self, history):
        """One sweep; returns its run summary (also recorded in ``history``)."""
        now = self.clock()
        nodes = self.nodes()
        choice = _sweep.pick(nodes, history, self.cfg)
        run = {
            "started": now,
            "nodes": [],
            "probation": choice["probation"],
            "limit": choice["limit"],
            "time_limit": _sweep.time_limit(self.cfg),
            "members": sorted(n["name"] for n in nodes if self.cfg["partition"] in n["partitions"]),
        }
        if choice["why"]:
            self.log("sweep: nothing to do: %s" % choice["why"])
            return dict(run, outcome="none", why=choice["why"], ended=self.clock())
        hosts = sorted(choice["take"] + choice["probation"])
        run["nodes"] = hosts
        try:
            if choice["probation"]:
                self._reserve(hosts, now)
                self._undrain_probation(nodes, choice["probation"])
            plan, rails = self._write_pass(hosts, now)
            self._submit(hosts)
            job = self._wait()
            run.update(job_id=self.job_id, job_state=job.get("state"), preempted=bool(job.get("preempted_at")))
            if job.get("state") != "COMPLETED" or job.get("preempted_at"):
                run.update(outcome="incomplete", why=_launcher.job_words(job))
                _sweep.record(history, dict((h, None) for h in hosts), self.clock(), run)
                return run
            report, checks = self._judge(plan, rails, hosts, now)
            outcome_of = _sweep.outcomes(hosts, report, checks, self.cfg)
            run.update(outcome="judged", failed=sorted(h for h, o in outcome_of.items() if not o["passed"]))
            _sweep.record(history, outcome_of, self.clock(), run)
            decided = _sweep.actions(
                self.nodes(),
                self.probation_before,
                outcome_of,
                history,
                report,
                self.cfg,
                time.strftime("%Y-%m-%d", time.gmtime(now)),
            )
            self._act(decided)
            run.update(
                resumed=decided["resumed"],
                drained=[a["node"] for a in decided["remediate"]["actions"]],
                refused=decided["remediate"]["refused"],
            )
            return run
        finally:
            self._undo()
            run["ended"] = self.clock()


# --- files and the entry point ---------------------------------------------------------------------------


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return ""


def write_text(path, text):
    """Atomically, with the mode and the directory (when missing) open() and os.makedirs would give."""
    _files.write_text(path, text, mode=None, dir_mode=0o777)


def run_once(cfg, sweep_cls=Sweep):
    """Lock, sweep, save the history and the textfile; returns the run summary (None when another sweep runs)."""
    if not os.path.isdir(cfg["state_dir"]):
        os.makedirs(cfg["state_dir"])
    with open(os.path.join(cfg["state_dir"], "sweep.lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        history_path = os.path.join(cfg["state_dir"], "history.json")
        history = _sweep.load_history(_read(history_path))
        sweep = sweep_cls(cfg)
        run = sweep.sweep(history)
        if run["outcome"] == "none":
            history["runs"] = history["runs"][-(_sweep.RUNS_KEEP - 1) :] + [run]
        write_text(history_path, json.dumps(history, sort_keys=True, indent=1) + "\n")
        if cfg["textfile"]:
            hosts = set(history["nodes"]) | set(run.get("members") or [])
            write_text(cfg["textfile"], _sweep.prom_text(history, hosts, run["ended"], cfg["stale_after_s"], run))
        return run


def main(argv=None):
    """Entry point of ibtune-sweep: exit 0 after a sweep (whatever it found), 1 when it could not run."""
    parser = argparse.ArgumentParser(prog="ibtune-sweep", description="One validation sweep of idle Slurm nodes.")
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    parser.add_argument("--check", action="store_true", help="check the configuration and the budget, sweep nothing")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        with open(args.config) as handle:
            cfg = _sweep.load_config(json.load(handle))
        rounds = _sweep.rounds_that_fit(cfg)
        if args.check:
            sys.stdout.write(
                "ibtune-sweep: configuration OK: up to %d round(s) of %s s tests, %d quick check(s), within %s s "
                "(sbatch --time=%s)\n"
                % (rounds, cfg["duration_s"], len(cfg["checks"]), cfg["budget_s"], _sweep.time_limit(cfg))
            )
            return 0
        run = run_once(cfg)
    except (SweepError, _launcher.SlurmError, _report.ReportError, ValueError, IOError, OSError) as exc:
        sys.stderr.write("ibtune-sweep: %s\n" % exc)
        return 1
    if run is None:
        sys.stdout.write("ibtune-sweep: another sweep holds the lock; nothing done\n")
        return 0
    sys.stdout.write("ibtune-sweep: %s\n" % json.dumps(run, sort_keys=True))
    return 0
