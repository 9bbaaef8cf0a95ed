# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nccl_log_check and nccl_env_lint modules do, each as one function over its parameters (the modules are
glue: common/module.py respond() answers Ansible with the result, or the ModuleError's sentence)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import socket
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError, read_text
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import log as nccl_log

# --- nccl_log_check -------------------------------------------------------------------------------------------


def read_sources(paths):
    """[(path, text)] of every readable file the paths (or their glob patterns) name; ModuleError when none."""
    sources = []
    for pattern in paths:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        for path in matches:
            if not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as handle:
                    sources.append((path, handle.read().decode("utf-8", "replace")))
            except (IOError, OSError) as exc:
                raise ModuleError("cannot read NCCL log %s: %s" % (path, exc))
    if not sources:
        raise ModuleError(
            "paths %s matched no readable file: run the NCCL job with NCCL_DEBUG=INFO and its output saved there"
            % ", ".join(paths)
        )
    return sources


def write_prom(directory, text):
    if not os.path.isdir(directory):
        raise ModuleError("textfile_dir %s is not a directory: create it or fix the path" % directory)
    return files.write_text(os.path.join(directory, "ibtune_nccl.prom"), text)


def _log_result(parsed):
    return dict(
        changed=False,
        transports=parsed["transports"],
        transport=parsed["transports"][0] if parsed["transports"] else None,
        networks=parsed["networks"],
        fallback=parsed["fallback"],
        fallback_reason=nccl_log.fallback_reason(parsed),
        nccl_warnings=[
            {"path": w["path"], "line": w["line"], "host": w["host"], "message": w["message"]}
            for w in parsed["warnings"]
        ],
        nccl_versions=parsed["nccl_versions"],
        env=parsed["env"],
        ib_devices=parsed["ib_devices"],
        socket_interfaces=parsed["socket_interfaces"],
        gdr=parsed["gdr"],
        channel_paths=parsed["channel_paths"],
        files=parsed["files"],
    )


def _busbw(values):
    busbw = {}
    for name, value in values.items():
        try:
            busbw[name] = float(value) if value is not None else None
        except (TypeError, ValueError):
            raise ModuleError("busbw.%s=%r is not a number (GB/s)" % (name, value))
    return busbw


def _log_failures(parsed, expect_transport, fail_on_warn):
    failures = []
    if expect_transport:
        problem = nccl_log.check_transport(parsed, expect_transport)
        if problem:
            failures.append(problem)
    if fail_on_warn and parsed["warnings"]:
        first = parsed["warnings"][0]
        failures.append(
            "%d NCCL WARN line(s), first at %s:%d: %s"
            % (len(parsed["warnings"]), first["path"], first["line"], first["message"])
        )
    return failures


def run_log_check(params, check_mode=False):
    """The nccl_log_check result (see the module's RETURN); ``failed`` when a check failed."""
    if params["content"] is not None:
        sources = [("content", params["content"])]
    else:
        sources = read_sources(params["paths"])
    parsed = nccl_log.parse_many(sources)
    result = _log_result(parsed)
    if params["textfile_dir"] and not check_mode:
        busbw = _busbw(params["busbw"])
        host = params["host"] or socket.gethostname()
        text = nccl_log.prom_metrics(host, parsed, busbw=busbw, timestamp=time.time())
        result["prom_file"] = write_prom(params["textfile_dir"], text)
        result["changed"] = True
    failures = _log_failures(parsed, params["expect_transport"], params["fail_on_warn"])
    if failures:
        return dict(result, failed=True, msg="; ".join(failures))
    result["msg"] = "NCCL used %s%s; %d WARN line(s)" % (
        ", ".join(parsed["networks"]) or "an unlogged network",
        " (fell back from IB)" if parsed["fallback"] else "",
        len(parsed["warnings"]),
    )
    return result


# --- nccl_env_lint --------------------------------------------------------------------------------------------


def _lint_file(params):
    path = params["path"]
    text = read_text(path, "render it first or point path at the file", "")
    env, errors, warnings = nccl_env.lint_conf(
        text, nccl_version=params["nccl_version"], link_layer=params["link_layer"], strict=params["strict"]
    )
    return env, errors, warnings, path


def _lint_env(params):
    env = {k: nccl_env.to_text(v) for k, v in params["env"].items()}
    errors, warnings = nccl_env.lint(
        params["env"], nccl_version=params["nccl_version"], link_layer=params["link_layer"], strict=params["strict"]
    )
    return env, errors, warnings, "the given env"


def run_env_lint(params, check_mode=False):
    """The nccl_env_lint result (see the module's RETURN): every lint warning is a task warning too; ``failed``
    on an error, or on a warning with fail_on_warnings."""
    env, errors, warnings, source = (_lint_file if params["path"] is not None else _lint_env)(params)
    result = dict(changed=False, errors=errors, lint_warnings=warnings, env=env)
    result["warnings"] = [item["message"] for item in warnings]
    if errors or (warnings and params["fail_on_warnings"]):
        problems = errors if errors else warnings
        result["failed"] = True
        result["msg"] = "%s has %d NCCL error(s) and %d warning(s): %s" % (
            source,
            len(errors),
            len(warnings),
            "; ".join(p["message"] for p in problems),
        )
        return result
    result["msg"] = "%s: %d variables, no errors, %d warning(s)" % (source, len(env), len(warnings))
    return result
