"""Run an Ansible module's main() in-process with given arguments and capture its result.

ansible-core 2.19 provides patch_module_args; older ones (the lowest requires_ansible claims, 2.16) read the
arguments from basic._ANSIBLE_ARGS, which is what patch_module_args sets there. exit_json/fail_json raise
SystemExit after printing JSON, which we capture.
"""

import contextlib
import io
import json
from contextlib import redirect_stdout

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common import warnings as _warnings

try:
    from ansible.module_utils import _internal
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19
    _internal = None

    @contextlib.contextmanager
    def patch_module_args(args):
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8")
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


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
    saved = _internal.is_controller if _internal else None
    if _internal:
        _internal.is_controller = False
    _clear(_warnings)
    try:
        with patch_module_args(args), redirect_stdout(out), pytest.raises(SystemExit):
            module.main()
    finally:
        if _internal:
            _internal.is_controller = saved
    return ModuleResult(json.loads(out.getvalue()))


def _clear(warnings_module):
    """Forget the warnings an earlier module run left (their store's name differs between ansible-core versions)."""
    for name in ("_global_warnings",):
        store = getattr(warnings_module, name, None)
        if store is not None:
            store.clear()
