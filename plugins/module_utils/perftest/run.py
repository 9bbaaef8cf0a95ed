# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One side of one perftest run, shared by the perftest_bw and perftest_lat modules.

- ``run_with_retry(argv, params, parse, classify)``: runs perftest (process.run_once: own process
  group, killed on timeout, on signals and on our errors); a client whose server is not listening yet
  is retried every RETRY_SLEEP_S until ``connect_timeout``; SIGTERM/SIGINT/SIGHUP to the module stop
  perftest and end the run with the failure kind ``interrupted``.
- ``timeout_failure``, ``where``, ``resolve_executable``, ``fmt_num``: the sentences and lookups both
  modules print the same way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.host.process import run_once

RETRY_SLEEP_S = 0.5


class Interrupted(Exception):
    def __init__(self, signum):
        super(Interrupted, self).__init__(signum)
        self.signum = signum


def _on_signal(signum, frame):
    raise Interrupted(signum)


def fmt_num(value):
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def where(tool, params):
    """'ib_write_lat mlx5_0:1 -> node2' / 'ib_write_lat mlx5_0:1 (server on TCP port 18515)'."""
    side = "%s %s:%s" % (tool, params["device"], params["ib_port"])
    if params["role"] == "client":
        return "%s -> %s" % (side, params["server"])
    return "%s (server on TCP port %s)" % (side, params["tcp_port"])


def resolve_executable(exe, get_bin_path):
    """(path, None) or (None, one sentence); get_bin_path is AnsibleModule.get_bin_path."""
    if os.sep in exe:
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe, None
        return None, "executable %s is not an executable file: install perftest or fix executable." % exe
    found = get_bin_path(exe)
    if not found:
        return None, "%s is not on PATH: install perftest (ibtune.fabric.rdma_stack does) or set executable." % exe
    return found, None


def timeout_failure(params, run, remote_seen):
    """The failure of a run killed at ``timeout``: a server nobody reached, or a run that hung."""
    limit = fmt_num(params["timeout"])
    if params["role"] == "server" and not (run["connected"] or remote_seen):
        message = "no client connected within %s s" % limit
        hint = "start the client (role=client, same tcp_port) within timeout and check that it reaches this host"
    else:
        message = "perftest did not finish within %s s and was killed" % limit
        hint = "raise timeout above the test duration plus setup, and check the peer side"
    return {"kind": "timeout", "message": message, "hint": hint}


def run_with_retry(argv, params, parse, classify, before_attempt=None):
    """Run one side until it is done; returns {attempts, elapsed_s, stdout, stderr, rc, parsed, failure,
    interrupted}.

    ``parse(text)`` reads stdout+stderr; ``classify(run, parsed)`` returns (parsed, failure or None)
    (the bandwidth module merges its JSON file there); ``before_attempt()`` runs before each start.
    ``params``: role, timeout, connect_timeout, tcp_port. ``interrupted`` is the signal number that
    stopped the run, else None.
    """
    start = time.monotonic()
    connect_deadline = start + float(params.get("connect_timeout") or 0)
    outcome = {
        "attempts": 0,
        "elapsed_s": 0.0,
        "stdout": "",
        "stderr": "",
        "rc": None,
        "parsed": parse(""),
        "failure": None,
        "interrupted": None,
    }
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        try:
            previous[signum] = signal.signal(signum, _on_signal)
        except ValueError:  # not the main thread: rely on run_once's finally and PDEATHSIG
            break
    try:
        while True:
            outcome["attempts"] += 1
            if before_attempt:
                before_attempt()
            server_port = params["tcp_port"] if params["role"] == "server" else None
            run = run_once(argv, params["timeout"], server_port)
            outcome.update(stdout=run["stdout"], stderr=run["stderr"], rc=run["rc"])
            parsed = parse(run["stdout"] + "\n" + run["stderr"])
            outcome["parsed"] = parsed
            if run["timed_out"]:
                outcome["failure"] = timeout_failure(params, run, parsed.get("remote_seen"))
                break
            parsed, failure = classify(run, parsed)
            outcome.update(parsed=parsed, failure=failure)
            if (
                params["role"] == "client"
                and failure
                and failure["kind"] == "connect"
                and time.monotonic() + RETRY_SLEEP_S < connect_deadline
            ):
                time.sleep(RETRY_SLEEP_S)
                continue
            break
    except Interrupted as exc:
        outcome["interrupted"] = exc.signum
        outcome["failure"] = {
            "kind": "interrupted",
            "message": "the module got signal %d" % exc.signum,
            "hint": "perftest was stopped; rerun",
        }
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    outcome["elapsed_s"] = round(time.monotonic() - start, 3)
    failure = outcome["failure"]
    if failure and failure["kind"] == "connect" and outcome["attempts"] > 1:
        failure["message"] += " (%d attempts in %.1f s, connect_timeout %s s)" % (
            outcome["attempts"],
            outcome["elapsed_s"],
            fmt_num(params["connect_timeout"]),
        )
    return outcome
