# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nccl_test module does, as run(params, runner, check_mode) (the module is glue).

``runner`` is the module seen through four methods: run_command(argv, env, timeout) -> (rc, text, error),
get_bin_path(name), tmpdir and write_file(path, text). run() checks the parameters, builds the launcher's argv
(launch.py), runs nccl-tests or the torch benchmark, parses the output and NCCL's log, applies the busbw floor
and the plan's transport expectations, and returns (result, failure sentence or None). No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import launch
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import log as nccl_log
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import nccl_tests
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.torch_backend import RESULT_MARKER, SCRIPT

TORCH_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")


class NcclTestError(Exception):
    """The module fails with this one sentence (and the result gathered so far)."""

    def __init__(self, message, result=None):
        Exception.__init__(self, message)
        self.result = result or {}


def validate(params):
    """Raise NcclTestError for parameters that cannot make a run."""
    if not params["collectives"]:
        raise NcclTestError("collectives is empty: name at least one, e.g. [all_reduce]")
    if params["executable"] and len(params["collectives"]) > 1:
        raise NcclTestError(
            "executable runs one collective, but collectives lists %d: drop one" % len(params["collectives"])
        )
    for key in ("min_bytes", "max_bytes"):
        try:
            nccl_tests.parse_size(params[key])
        except ValueError as exc:
            raise NcclTestError("%s: %s" % (key, exc))
    try:
        nccl_tests.size_series(params["min_bytes"], params["max_bytes"], params["step_factor"])
    except ValueError as exc:
        raise NcclTestError(
            "min_bytes=%s max_bytes=%s step_factor=%s: %s"
            % (params["min_bytes"], params["max_bytes"], params["step_factor"], exc)
        )
    for collective in params["collectives"]:
        try:
            nccl_tests.bus_factor(collective, 2)
        except ValueError as exc:
            raise NcclTestError(str(exc))
    if params["backend"] == "torch":
        _check_torch_collectives(params["collectives"])
    if params["launch"] != "none" and not params["hosts"]:
        raise NcclTestError("launch=%s needs hosts: the inventory names of the group's nodes" % params["launch"])


def _check_torch_collectives(collectives):
    for collective in collectives:
        if collective not in TORCH_COLLECTIVES:
            raise NcclTestError(
                "backend=torch runs %s, not %s: pick from those or use backend=nccl_tests"
                % (", ".join(TORCH_COLLECTIVES), collective)
            )


def check_mode_result(params):
    return dict(
        changed=False,
        msg="check mode: would run %s backend for %s" % (params["backend"], ", ".join(params["collectives"])),
        rows=[],
        collectives={},
        transport=None,
        transports=[],
        fallback=False,
        gdr=False,
        nccl_version=None,
        nccl_warnings=[],
        transport_problems=[],
        passed=True,
        avg_busbw=None,
        cmd=[],
    )


def run(params, runner, check_mode=False):
    """(result, failure sentence or None) for the module's params."""
    try:
        validate(params)
        env = launch.run_env(params["env"], params["nccl_debug"], params["nccl_debug_subsys"])
    except (NcclTestError, launch.LaunchError) as exc:
        return {"changed": False, "passed": False}, str(exc)
    if check_mode:
        return check_mode_result(params), None
    if params["install_only"]:
        return _install_script(params, runner)
    started = time.time()
    try:
        spec = launch_spec(params, runner)
        if params["backend"] == "torch":
            results, output, cmd, doc = run_torch(params, runner, env, spec)
        else:
            results, output, cmd = run_nccl_tests(params, runner, env, spec)
            doc = None
    except (NcclTestError, launch.LaunchError) as exc:
        return dict(getattr(exc, "result", {}) or {}, changed=False, passed=False), str(exc)
    if params["log_file"]:
        runner.write_file(params["log_file"], output)
    log = nccl_log.parse(output, path=params["log_file"] or "output")
    result = assemble(params, results, log, doc, cmd, spec)
    result["elapsed_s"] = round(time.time() - started, 1)
    failures = run_failures(params, results, output, result)
    result["passed"] = not failures
    if failures:
        return result, "; ".join(failures)
    host = result["host"]
    result["msg"] = nccl_tests.summary_message(params["backend"], host, result["transport"], result["collectives"])
    if result["rank0_elsewhere"]:
        result["msg"] = "torch on %s over %s: this node's agent ran; rank 0 ran on another node, with the figures" % (
            host,
            result["transport"] or "an unlogged network",
        )
    return result, None


