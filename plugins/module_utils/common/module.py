# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a module answers Ansible, written once: a module's main() builds its AnsibleModule and hands it, with
its ``run(params, check_mode)`` from module_utils, to ``respond()``.

``run`` returns the result dict (``failed: True`` in it fails the task with that result; ``warnings``, a list
of sentences, are shown as the task's warnings with ``module.warn``) or raises ``ModuleError`` with the one
sentence the task fails with (what, where, what to do). Nothing here imports Ansible: the module object is only
called.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os


class ModuleError(Exception):
    """The task fails with this one sentence; keyword arguments are returned next to it."""

    def __init__(self, msg, **result):
        Exception.__init__(self, msg)
        self.msg = msg
        self.result = result


def read_text(path, missing, unreadable):
    """A file's text (UTF-8, undecodable bytes replaced) for a module that needs it; ModuleError when it is not there
    (``missing``: the sentence after the path) or cannot be read (``unreadable``: the fix after the OS error)."""
    if not os.path.isfile(path):
        raise ModuleError("%s does not exist: %s" % (path, missing))
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        raise ModuleError("cannot read %s: %s%s" % (path, exc, unreadable))


def respond(module, run, *args, **kwargs):
    """Call ``run(*args, **kwargs)`` and answer with its result: exit_json, or fail_json when it failed."""
    try:
        result = dict(run(*args, **kwargs))
    except ModuleError as exc:
        module.fail_json(**dict(exc.result, msg=exc.msg))
        return
    failed = result.pop("failed", False)
    for warning in result.pop("warnings", None) or ():
        module.warn(warning)
    (module.fail_json if failed else module.exit_json)(**result)
