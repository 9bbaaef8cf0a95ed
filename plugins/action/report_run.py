# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ibtune.fabric.report_run: this run's report folder (module_utils/report/runs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.ibtune.fabric.plugins.module_utils.report import runs


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    ARGUMENT_SPEC = dict(
        base=dict(type="path", required=True),
        run_id=dict(type="str", default=""),
        keep=dict(type="int", default=20),
        variable=dict(type="str", default="ibtune_report_dir"),
    )

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)[1]
        try:
            found = runs.start(
                args["base"], args["run_id"] or None, args["keep"], args["variable"], check_mode=self._task.check_mode
            )
        except runs.RunDirError as exc:
            raise AnsibleActionFail(str(exc))
        # Controller-side bookkeeping, not a change to a managed host: a second run is still idempotent.
        found["changed"] = False
        result.update(found)
        result["msg"] = "reports of this run: %s (%s -> %s)%s" % (
            found["run_dir"],
            found["latest"],
            found["run_id"],
            "; removed %d old run(s)" % len(found["removed"]) if found["removed"] else "",
        )
        return result
