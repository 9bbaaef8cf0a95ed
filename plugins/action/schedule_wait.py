# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for a host's perftest_schedule job and print the pass's progress on the controller.

One task per host per pass, whatever the number of rounds: it polls the async job (the same way
ansible.builtin.async_status does) and, every ``progress_interval`` seconds, reads the schedule's
state file, keeps it in a controller-side progress directory shared by all hosts of the play, and
(on the first host only) prints one line for the whole pass: "pass 1: round 12/63, 2 sides failing,
ETA 9 min".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.ibtune.fabric.plugins.module_utils.common import files
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import progress
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

display = Display()


# what the async status carries about the job itself, not about the schedule: dropped from the task's result
JOB_KEYS = (
    "invocation",
    "ansible_job_id",
    "results_file",
    "started",
    "finished",
    "stdout",
    "stderr",
    "stdout_lines",
    "stderr_lines",
    "erased",
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def _job_status(self, jid, task_vars):
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        return self._execute_module(
            module_name="ansible.legacy.async_status",
            module_args={"jid": jid, "mode": "status", "_async_dir": async_dir},
            task_vars=task_vars,
        )

    def _cleanup(self, jid, task_vars):
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        self._execute_module(
            module_name="ansible.legacy.async_status",
            module_args={"jid": jid, "mode": "cleanup", "_async_dir": async_dir},
            task_vars=task_vars,
        )

    def _read_state(self, path, task_vars):
        res = self._execute_module(module_name="ansible.legacy.slurp", module_args={"src": path}, task_vars=task_vars)
        if res.get("failed") or "content" not in res:
            return None
        try:
            return json.loads(base64.b64decode(res["content"]).decode("utf-8"))
        except ValueError:
            return None

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _valid, args = self.validate_argument_spec(
            argument_spec=dict(
                jid=dict(type="str", required=True),
                state_path=dict(type="str"),
                progress_dir=dict(type="path"),
                label=dict(type="str", default="pass"),
                timeout=dict(type="float", required=True),
                poll_interval=dict(type="float", default=2),
                progress_interval=dict(type="float", default=10),
                announce=dict(type="bool", default=False),
                hosts=dict(type="int"),
                sides_dir=dict(type="path"),
            )
        )
        host = task_vars.get("inventory_hostname")
        deadline = time.monotonic() + args["timeout"]
        next_progress = time.monotonic() + args["progress_interval"]
        last_line = None
        while True:
            status = self._job_status(args["jid"], task_vars)
            if status.get("finished"):
                self._cleanup(args["jid"], task_vars)
                break
            if status.get("failed") and not status.get("started", True):
                break
            now = time.monotonic()
            if now >= deadline:
                status = {
                    "failed": True,
                    "msg": "%s: the schedule did not finish within %.0f s (the pass's budget)"
                    % (host, args["timeout"]),
                }
                break
            if args["state_path"] and args["progress_dir"] and now >= next_progress:
                next_progress = now + args["progress_interval"]
                last_line = self._progress(args, host, task_vars, last_line)
            time.sleep(args["poll_interval"])
        self._finish(status, args, host)
        result.update(status)
        result["changed"] = False
        return result

    def _progress(self, args, host, task_vars, last_line):
        """Keep this host's schedule state for the others and, on the announcing host, print the pass's progress
        line when it changed; returns the last line printed."""
        state = self._read_state(args["state_path"], task_vars)
        if state is not None:
            self._keep(args["progress_dir"], host, state)
        if not args["announce"]:
            return last_line
        text = progress.line(self._gather(args["progress_dir"]), args["label"], args["hosts"])
        if text and text != last_line:
            display.display(text)
            return text
        return last_line

    @staticmethod
    def _finish(status, args, host):
        """The async status as this task's result: the job's bookkeeping dropped, the sides written to files."""
        for key in JOB_KEYS:
            status.pop(key, None)
        if args["sides_dir"] and isinstance(status.get("sides"), list):
            # the join reads the hosts' side files (fabric_join sides_dir): the sides never travel as a task
            # result, a host fact and the join's module arguments (which Ansible would validate and echo back)
            sides = status.pop("sides")
            sidefiles.write_sides(sidefiles.result_path(args["sides_dir"], host, sidefiles.SIDES_SUFFIX), sides)
            status["sides_written"] = len(sides)

    @staticmethod
    def _keep(directory, host, state):
        files.write_json(os.path.join(directory, "%s.json" % host), state)

    @staticmethod
    def _gather(directory):
        states = {}
        try:
            names = os.listdir(directory)
        except OSError:
            return states
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                with open(os.path.join(directory, name)) as handle:
                    states[name[: -len(".json")]] = json.load(handle)
            except (IOError, OSError, ValueError):
                continue
        return states
