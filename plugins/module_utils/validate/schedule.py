# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one host's sides of a validation pass, self-timed: every round, every rail, one process.

The controller plans the pass once and gives each host only its own sides (see plan.py); this
host then runs them without any Ansible round trip between rounds:

- rounds run in order; round k+1 starts as soon as every side of round k has ended here;
- within a round a host is either server or client of one pair, on every common rail at once;
- a server listens from the round's start; when no client reached it within ``connect_timeout``
  it is stopped (its client gave up or never came), otherwise it gets ``duration + slack`` from
  the moment the client connected;
- a client retries (perftest tries once) until its server listens, within ``connect_timeout``,
  then gets ``duration + slack`` for the test;
- every child runs in its own process group and dies with us: only processes this runner started
  are ever signalled, never anything found by name.

Everything runs in the calling (main) thread: processes are polled, never waited on in threads,
because preexec_fn and PR_SET_PDEATHSIG are only safe from the thread that lives as long as the
children.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import tempfile
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.host import process
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds

POLL_S = 0.05
RETRY_SLEEP_S = 0.2  # first retry; doubles up to RETRY_MAX_S (each try starts a process)
RETRY_MAX_S = 1.0
# A server with no client after connect_timeout (+ this) is stopped. Kept small on purpose: the
# delay a stopped server carries into its next round must stay below its next partner's
# connect window, or one dead host would make innocent pairs fail after it.
SERVER_GRACE_S = 2.0
TAIL_CHARS = 2000
# Keys copied from a side's spec into its result.
SIDE_KEYS = ("pass", "round", "role", "host", "rail", "device", "port", "peer", "address", "tcp_port")
REQUIRED_SIDE_KEYS = ("round", "role", "host", "peer", "rail", "device", "tcp_port")


def check_sides(sides):
    """Problems (sentences) with a slice of sides; empty when runnable."""
    problems = []
    for index, side in enumerate(sides or []):
        if not isinstance(side, dict):
            problems.append("sides[%d] must be a dict, got %r" % (index, side))
            continue
        lacking = [k for k in REQUIRED_SIDE_KEYS if side.get(k) in (None, "")]
        if lacking:
            problems.append("sides[%d] lacks %s" % (index, ", ".join(lacking)))
        if side.get("role") not in ("server", "client"):
            problems.append("sides[%d] role=%r must be server or client" % (index, side.get("role")))
        elif side["role"] == "client" and not side.get("address"):
            problems.append("sides[%d] is a client without the server's address" % index)
        if len(problems) >= 5:
            break
    return problems


def _tail(text):
    return text if len(text) <= TAIL_CHARS else "..." + text[-TAIL_CHARS:]


class SideRun(object):
    """One side (server or client, one rail) of one pair in one round: a small state machine."""

    def __init__(self, spec, settings, clock):
        self.spec = spec
        self.settings = settings
        self.clock = clock
        self.role = spec["role"]
        params = dict(settings["params"])
        params.update(
            role=self.role,
            device=spec["device"],
            ib_port=spec.get("port") or 1,
            tcp_port=spec["tcp_port"],
            server=spec.get("address") if self.role == "client" else None,
        )
        if spec.get("gid_index") is not None:
            params["gid_index"] = spec["gid_index"]
        self.argv = testkinds.build_argv(settings["test"], params)
        self.proc = None
        self.files = None
        self.attempts = 0
        self.started = None
        self.attempt_started = None
        self.retry_sleep = RETRY_SLEEP_S
        self.connected_at = None
        self.next_try = None
        self.done = False
        self.result = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, now):
        self.started = now if self.started is None else self.started
        self.attempt_started = now
        self.attempts += 1
        # closed in _output() or stop(): they outlive this call, so no context manager
        self.files = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115
        try:
            self.proc = process.spawn(self.argv, self.files[0], self.files[1])
        except OSError as exc:
            self._finish(
                None, "", str(exc), {"kind": "no_executable", "message": "cannot run %s: %s" % (self.argv[0], exc)}
            )
        self.next_try = None

    def _output(self):
        out = []
        for handle in self.files:
            handle.seek(0)
            out.append(handle.read().decode("utf-8", "replace"))
            handle.close()
        self.files = None
        return out

    def _deadline(self):
        s = self.settings
        if self.role == "server":
            if self.connected_at is None:
                # nobody came: the client gave up or was never started
                return self.started + s["connect_timeout"] + SERVER_GRACE_S
            return self.connected_at + s["run_s"] + s["slack"]
        # a client's attempt that started inside the connect window gets the whole test time
        return self.attempt_started + s["run_s"] + s["slack"]

    def poll(self, now, established=()):
        """Advance; returns True once the side has ended (self.result is set).

        ``established``: local TCP ports with a connection now (read once per loop for all sides).
        """
        if self.done:
            return True
        if self.proc is None:
            if self.next_try is not None and now >= self.next_try:
                self.start(now)
            return self.done
        if self.role == "server" and self.connected_at is None and int(self.spec["tcp_port"]) in established:
            self.connected_at = now
        rc = self.proc.poll()
        if rc is None:
            if now >= self._deadline():
                self._timeout(now)
                return True
            return False
        stdout, stderr = self._output()
        self.proc = None
        parsed = testkinds.parse(self.settings["test"], stdout + "\n" + stderr)
        failure = testkinds.classify_failure(self.settings["test"], stdout, stderr, rc, parsed, role=self.role)
        if (
            self.role == "client"
            and failure
            and failure.get("kind") == "connect"
            and now + self.retry_sleep < self.started + self.settings["connect_timeout"]
        ):
            self.next_try = now + self.retry_sleep
            self.retry_sleep = min(RETRY_MAX_S, self.retry_sleep * 2)
            return False
        if failure and failure.get("kind") == "connect" and self.attempts > 1:
            failure = dict(failure)
            failure["message"] += " (%d attempts in %.1f s, connect_timeout %s s)" % (
                self.attempts,
                now - self.started,
                self.settings["connect_timeout"],
            )
        self._finish(rc, stdout, stderr, failure, parsed)
        return True

    def _timeout(self, now):
        connected = self.connected_at is not None
        process.kill_process_group(self.proc)
        stdout, stderr = self._output()
        self.proc = None
        if self.role == "server" and not connected:
            failure = {
                "kind": "no_client",
                "message": "no client connected within %s s" % self.settings["connect_timeout"],
            }
        else:
            failure = {
                "kind": "timeout",
                "message": "perftest did not finish within %.0f s and was stopped" % (now - self.started),
            }
        parsed = testkinds.parse(self.settings["test"], stdout + "\n" + stderr)
        self._finish(None, stdout, stderr, failure, parsed)

    def stop(self):
        """Stop this side's process group (ours) if it still runs; used on errors and signals."""
        if self.proc is not None:
            process.kill_process_group(self.proc)
            self.proc = None
        if self.files:
            for handle in self.files:
                handle.close()
            self.files = None

    def _finish(self, rc, stdout, stderr, failure, parsed=None):
        self.done = True
        self.proc = None
        res = dict((k, self.spec.get(k)) for k in SIDE_KEYS if k in self.spec)
        res.update(
            test=self.settings["test"],
            kind=testkinds.kind_of(self.settings["test"]),
            rc=rc,
            attempts=self.attempts,
            elapsed_s=round(self.clock() - self.started, 3) if self.started is not None else 0.0,
            failure_kind=failure.get("kind") if failure else None,
            failure=failure.get("message") if failure else None,
        )
        if parsed is not None:
            res.update(testkinds.measurement(self.settings["test"], parsed))
        if failure:
            res["cmd"] = self.argv
            res["stdout_tail"] = _tail(stdout)
            res["stderr_tail"] = _tail(stderr)
        self.result = res


