#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_test
short_description: Measure NCCL collective bandwidth with nccl-tests or a built-in torch.distributed benchmark
version_added: 0.1.0
description:
  - C(backend=nccl_tests) runs nccl-tests binaries (C(all_reduce_perf)...), optionally under a launcher such as
    C(mpirun) for several nodes, and parses their table (old and new layouts, stray NCCL lines) or their C(-J) JSON.
  - C(backend=torch) runs a built-in torch.distributed benchmark with the node's Python that has PyTorch, one process
    per GPU, for C(all_reduce), C(all_gather) and C(reduce_scatter), timed with CUDA events; busbw follows
    nccl-tests' formulas (all_reduce x 2(n-1)/n, all_gather and reduce_scatter x (n-1)/n).
    torch's all_reduce works in place, so that figure is an in-place one.
  - NCCL's log (C(NCCL_DEBUG=INFO) unless I(nccl_debug) says otherwise) is parsed for the network NCCL used
    (C(transport)), GPUDirect RDMA and the NCCL version; I(log_file) keeps it for M(ibtune.fabric.nccl_log_check).
  - Fails with one sentence when the benchmark fails, a result is wrong, or the bus bandwidth at the largest size
    is below I(min_busbw).
options:
  backend:
    description: What runs the collectives.
    type: str
    choices: [nccl_tests, torch]
    default: nccl_tests
  collectives:
    description:
      - Collectives to run, in order; the first one is the one C(rows), C(max_size_busbw) and I(min_busbw) refer to.
      - C(backend=torch) supports C(all_reduce), C(all_gather) and C(reduce_scatter).
    type: list
    elements: str
    default: [all_reduce]
  executable:
    description:
      - nccl-tests binary to run (name on C(PATH) or a path). Only with one collective.
      - Default is C(<collective>_perf) in I(tests_dir) or on C(PATH).
    type: str
  tests_dir:
    description: Directory holding the nccl-tests binaries (e.g. C(/opt/nccl-tests/build)).
    type: path
  min_bytes:
    description: Smallest message size (nccl-tests C(-b); K, M, G suffixes are powers of 1024).
    type: str
    default: 8M
  max_bytes:
    description: Largest message size (nccl-tests C(-e)).
    type: str
    default: 1G
  step_factor:
    description: Multiply the size by this between steps (nccl-tests C(-f)).
    type: int
    default: 2
  gpus:
    description:
      - GPUs per process for nccl-tests (C(-g)); number of processes (one per GPU) for the torch backend.
      - Default is 1 for nccl-tests and every visible GPU for torch.
    type: int
  iters:
    description: Timed iterations per size (nccl-tests C(-n)).
    type: int
    default: 20
  warmup_iters:
    description: Untimed iterations per size (nccl-tests C(-w)).
    type: int
    default: 5
  launcher:
    description:
      - Argv put in front of the nccl-tests command, e.g. C([mpirun, -np, "16", -N, "8", --hostfile, /etc/hosts.mpi]).
    type: list
    elements: str
    default: []
  extra_args:
    description: More nccl-tests arguments, as a list.
    type: list
    elements: str
    default: []
  env:
    description:
      - Environment for the benchmark, added to the module's own. NCCL reads its config files too, but never overrides
        what is set here.
    type: dict
    default: {}
  nccl_debug:
    description:
      - C(NCCL_DEBUG) for the run, so the log says which network NCCL used. Empty string leaves it alone
        (then C(/etc/nccl.conf) or I(env) decide).
    type: str
    default: INFO
  json_output:
    description: Ask nccl-tests for C(-J) JSON (nccl-tests 2.18.5 and later) and parse that instead of the table.
    type: bool
    default: false
  python_executable:
    description: Python with torch for C(backend=torch). Default is the Python running this module.
    type: path
  timeout:
    description: Seconds before the benchmark is killed.
    type: int
    default: 900
  log_file:
    description: Write the benchmark's whole output (NCCL's log included) here.
    type: path
  average:
    description:
      - How the ranks' times combine into the reported time, algbw and busbw, as nccl-tests' C(-a) option
        (C(rank0), C(avg), C(min), C(max)). C(avg), the mean over ranks, is nccl-tests' default, so both backends
        report what a plain nccl-tests run prints; C(max) is the slowest rank (a conservative figure).
      - For C(backend=nccl_tests), anything but C(avg) adds C(-a <n>) to the command.
    type: str
    choices: [avg, rank0, min, max]
    default: avg
    version_added: 0.2.0
  min_busbw:
    description: Fail when the first collective's bus bandwidth at the largest size (GB/s, 10^9 B/s) is below this.
    type: float
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: In check mode nothing is run; the module says what it would run.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: all_reduce on every GPU of the node with the torch backend, gated
  ibtune.fabric.nccl_test:
    backend: torch
    collectives: [all_reduce, all_gather, reduce_scatter]
    min_bytes: 64M
    max_bytes: 4G
    min_busbw: 339.7
    log_file: /var/log/ibtune/nccl_torch.log

