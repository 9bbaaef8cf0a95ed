# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one planned pass as ONE Slurm job and bring every side's result back to the controller.

Runs on the controller, connected to the Slurm submit host (delegate_to). One file goes there (the pass's
settings, node names and the hosts' slices, packed), one module call submits it (slurm_job op=submit), a
few calls per minute watch it (op=status: squeue/scontrol/sacct and the runners' progress files, printed
as the ssh launcher's progress line), one file comes back (op=collect: every host's side file). The sides
that did not come back (job cancelled, preempted, timed out, a node lost) are returned as ``no_result``
sides with the reason, so fabric_join names them like any failure. Decisions live in
module_utils/slurm/launcher.py; this file only moves files and calls modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import progress
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

display = Display()

ARGS = dict(
    slice_dir=dict(type="path", required=True),
    participants=dict(type="list", elements="str", required=True),
    node_names=dict(type="dict", default={}),
    settings=dict(type="dict", required=True),
    pass_dir=dict(type="str", required=True),
    label=dict(type="str", default="pass"),
    budget_s=dict(type="float", required=True),
    start_timeout=dict(type="float", default=600),
    runner=dict(type="str", default="/usr/local/libexec/ibtune-schedule"),
    job_name=dict(type="str", default="ibtune-pass"),
    partition=dict(type="str"),
    qos=dict(type="str"),
    account=dict(type="str"),
    reservation=dict(type="str"),
    exclusive=dict(type="bool", default=True),
    nice=dict(type="int"),
    time_limit=dict(type="str"),
    sbatch_args=dict(type="list", elements="str", default=[]),
    srun_args=dict(type="list", elements="str", default=[]),
    commands=dict(type="dict", default={}),
    poll_interval=dict(type="float", default=2),
    progress_interval=dict(type="float", default=10),
    dest=dict(type="path", required=True),
    keep_pass_dir=dict(type="bool", default=False),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = True
    _requires_connection = True

    def _job(self, args, task_vars, **module_args):
        module_args.setdefault("pass_dir", args["pass_dir"])
        module_args.setdefault("commands", args["commands"])
        res = self._execute_module(
            module_name="ibtune.fabric.slurm_job", module_args=module_args, task_vars=task_vars, tmp=None
        )
        if res.get("failed"):
            raise AnsibleActionFail(res.get("msg") or "slurm_job %s failed" % module_args.get("op"))
        return res

    def _bundle(self, args, local_dir):
        """The pass directory the nodes need (settings, node names, slices of the participants), packed."""
        stage = os.path.join(local_dir, "stage")
        os.makedirs(os.path.join(stage, sidefiles.SLICES))
        for host in args["participants"]:
            shutil.copy(os.path.join(args["slice_dir"], "%s.json" % host), os.path.join(stage, sidefiles.SLICES))
        names = dict((args["node_names"].get(h, h), h) for h in args["participants"])
        for name, doc in ((sidefiles.SETTINGS, args["settings"]), (sidefiles.NODES, names)):
            with open(os.path.join(stage, name), "w") as handle:
                json.dump(doc, handle, sort_keys=True)
        bundle = os.path.join(local_dir, "pass.tar.gz")
        sidefiles.pack(stage, bundle, [sidefiles.SETTINGS, sidefiles.NODES, sidefiles.SLICES])
        return bundle

    def _spec(self, args):
        spec = dict(
            (k, args[k])
            for k in (
                "runner",
                "job_name",
                "partition",
                "qos",
                "account",
                "reservation",
                "exclusive",
                "nice",
                "time_limit",
                "budget_s",
                "srun_args",
            )
        )
        spec["extra_args"] = args["sbatch_args"]
        spec["nodes"] = [args["node_names"].get(h, h) for h in args["participants"]]
        return spec

    def _wait(self, args, task_vars, job_id):
        """Watch the job until it ends (or cancel it); returns (job record, never_started sentence or None)."""
        submitted = time.monotonic()
        running_since = None
        next_line = 0.0
        last_text = None
        run_timeout = launcher.parse_duration_s(args["time_limit"]) if args["time_limit"] else args["budget_s"]
        run_timeout += launcher.START_MARGIN_S + 120
        while True:
            status = self._job(args, task_vars, op="status", job_id=job_id)
            job = status["job"]
            now = time.monotonic()
            if running_since is None and job.get("state") not in launcher.PENDING_STATES:
                running_since = now
            step = launcher.next_step(
                job,
                now - submitted,
                None if running_since is None else now - running_since,
                args["start_timeout"],
                run_timeout,
            )
            if now >= next_line or step == "done":
                next_line = now + args["progress_interval"]
                text = launcher.progress_text(job, progress.line(status["states"], args["label"]), args["label"])
                if text != last_text:
                    display.display(text)
                    last_text = text
            if step == "done":
                return job, None
            if step != "wait":
                self._job(args, task_vars, op="cancel", job_id=job_id)
                if step == "cancel_pending":
                    return self._settle(args, task_vars, job_id), launcher.never_started_text(job, now - submitted)
            time.sleep(args["poll_interval"])

    def _settle(self, args, task_vars, job_id, tries=30):
        """The record of a job we cancelled, once Slurm says it ended."""
        job = None
        for _try in range(tries):
            job = self._job(args, task_vars, op="status", job_id=job_id)["job"]
            if launcher.is_terminal(job):
                break
            time.sleep(args["poll_interval"])
        return job

    def _collect(self, args, task_vars, tmp):
        remote = self._connection._shell.join_path(tmp, "results.tar.gz")
        self._job(args, task_vars, op="collect", dest=remote)
        local = os.path.join(args["dest"], "results.tar.gz")
        if os.path.isdir(args["dest"]):
            shutil.rmtree(args["dest"])
        os.makedirs(args["dest"])
        self._connection.fetch_file(remote, local)
        sidefiles.unpack(local, args["dest"])
        os.unlink(local)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _valid, args = self.validate_argument_spec(argument_spec=ARGS)
        if self._play_context.check_mode:
            return dict(result, skipped=True, changed=False, msg="slurm_pass runs no job in check mode")
        local_dir = tempfile.mkdtemp(prefix="ibtune-slurm-pass-")
        tmp = self._make_tmp_path()
        job_id = None
        try:
            remote_bundle = self._connection._shell.join_path(tmp, "pass.tar.gz")
            self._transfer_file(self._bundle(args, local_dir), remote_bundle)
            self._fixup_perms2([tmp, remote_bundle])
            submitted = self._job(args, task_vars, op="submit", bundle=remote_bundle, spec=self._spec(args))
            job_id = submitted["job_id"]
            display.display("%s: submitted as Slurm job %s (%s)" % (args["label"], job_id, " ".join(submitted["argv"])))
            job, never_started = self._wait(args, task_vars, job_id)
            self._collect(args, task_vars, tmp)
            if not args["keep_pass_dir"]:
                self._job(args, task_vars, op="cleanup")
        except BaseException:
            if job_id is not None:  # interrupted or failed while the job may still run: it is ours, stop it
                try:
                    self._job(args, task_vars, op="cancel", job_id=job_id)
                except Exception:  # noqa: BLE001 - the original error is the one to report
                    pass
            raise
        finally:
            self._remove_tmp_path(tmp)
            shutil.rmtree(local_dir, ignore_errors=True)
        return dict(result, **self._result(args, job, never_started))

    def _result(self, args, job, never_started):
        results_dir = os.path.join(args["dest"], sidefiles.RESULTS)
        slices = sidefiles.read_slices(args["slice_dir"], args["participants"])
        done = sidefiles.read_done(results_dir)
        sides, missing = launcher.sides_of_pass(slices, sidefiles.read_sides(results_dir), job, done, never_started)
        by_host = dict((h, []) for h in args["participants"])
        for side in sides:
            by_host.setdefault(side["host"], []).append(side)
        return dict(
            changed=False,
            job_id=job.get("job_id"),
            job=job,
            sides_by_host=by_host,
            sides=len(sides),
            missing_sides=missing,
            results_dir=results_dir,
            checks=sidefiles.read_checks(results_dir),
            msg="%s: Slurm job %s %s, %d side(s), %d did not come back%s"
            % (
                args["label"],
                job.get("job_id"),
                job.get("state"),
                len(sides),
                missing,
                (" (%s)" % never_started) if never_started else "",
            ),
        )