def _install_script(params, runner):
    """install_only: the GPUs found here, and the torch benchmark written to torch_script when given."""
    gpus = len(launch.gpus_from_sysfs(params["sysfs_root"]))
    result = {"changed": False, "passed": True, "gpus_found": gpus, "msg": "%d NVIDIA GPU(s) found" % gpus}
    if params["torch_script"]:
        result["changed"] = runner.write_file(params["torch_script"], SCRIPT)
        result["torch_script"] = params["torch_script"]
        result["msg"] += "; torch benchmark at %s" % params["torch_script"]
    return result, None


def launch_spec(params, runner):
    """The launcher's spec (launch.launch_argv), with ranks per node from the GPUs found when not given and the
    mpirun hostfile written."""
    spec = {
        "launcher": params["launch"],
        "hosts": params["hosts"],
        "srun_mpi": params["srun_mpi"],
        "executable": params["launch_executable"],
        "partition": params["partition"],
        "qos": params["qos"],
        "account": params["account"],
        "reservation": params["reservation"],
        "nice": params["nice"],
        "time_limit_min": params["time_limit_min"],
        # launch=none: `launcher` is the argv put in front of the command; otherwise launch_args extend the launcher
        "extra_args": list(params["launcher"]) if params["launch"] == "none" else list(params["launch_args"]),
        "rdzv_port": params["rdzv_port"],
        "rdzv_id": params["rdzv_id"],
        "node_rank": params["node_rank"],
        "torchrun_under_srun": params["torchrun_under_srun"],
        "as_root": hasattr(os, "geteuid") and os.geteuid() == 0,
    }
    gpus = launch.gpus_from_sysfs(params["sysfs_root"])
    spec["gpus_found"] = len(gpus)
    if params["launch"] != "none":
        spec["ranks_per_node"] = launch.ranks_per_node(len(gpus), params["ranks_per_node"], where="the launch host")
        spec["warning"] = launch.oversubscribed(len(gpus), spec["ranks_per_node"])
    if params["launch"] == "mpirun":
        spec["hostfile"] = params["hostfile"] or os.path.join(runner.tmpdir, "hostfile")
        runner.write_file(spec["hostfile"], launch.hostfile_text(params["hosts"], spec["ranks_per_node"]))
    return spec


def _binary(params, runner, collective):
    binary = params["executable"] or "%s_perf" % collective
    if params["tests_dir"] and os.sep not in binary:
        binary = os.path.join(params["tests_dir"], binary)
    if params["launch"] == "srun" and os.sep in binary:
        return binary  # srun starts it on the nodes; the launch host (a login node) need not have it
    path = binary if os.sep in binary else runner.get_bin_path(binary)
    if not path or not os.path.exists(path):
        raise NcclTestError(
            "nccl-tests binary %s not found on %s: install nccl-tests, set tests_dir or executable, "
            "or use backend=torch" % (binary, "PATH" if os.sep not in binary else "the node"),
            {"cmd": [binary]},
        )
    return path


def nccl_tests_argv(params, path, json_path=None):
    """nccl-tests' own arguments (after the binary)."""
    args = [
        path,
        "-b",
        str(params["min_bytes"]),
        "-e",
        str(params["max_bytes"]),
        "-f",
        str(params["step_factor"]),
        "-g",
        str(params["gpus"] or 1),
        "-n",
        str(params["iters"]),
        "-w",
        str(params["warmup_iters"]),
    ]
    if params["average"] != "avg":
        args += ["-a", str(nccl_tests.AVERAGE_CODES[params["average"]])]
    if json_path:
        args += ["-J", json_path]
    return args + list(params["extra_args"])


def run_nccl_tests(params, runner, env, spec):
    results = {}
    output = []
    cmd = []
    for collective in params["collectives"]:
        path = _binary(params, runner, collective)
        json_path = os.path.join(runner.tmpdir, "%s.json" % collective) if params["json_output"] else None
        cmd = launch.launch_argv(spec, nccl_tests_argv(params, path, json_path), env, spec.get("hostfile"))
        rc, out, err = runner.run_command(cmd, env, params["timeout"])
        output.append(out)
        parsed = nccl_tests.parse_text(out)
        if json_path and os.path.exists(json_path):
            with open(json_path) as handle:
                parsed = nccl_tests.parse_json(handle.read())
        results[collective] = dict(parsed, **nccl_tests.summarize(parsed), rc=rc, cmd=cmd, error=err)
    return results, "\n".join(output), cmd


