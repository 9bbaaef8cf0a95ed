# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading ports with mlxlink/mstlink: what ib_phy runs, in argv lists, several at a time (impure edge).

Each port is one read-only query (mlxlink.query_argv). A query that exits non-zero is retried without the FEC
histogram flags (older MFT, a port whose FEC has no histogram), then reported with its output. Counters are
cleared only when asked (``clear``), after the read, so the result still holds what was there before.
Processes run in their own session and die with the module (host.process.spawn); one that outlives its
timeout is killed with its group.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.host import process as _process
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import mlxlink as _mlxlink

POLL_S = 0.02


def find_executable(name, path=None):
    """The tool to run: ``name`` when given (a path or a name on PATH), else mlxlink, else mstlink; None."""
    for candidate in [name] if name else list(_mlxlink.EXECUTABLES):
        if os.sep in candidate:
            if os.access(candidate, os.X_OK):
                return candidate
            continue
        found = shutil.which(candidate, path=path)
        if found:
            return found
    return None


def _start(argv):
    # closed in _finish (the files outlive this function: the child writes them while others run)
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115
    try:
        proc = _process.spawn(argv, out, err)
    except OSError as exc:
        out.close()
        err.close()
        return {"argv": argv, "error": "cannot run %s (%s)" % (argv[0], exc)}
    return {"argv": argv, "proc": proc, "out": out, "err": err, "started": time.time()}


def _finish(job, timed_out):
    if "proc" not in job:
        return {"argv": job["argv"], "rc": 127, "stdout": "", "stderr": job["error"], "timed_out": False}
    if timed_out:
        _process.kill_process_group(job["proc"])
    job["proc"].wait()
    outputs = []
    for handle in (job["out"], job["err"]):
        handle.seek(0)
        outputs.append(handle.read().decode("utf-8", "replace"))
        handle.close()
    return {
        "argv": job["argv"],
        "rc": job["proc"].returncode,
        "stdout": outputs[0],
        "stderr": outputs[1],
        "timed_out": timed_out,
    }


def run_many(argvs, timeout, parallel=8):
    """Run every argv (at most ``parallel`` at once, from this thread); results in argv order."""
    pending = list(enumerate(argvs))
    running, results = {}, {}
    try:
        while pending or running:
            while pending and len(running) < max(1, int(parallel)):
                index, argv = pending.pop(0)
                running[index] = _start(argv)
            for index, job in list(running.items()):
                proc = job.get("proc")
                late = proc is not None and time.time() - job["started"] > timeout
                if proc is None or proc.poll() is not None or late:
                    results[index] = _finish(running.pop(index), late)
            time.sleep(POLL_S)
    finally:
        for job in running.values():
            _finish(job, True)
    return [results[i] for i in range(len(argvs))]


def _failure(result):
    if result["timed_out"]:
        return "%s timed out" % " ".join(result["argv"])
    text = (result["stderr"].strip() or result["stdout"].strip()).splitlines()
    return "%s exited %s: %s" % (" ".join(result["argv"]), result["rc"], text[-1] if text else "no output")


def _outcome(result):
    """(reading, error) of one query's result."""
    if result["rc"] != 0 and not result["stdout"].lstrip().startswith("{"):
        return None, _failure(result)
    try:
        return _mlxlink.parse(result["stdout"]), None
    except (_mlxlink.PhyToolError, _mlxlink.PhyFormatError) as exc:
        return None, "%s: %s" % (" ".join(result["argv"]), exc)


def _target(end):
    if end.get("kind") == "switch":
        return "lid-%d" % int(end["lid"]), int(end["port"])
    port = int(end.get("port") or 1)
    return end["device"], (None if port == 1 else port)  # port 1 is the device's own (mlx5_0 is its PCI function)


def read_ends(ends, executable, timeout=30, parallel=8, histogram=True, runner=run_many):
    """[{"end", "reading", "error", "read_at", "cmd"}] for every end ({"kind": "host", "device", "port"} or
    {"kind": "switch", "lid", "port", ...})."""
    argvs = [_mlxlink.query_argv(executable, *_target(e), histogram=histogram) for e in ends]
    results = runner(argvs, timeout, parallel)
    if histogram:
        retry = [i for i, r in enumerate(results) if r["rc"] != 0 and not r["timed_out"]]
        again = runner(
            [_mlxlink.query_argv(executable, *_target(ends[i]), histogram=False) for i in retry], timeout, parallel
        )
        for i, result in zip(retry, again):
            results[i] = result
    out = []
    for end, result in zip(ends, results):
        reading, error = _outcome(result)
        out.append({"end": end, "reading": reading, "error": error, "read_at": time.time(), "cmd": result["argv"]})
    return out


def clear_ends(ends, executable, timeout=30, parallel=8, runner=run_many):
    """Clear the PHY counters and FEC histogram of every end; [error] for the ones that failed."""
    argvs = [argv for e in ends for argv in _mlxlink.clear_argv(executable, *_target(e))]
    errors = []
    for result in runner(argvs, timeout, parallel):
        if result["rc"] != 0:
            errors.append(_failure(result))
    return errors
