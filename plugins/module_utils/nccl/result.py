# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_check role's result document (<tag>.json on the node) and its one-line summary, from the registered
results of nccl_env_lint, nccl_test and nccl_log_check (filter nccl_check_result). No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.nccl_tests import fmt_size

# what Ansible adds to every registered result: not the check's own data
ANSIBLE_KEYS = frozenset(("invocation", "changed", "failed", "skipped", "warnings", "deprecations"))
LOG_DROPPED = ANSIBLE_KEYS | frozenset(("exception", "msg"))


def _own(result, dropped):
    return dict((k, v) for k, v in (result or {}).items() if k not in dropped and not str(k).startswith("_ansible"))


def busbw(test):
    """{collective: busbw at the largest size} of an nccl_test result (for ibtune_nccl_busbw_gbytes)."""
    return dict((name, c.get("max_size_busbw")) for name, c in ((test or {}).get("collectives") or {}).items())


def summary(host, test, log, path):
    """'node1: NCCL 2.28.9 used Socket; all_reduce 346.4 GB/s at 4 GiB; results in /var/log/ibtune/x.json'."""
    versions = (log or {}).get("nccl_versions") or ["?"]
    parts = ["%s: NCCL %s used %s" % (host, versions[-1], ", ".join((log or {}).get("networks") or []) or "?")]
    for name, c in ((test or {}).get("collectives") or {}).items():
        if c.get("max_size_busbw") is not None:
            parts.append("%s %.1f GB/s at %s" % (name, c["max_size_busbw"], fmt_size(c["max_size_bytes"])))
    parts.append("results in %s" % path)
    return "; ".join(parts)


def check_document(inputs):
    """The result document: host, tag, expect_transport, passed, failure, lint {errors, warnings, env}, test and log
    (the modules' results without Ansible's own keys), summary.

    inputs: {host, tag, expect_transport, failure (None when passed), lint, test, log, path}."""
    lint = inputs.get("lint") or {}
    test = _own(inputs.get("test"), ANSIBLE_KEYS)
    log = _own(inputs.get("log"), LOG_DROPPED)
    failure = inputs.get("failure") or None
    return {
        "host": inputs.get("host"),
        "tag": inputs.get("tag"),
        "expect_transport": inputs.get("expect_transport"),
        "passed": failure is None,
        "failure": failure,
        "lint": {
            "errors": lint.get("errors") or [],
            "warnings": lint.get("lint_warnings") or [],
            "env": lint.get("env") or {},
        },
        "test": test,
        "log": log,
        "summary": summary(inputs.get("host"), test, log, inputs.get("path")),
    }