- name: Two nodes with nccl-tests under mpirun
  ibtune.fabric.nccl_test:
    tests_dir: /opt/nccl-tests/build
    collectives: [all_reduce]
    launcher: [mpirun, -np, "16", -N, "8", --host, "node1,node2"]
    gpus: 1
    min_bytes: 1G
    max_bytes: 16G
    json_output: true
    min_busbw: 400
"""

RETURN = r"""
rows:
  description:
    - One row per size of the first collective, as nccl-tests prints them. C(size) in bytes, C(time_us), C(algbw) and
      C(busbw) in GB/s (10^9 B/s) are the out-of-place figures (for torch's all_reduce, its in-place figure),
      C(in_place_*) the in-place ones (null when not measured), C(wrong) the wrong elements (null when not checked).
  returned: success or benchmark failure with output
  type: list
  elements: dict
  sample:
    - {size: 4294967296, count: 1073741824, type: float, redop: sum, root: -1, time_us: 12395.1, algbw: 346.5,
       busbw: 346.5, wrong: 0, in_place_time_us: null, in_place_algbw: null, in_place_busbw: null,
       in_place_wrong: null}
max_size_bytes:
  description: The largest size measured.
  returned: when rows were parsed
  type: int
  sample: 4294967296
max_size_busbw:
  description: The first collective's bus bandwidth (GB/s) at the largest size; what I(min_busbw) gates.
  returned: when rows were parsed
  type: float
  sample: 343.6
avg_busbw:
  description: nccl-tests' C(# Avg bus bandwidth) (average of every row; small sizes drag it down). Null for torch.
  returned: always
  type: float
collectives:
  description: Per collective, C(rows), C(max_size_bytes), C(max_size_busbw), C(avg_busbw), C(rc), C(cmd).
  returned: always
  type: dict
transport:
  description: The network NCCL said it used (C(IB), C(Socket), a plugin's name...), null when the log does not say.
  returned: always
  type: str
  sample: Socket
transports:
  description: Every network family seen in the log.
  returned: always
  type: list
  elements: str
fallback:
  description: True when NET/IB found no device and NCCL went on with sockets.
  returned: always
  type: bool
gdr:
  description: True when NCCL logged GPUDirect RDMA (C(GDRDMA)) on a channel.
  returned: always
  type: bool
nccl_version:
  description: NCCL's version, from the log, nccl-tests' header or torch.
  returned: always
  type: str
  sample: 2.28.9
nranks:
  description: Ranks in the communicator.
  returned: when known
  type: int
nccl_warnings:
  description:
    - NCCL WARN lines (C(file:line message)) and other things worth a look (out-of-bounds values).
    - Not called C(warnings) because Ansible reserves that result key for its own warning messages.
  returned: always
  type: list
  elements: str
passed:
  description: False when I(min_busbw) was not met or a result was wrong.
  returned: always
  type: bool
cmd:
  description: Argv of the last command run.
  returned: always
  type: list
  elements: str
log_file:
  description: Where the output was written.
  returned: when I(log_file) was given
  type: str
"""

import json
import os
import sys
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import log as nccl_log
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import nccl_tests
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.torch_backend import SCRIPT

TORCH_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


def _run(module, argv, env, timeout):
    """Run argv (no shell) under coreutils' timeout; NCCL logs to stdout, Python to stderr: keep both."""
    wrapper = module.get_bin_path("timeout")
    full = ([wrapper, "--kill-after=30", str(timeout)] if wrapper else []) + list(argv)
    rc, out, err = module.run_command(full, environ_update=env)
    text = out + (("\n" + err) if err else "")
    if wrapper and rc in (124, 137):
        return rc, text, "timed out after %d s" % timeout
    if rc == 127 and not out:
        return rc, text, "cannot start %s" % argv[0]
    return rc, text, None


def _tail(text, lines=8):
    return " | ".join(line for line in text.strip().splitlines()[-lines:])


def run_nccl_tests(module, params, env):
    results = {}
    output = []
    cmd = []
    for collective in params["collectives"]:
        binary = params["executable"] or "%s_perf" % collective
        if params["tests_dir"] and os.sep not in binary:
            binary = os.path.join(params["tests_dir"], binary)
        path = binary if os.sep in binary else module.get_bin_path(binary)
        if not path or not os.path.exists(path):
            module.fail_json(
                msg="nccl-tests binary %s not found on %s: install nccl-tests, set tests_dir or executable, "
                "or use backend=torch" % (binary, "PATH" if os.sep not in binary else "the node"),
                cmd=[binary],
            )
        cmd = list(params["launcher"]) + [
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
            cmd += ["-a", str(nccl_tests.AVERAGE_CODES[params["average"]])]
        json_path = None
        if params["json_output"]:
            json_path = os.path.join(module.tmpdir, "%s.json" % collective)
            cmd += ["-J", json_path]
        cmd += list(params["extra_args"])
        rc, out, err = _run(module, cmd, env, params["timeout"])
        output.append(out)
        parsed = nccl_tests.parse_text(out)
        if json_path and os.path.exists(json_path):
            with open(json_path) as handle:
                parsed = nccl_tests.parse_json(handle.read())
        summary = nccl_tests.summarize(parsed)
        results[collective] = dict(
            parsed,
            **summary,
            rc=rc,
            cmd=cmd,
            error=err,
        )
    return results, "\n".join(output), cmd


def run_torch(module, params, env):
    for collective in params["collectives"]:
        if collective not in TORCH_COLLECTIVES:
            module.fail_json(
                msg="backend=torch runs %s, not %s: pick from those or use backend=nccl_tests"
                % (", ".join(TORCH_COLLECTIVES), collective)
            )
    sizes = nccl_tests.size_series(params["min_bytes"], params["max_bytes"], params["step_factor"])
    script = os.path.join(module.tmpdir, "ibtune_nccl_torch.py")
    with open(script, "w") as handle:
        handle.write(SCRIPT)
    out_json = os.path.join(module.tmpdir, "ibtune_nccl_torch.json")
    cfg = {
        "collectives": params["collectives"],
        "sizes": sizes,
        "warmup": params["warmup_iters"],
        "iters": params["iters"],
        "nproc": params["gpus"],
        "average": params["average"],
        "out": out_json,
    }
    python = params["python_executable"] or sys.executable
    cmd = [python, script, json.dumps(cfg)]
    rc, out, err = _run(module, cmd, env, params["timeout"])
    results = {}
    doc = None
    if rc == 0 and os.path.exists(out_json):
        with open(out_json) as handle:
            doc = json.load(handle)
    for collective in params["collectives"]:
        rows = []
        if doc:
            for row in doc["results"].get(collective, []):
                in_place = row.pop("in_place", False)
                row.update(
                    {
                        "in_place_time_us": None,
                        "in_place_algbw": None,
                        "in_place_busbw": None,
                        "in_place_wrong": None,
                    }
                )
                row["measured_in_place"] = in_place
                rows.append(row)
        parsed = {
            "rows": rows,
            "avg_busbw": None,
            "out_of_bounds": None,
            "nranks": doc["world_size"] if doc else None,
            "hosts": [doc["host"]] if doc else [],
            "nccl_version_code": None,
        }
        results[collective] = dict(parsed, **nccl_tests.summarize(parsed), rc=rc, cmd=cmd, error=err)
    return results, out, cmd, doc


def main():
    module = AnsibleModule(
        argument_spec=dict(
            backend=dict(type="str", choices=["nccl_tests", "torch"], default="nccl_tests"),
            collectives=dict(type="list", elements="str", default=["all_reduce"]),
            executable=dict(type="str"),
            tests_dir=dict(type="path"),
            min_bytes=dict(type="str", default="8M"),
            max_bytes=dict(type="str", default="1G"),
            step_factor=dict(type="int", default=2),
            gpus=dict(type="int"),
            iters=dict(type="int", default=20),
            warmup_iters=dict(type="int", default=5),
            launcher=dict(type="list", elements="str", default=[]),
            extra_args=dict(type="list", elements="str", default=[]),
            env=dict(type="dict", default={}),
            nccl_debug=dict(type="str", default="INFO"),
            json_output=dict(type="bool", default=False),
            python_executable=dict(type="path"),
            timeout=dict(type="int", default=900),
            log_file=dict(type="path"),
            min_busbw=dict(type="float"),
            average=dict(type="str", choices=["avg", "rank0", "min", "max"], default="avg"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not params["collectives"]:
        module.fail_json(msg="collectives is empty: name at least one, e.g. [all_reduce]")
    if params["executable"] and len(params["collectives"]) > 1:
        module.fail_json(
            msg="executable runs one collective, but collectives lists %d: drop one" % len(params["collectives"])
        )
    for key in ("min_bytes", "max_bytes"):
        try:
            nccl_tests.parse_size(params[key])
        except ValueError as exc:
            module.fail_json(msg="%s: %s" % (key, exc))
    try:
        nccl_tests.size_series(params["min_bytes"], params["max_bytes"], params["step_factor"])
    except ValueError as exc:
        module.fail_json(
            msg="min_bytes=%s max_bytes=%s step_factor=%s: %s"
            % (params["min_bytes"], params["max_bytes"], params["step_factor"], exc)
        )
    for collective in params["collectives"]:
        try:
            nccl_tests.bus_factor(collective, 2)
        except ValueError as exc:
            module.fail_json(msg=str(exc))

    env = {str(k): str(v) for k, v in params["env"].items()}
    if params["nccl_debug"]:
        env["NCCL_DEBUG"] = params["nccl_debug"]
    if module.check_mode:
        module.exit_json(
            changed=False,
            skipped=False,
            msg="check mode: would run %s backend for %s" % (params["backend"], ", ".join(params["collectives"])),
            rows=[],
            collectives={},
            transport=None,
            transports=[],
            fallback=False,
            gdr=False,
            nccl_version=None,
            nccl_warnings=[],
            passed=True,
            avg_busbw=None,
            cmd=[],
        )

    started = time.time()
    doc = None
    if params["backend"] == "torch":
        results, output, cmd, doc = run_torch(module, params, env)
    else:
        results, output, cmd = run_nccl_tests(module, params, env)
    if params["log_file"]:
        directory = os.path.dirname(params["log_file"])
        if directory and not os.path.isdir(directory):
            os.makedirs(directory)
        with open(params["log_file"], "w") as handle:
            handle.write(output)

    log = nccl_log.parse(output, path=params["log_file"] or "output")
    first = results[params["collectives"][0]]
    nccl_version = None
    if log["nccl_versions"]:
        nccl_version = log["nccl_versions"][-1]
    elif doc:
        nccl_version = doc.get("nccl_version")
    elif first.get("nccl_version_code"):
        nccl_version = nccl_tests.version_from_code(first["nccl_version_code"])

    warnings = ["%s:%d %s" % (w["path"], w["line"], w["message"]) for w in log["warnings"]]
    failures = []
    collectives = {}
    for name, res in results.items():
        collectives[name] = {
            "rows": res["rows"],
            "max_size_bytes": res["max_size_bytes"],
            "max_size_busbw": res["max_size_busbw"],
            "avg_busbw": res["avg_busbw"],
            "rc": res["rc"],
            "cmd": res["cmd"],
        }
        if res["rc"] != 0:
            failures.append(
                "%s exited %s%s: %s"
                % (name, res["rc"], " (%s)" % res["error"] if res["error"] else "", _tail(output) or "no output")
            )
        elif not res["rows"]:
            failures.append("%s printed no result rows: %s" % (name, _tail(output) or "no output"))
        if res.get("wrong_total"):
            failures.append("%s returned %d wrong elements: NCCL computed wrong results" % (name, res["wrong_total"]))
        if res.get("out_of_bounds"):
            warnings.append("%s: %d out-of-bounds values" % (name, res["out_of_bounds"]))

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
        nccl_version=nccl_version,
        nranks=first.get("nranks"),
        nccl_warnings=warnings,
        cmd=cmd,
        elapsed_s=round(time.time() - started, 1),
    )
    if doc:
        result["torch_version"] = doc.get("torch_version")
        result["gpus"] = doc.get("gpus")
    if params["log_file"]:
        result["log_file"] = params["log_file"]
    host = (first.get("hosts") or log["hosts"] or ["the node"])[0]
    first_name = params["collectives"][0]
    gate = params["min_busbw"]
    if gate is not None and first["max_size_busbw"] is not None and not failures and first["max_size_busbw"] < gate:
        failures.append(
            "%s busbw %.1f GB/s at %s on %s is below min_busbw %.1f GB/s (NCCL used %s): check the fabric, "
            "NCCL's configuration and the GPUs' clocks"
            % (
                first_name,
                first["max_size_busbw"],
                nccl_tests.fmt_size(first["max_size_bytes"]),
                host,
                params["min_busbw"],
                result["transport"] or "an unknown network",
            )
        )
    result["passed"] = not failures
    if failures:
        module.fail_json(msg="; ".join(failures), **result)
    module.exit_json(
        msg=nccl_tests.summary_message(params["backend"], host, result["transport"], collectives), **result
    )


if __name__ == "__main__":
    main()