def settings_from(params):
    """Normalise the module options into the runner's settings (times in seconds, floats)."""
    test = params.get("test") or "write"
    testkinds.kind_of(test)  # ValueError names the known tests
    duration = params.get("duration")
    run_s = float(duration) if duration else float(params.get("run_estimate_s") or 5)
    perftest_params = {
        "test": test,
        "size": params.get("size"),
        "duration": duration,
        "iterations": params.get("iterations"),
        "qps": params.get("qps"),
        "bidirectional": params.get("bidirectional"),
        "use_cuda": params.get("use_cuda"),
        "gid_index": params.get("gid_index"),
        "executable": params.get("executable"),
        "extra_args": params.get("extra_args") or [],
    }
    return {
        "test": test,
        "params": perftest_params,
        "connect_timeout": float(params.get("connect_timeout") or 30),
        "run_s": run_s,
        "slack": float(params.get("slack") if params.get("slack") is not None else 20),
    }


def rounds_of(sides):
    """Sides grouped by (pass, round), in order."""
    grouped = {}
    for side in sides:
        grouped.setdefault((int(side.get("pass") or 1), int(side["round"])), []).append(side)
    return [grouped[k] for k in sorted(grouped)]


def write_state(path, state):
    """Progress for the controller (small JSON, replaced atomically)."""
    if not path:
        return
    _files.write_json(path, state, mode=0o600, dir_mode=None, sort_keys=True)  # 0600, as mkstemp made it


def run_schedule(sides, params, state_path=None, clock=time.monotonic, sleep=time.sleep, on_round=None):
    """Run every side, round after round; returns {sides: [...results], rounds, elapsed_s, ...}.

    ``on_round(results)`` (optional) is called with each round's side results as soon as the round has
    ended, before the next one starts: the standalone runner (runner.py) streams them to its side file,
    so a schedule stopped half-way (a Slurm job cancelled, preempted, timed out) has kept every round
    it finished.
    """
    settings = settings_from(params)
    rounds = rounds_of(sides)
    started = clock()
    results = []
    failures = 0
    state = {
        "rounds_total": len(rounds),
        "rounds_done": 0,
        "failures": 0,
        "sides_total": len(sides),
        "started": time.time(),
        "round_seconds": [],
        "finished": False,
    }
    write_state(state_path, state)
    running = []
    try:
        for index, round_sides in enumerate(rounds):
            round_start = clock()
            # servers first, so a client's first try usually finds its server listening
            ordered = sorted(round_sides, key=lambda s: (s["role"] != "server", str(s.get("rail"))))
            running = [SideRun(spec, settings, clock) for spec in ordered]
            for side in running:
                side.start(clock())
            while True:
                now = clock()
                waiting = any(s.role == "server" and s.connected_at is None and not s.done for s in running)
                established = process.established_ports() if waiting else ()
                pending = [side for side in running if not side.poll(now, established)]
                if not pending:
                    break
                sleep(POLL_S)
            round_results = [side.result for side in running]
            running = []
            results.extend(round_results)
            failures += sum(1 for res in round_results if res["failure_kind"])
            if on_round is not None:
                on_round(round_results)
            state.update(
                rounds_done=index + 1,
                failures=failures,
                current_round=round_sides[0]["round"],
                updated=time.time(),
            )
            state["round_seconds"].append(round(clock() - round_start, 3))
            write_state(state_path, state)
    finally:
        for side in running:
            side.stop()
    state["finished"] = True
    write_state(state_path, state)
    return {
        "sides": results,
        "rounds": len(rounds),
        "failures": failures,
        "elapsed_s": round(clock() - started, 3),
        "round_seconds": state["round_seconds"],
    }
