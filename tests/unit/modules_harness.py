"""Run an Ansible module's main() in-process with given arguments and capture its result.

ansible-core 2.19 provides patch_module_args; exit_json/fail_json raise SystemExit after
printing JSON, which we capture.
"""

import io
import json
from contextlib import redirect_stdout

import pytest
from ansible.module_utils import _internal
from ansible.module_utils.common import warnings as _warnings
from ansible.module_utils.testing import patch_module_args


class ModuleResult(dict):
    @property
    def failed(self):
        return bool(self.get("failed"))


def run_module(module, args, check_mode=False):
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    out = io.StringIO()
    # Filter tests in the same pytest process import Ansible's controller side, after which
    # module warnings would go to the controller's display: run as a module process would.
    saved = _internal.is_controller
    _internal.is_controller = False
    _warnings._global_warnings.clear()
    try:
        with patch_module_args(args), redirect_stdout(out), pytest.raises(SystemExit):
            module.main()
    finally:
        _internal.is_controller = saved
    return ModuleResult(json.loads(out.getvalue()))