def torch_config(params):
    return {
        "collectives": params["collectives"],
        "sizes": nccl_tests.size_series(params["min_bytes"], params["max_bytes"], params["step_factor"]),
        "warmup": params["warmup_iters"],
        "iters": params["iters"],
        "nproc": params["gpus"],
        "average": params["average"],
    }


def run_torch(params, runner, env, spec):
    script = params["torch_script"] or os.path.join(runner.tmpdir, "ibtune_nccl_torch.py")
    runner.write_file(script, SCRIPT)
    program = [script, json.dumps(torch_config(params))]
    if params["launch"] == "torchrun":
        cmd = launch.launch_argv(spec, program, env)
    else:
        cmd = launch.launch_argv(spec, [params["python_executable"] or runner.python] + program, env)
    rc, out, err = runner.run_command(cmd, env, params["timeout"])
    doc = torch_document(out) if rc == 0 else None
    results = {}
    for collective in params["collectives"]:
        parsed = torch_parsed(doc, collective)
        results[collective] = dict(parsed, **nccl_tests.summarize(parsed), rc=rc, cmd=cmd, error=err)
    return results, out, cmd, doc


def torch_document(output):
    """The result document rank 0 printed (one line starting with RESULT_MARKER), None when there is none."""
    for line in reversed(output.splitlines()):
        index = line.find(RESULT_MARKER)
        if index >= 0:
            try:
                return json.loads(line[index + len(RESULT_MARKER) :])
            except ValueError:
                return None
    return None


def torch_parsed(doc, collective):
    rows = []
    for row in (doc or {}).get("results", {}).get(collective, []):
        row = dict(row)
        in_place = row.pop("in_place", False)
        row.update({"in_place_time_us": None, "in_place_algbw": None, "in_place_busbw": None, "in_place_wrong": None})
        row["measured_in_place"] = in_place
        rows.append(row)
    return {
        "rows": rows,
        "avg_busbw": None,
        "out_of_bounds": None,
        "nranks": doc["world_size"] if doc else None,
        "hosts": list(doc.get("hosts") or [doc["host"]]) if doc else [],
        "nccl_version_code": None,
    }


def _nccl_version(log, doc, first):
    if log["nccl_versions"]:
        return log["nccl_versions"][-1]
    if doc:
        return doc.get("nccl_version")
    if first.get("nccl_version_code"):
        return nccl_tests.version_from_code(first["nccl_version_code"])
    return None


def assemble(params, results, log, doc, cmd, spec):
    """The module's result from the per-collective results and the parsed log."""
    first = results[params["collectives"][0]]
    collectives = dict(
        (
            name,
            {
                "rows": res["rows"],
                "max_size_bytes": res["max_size_bytes"],
                "max_size_busbw": res["max_size_busbw"],
                "avg_busbw": res["avg_busbw"],
                "rc": res["rc"],
                "cmd": res["cmd"],
            },
        )
        for name, res in results.items()
    )
    result = dict(
        changed=False,
        backend=params["backend"],
        rows=first["rows"],
        max_size_bytes=first["max_size_bytes"],
        max_size_busbw=first["max_size_busbw"],
        avg_busbw=first["avg_busbw"],
        collectives=collectives,
        transport=log["transports"][0] if log["transports"] else None,
        transports=log["transports"],
        networks=log["networks"],
        fallback=log["fallback"],
        gdr=log["gdr"],
        ib_devices=log["ib_devices"],
        per_host=log["per_host"],
        nccl_version=_nccl_version(log, doc, first),
        nranks=first.get("nranks"),
        nccl_warnings=["%s:%d %s" % (w["path"], w["line"], w["message"]) for w in log["warnings"]],
        cmd=cmd,
        launch=params["launch"],
        hosts=list(params["hosts"] or []),
        ranks_per_node=spec.get("ranks_per_node"),
        gpus_found=spec.get("gpus_found"),
        host=(first.get("hosts") or log["hosts"] or ["the node"])[0],
    )
    if spec.get("warning"):
        result["nccl_warnings"].append(spec["warning"])
    # one torchrun agent per node started here: c10d made another node's rank 0, which holds the figures
    result["rank0_elsewhere"] = bool(
        params["backend"] == "torch"
        and params["launch"] == "torchrun"
        and not params["torchrun_under_srun"]
        and doc is None
        and all(res["rc"] == 0 for res in results.values())
    )
    problems = nccl_log.check_expectations(log, _expectation(params)) if params["expect"] else []
    result["transport_problems"] = problems
    if doc:
        result["torch_version"] = doc.get("torch_version")
        result["gpus"] = doc.get("gpus")
    if params["log_file"]:
        result["log_file"] = params["log_file"]
    return result


