# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a benchmark process so that nothing it starts can outlive the module.

The process gets its own session (so its whole process group can be signalled), dies with the
module (PR_SET_PDEATHSIG: Ansible's async timeout SIGKILLs the module's own group, which no longer
holds the child), and is killed with its group on timeout, on our exceptions and on signals.
AnsibleModule.run_command offers none of this, hence subprocess here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import subprocess
import time

KILL_GRACE_S = 2.0


def _die_with_parent(parent_pid):
    """Child side, before exec: get SIGKILL when the module dies, even by SIGKILL (Linux prctl)."""

    def setup():
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - not Linux or no libc: the group kill still applies
            return
        if os.getppid() != parent_pid:  # the module already died between fork and prctl
            os.kill(os.getpid(), signal.SIGKILL)

    return setup


def group_members(pgid):
    """Live (non-zombie) processes whose process group is pgid, from /proc."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as handle:
                stat = handle.read().decode("ascii", "replace")
        except (IOError, OSError):
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            members.append(int(entry))
    return members


def _signal_group(pgid, signum):
    try:
        os.killpg(pgid, signum)
    except OSError:
        pass


def kill_process_group(proc, grace=KILL_GRACE_S):
    """SIGTERM the process group led by proc, SIGKILL what is left after grace seconds, reap the leader.

    The leader is reaped last: until then its pid cannot be reused, so the group id stays ours.
    """
    pgid = proc.pid
    if proc.poll() is None or group_members(pgid):
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and group_members(pgid):
            time.sleep(0.05)
        if group_members(pgid):
            _signal_group(pgid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and group_members(pgid):
                time.sleep(0.05)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass


def _tcp_established(port):
    """True when a TCP connection with local port `port` is ESTABLISHED (a client reached the server)."""
    return port in established_ports()


def established_ports():
    """Local TCP ports with an ESTABLISHED connection in this network namespace (one /proc read)."""
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as handle:
                lines = handle.readlines()[1:]
        except (IOError, OSError):
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "01":
                try:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
                except (IndexError, ValueError):
                    continue
    return ports


def spawn(argv, stdout, stderr):
    """Start argv in its own session and process group, dying with us (PR_SET_PDEATHSIG).

    stdout/stderr are open files (temporary files, so a chatty child never blocks on a full pipe).
    Call from the main thread only: preexec_fn is not safe with other threads running, and the
    death signal follows the thread that forked.
    """
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509
        close_fds=True,
    )


def run_once(argv, timeout, tcp_port=None):
    """Run perftest once in its own process group; never leaves a process behind."""
    result = {"stdout": "", "stderr": "", "rc": None, "timed_out": False, "connected": False}
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # The module is single-threaded, so preexec_fn is safe here; it sets PR_SET_PDEATHSIG.
        preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509
        close_fds=True,
    )
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            result["timed_out"] = True
            result["connected"] = bool(tcp_port) and _tcp_established(tcp_port)
            kill_process_group(proc)
            out, err = proc.communicate()
        result["stdout"] = out.decode("utf-8", "replace")
        result["stderr"] = err.decode("utf-8", "replace")
        result["rc"] = proc.returncode
    finally:
        # Also on our own exceptions (and _Interrupted from a signal): the group goes with us.
        kill_process_group(proc)
    return result