def _expectation(params):
    expect = dict(params["expect"])
    expect.setdefault("hosts", list(params["hosts"] or []) or None)
    return expect


def _tail(text, lines=8):
    return " | ".join(line for line in text.strip().splitlines()[-lines:])


def _why(warnings):
    """NCCL's own reason for an exit (its first WARN lines, e.g. 'Duplicate GPU detected'), which the launcher's
    tail (mpirun's or srun's 'exited with non-zero status' box) does not say."""
    return ", NCCL said: %s" % "; ".join(warnings[:2]) if warnings else ""


def run_failures(params, results, output, result):
    """Sentences for what went wrong: exits, no rows, wrong results, the busbw floor, the plan's transport."""
    failures = []
    for name, res in results.items():
        if res["rc"] != 0:
            failures.append(
                "%s exited %s%s%s: %s"
                % (
                    name,
                    res["rc"],
                    " (%s)" % res["error"] if res["error"] else "",
                    _why(result["nccl_warnings"]),
                    _tail(output) or "no output",
                )
            )
        elif not res["rows"] and not result.get("rank0_elsewhere"):
            failures.append("%s printed no result rows: %s" % (name, _tail(output) or "no output"))
        if res.get("wrong_total"):
            failures.append("%s returned %d wrong elements: NCCL computed wrong results" % (name, res["wrong_total"]))
        if res.get("out_of_bounds"):
            result["nccl_warnings"].append("%s: %d out-of-bounds values" % (name, res["out_of_bounds"]))
    failures += ["NCCL did not do what the plan expects: %s" % p["message"] for p in result["transport_problems"]]
    floor = _floor_failure(params, result)
    if floor and not failures:
        failures.append(floor)
    return failures


def _floor_failure(params, result):
    gate = params["min_busbw"]
    busbw = result["max_size_busbw"]
    if gate is None or busbw is None or busbw >= gate:
        return None
    return (
        "%s busbw %.1f GB/s at %s on %s is below min_busbw %.1f GB/s (NCCL used %s): check the fabric, "
        "NCCL's configuration and the GPUs' clocks"
        % (
            params["collectives"][0],
            busbw,
            nccl_tests.fmt_size(result["max_size_bytes"]),
            result["host"],
            gate,
            result["transport"] or "an unknown network",
        )
    )


class ModuleRunner(object):
    """An AnsibleModule seen through what run() needs (run_command under coreutils' timeout, no shell)."""

    def __init__(self, module, python):
        self.module = module
        self.tmpdir = module.tmpdir
        self.python = python

    def get_bin_path(self, name):
        return self.module.get_bin_path(name)

    def run_command(self, argv, env, timeout):
        """(rc, stdout + stderr, error or None). NCCL logs to stdout, Python to stderr: keep both."""
        wrapper = self.module.get_bin_path("timeout")
        full = ([wrapper, "--kill-after=30", str(timeout)] if wrapper else []) + list(argv)
        rc, out, err = self.module.run_command(full, environ_update=env)
        text = out + (("\n" + err) if err else "")
        if wrapper and rc in (124, 137):
            return rc, text, "timed out after %d s" % timeout
        if rc == 127 and not out:
            return rc, text, "cannot start %s" % argv[0]
        return rc, text, None

    def write_file(self, path, text):
        """Write text to path (directories made); True when the content changed."""
        directory = os.path.dirname(path)
        if directory and not os.path.isdir(directory):
            os.makedirs(directory)
        if os.path.exists(path):
            with open(path) as handle:
                if handle.read() == text:
                    return False
        with open(path, "w") as handle:
            handle.write(text)
        return True
