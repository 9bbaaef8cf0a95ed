# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's report directory: one folder per run, a ``latest`` link, and retention.

``<base>/<run id>/`` holds one run's files (fabric_validate writes report.json, junit.xml, summary.md,
report.html, ibtune.prom and plan/ there); ``<base>/latest`` points at the newest run. A run folder carries a
marker file, so retention removes only folders this code made, never anything else a user keeps in ``base``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import time

MARKER = ".ibtune-run"
LATEST = "latest"
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class RunDirError(Exception):
    """A report directory that cannot be used, in one sentence naming the variable and the fix."""


def default_run_id(now=None):
    """The UTC time, sortable: 20261202T003512Z."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def _make_base(base, variable):
    if os.path.exists(base) and not os.path.isdir(base):
        raise RunDirError(
            "%s=%s is not a directory (a file is in the way): set %s to a directory the controller user can write"
            % (variable, base, variable)
        )
    try:
        os.makedirs(base, exist_ok=True)
    except OSError as exc:
        raise RunDirError(
            "%s=%s cannot be created (%s): set %s to a directory the controller user can write, or create it"
            % (variable, base, exc.strerror or exc, variable)
        )
    if not os.access(base, os.W_OK | os.X_OK):
        raise RunDirError(
            "%s=%s is not writable by this user: set %s to a directory the controller user can write"
            % (variable, base, variable)
        )


def runs(base):
    """The run folders in base (those with the marker), oldest first."""
    try:
        names = os.listdir(base)
    except OSError:
        return []
    found = [n for n in names if n != LATEST and os.path.isfile(os.path.join(base, n, MARKER))]
    return sorted(found, key=lambda n: (os.path.getmtime(os.path.join(base, n, MARKER)), n))


def _free_name(base, run_id):
    name, n = run_id, 1
    while os.path.exists(os.path.join(base, name)):
        n += 1
        name = "%s-%d" % (run_id, n)
    return name


def _point_latest(base, name):
    link = os.path.join(base, LATEST)
    if os.path.lexists(link) and not os.path.islink(link):
        raise RunDirError(
            "%s exists and is not a link: move it away, ibtune keeps the link to the newest run there" % link
        )
    tmp = os.path.join(base, ".%s.%d" % (LATEST, os.getpid()))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(name, tmp)
    os.replace(tmp, link)


def prune(base, keep, current):
    """Remove the oldest run folders so that ``keep`` remain (0 keeps every run); never ``current``."""
    if not keep:
        return []
    old = [n for n in runs(base) if n != current]
    removed = old[: max(0, len(old) - (keep - 1))]
    for name in removed:
        shutil.rmtree(os.path.join(base, name))
    return removed


def start(base, run_id=None, keep=20, variable="ibtune_report_dir", now=None, check_mode=False):
    """Make ``<base>/<run id>``, point ``latest`` at it and apply retention.

    Returns {base, run_id, run_dir, latest, removed, changed} (changed: whether anything was written). In check
    mode nothing is written (the base is still checked) and ``run_dir`` is where a real run would write.
    """
    base = os.path.abspath(os.path.expanduser(str(base)))
    run_id = str(run_id or default_run_id(now))
    if not _RUN_ID_RE.match(run_id):
        raise RunDirError(
            "run id %r is not a plain folder name: use letters, digits, '.', '_' and '-' (e.g. %s)"
            % (run_id, default_run_id(now))
        )
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise RunDirError("ibtune_report_keep=%r must be a whole number >= 0 (0 keeps every run)" % (keep,))
    if check_mode:
        if os.path.exists(base) and not os.path.isdir(base):
            raise RunDirError("%s=%s is not a directory: set %s to a directory" % (variable, base, variable))
        name = run_id if not os.path.exists(os.path.join(base, run_id)) else _free_name(base, run_id)
        return _result(base, name, [], False)
    _make_base(base, variable)
    name = _free_name(base, run_id)
    os.makedirs(os.path.join(base, name))
    with open(os.path.join(base, name, MARKER), "w") as handle:
        handle.write("%s\n" % run_id)
    _point_latest(base, name)
    return _result(base, name, prune(base, keep, name), True)


def _result(base, name, removed, changed):
    return {
        "base": base,
        "run_id": name,
        "run_dir": os.path.join(base, name),
        "latest": os.path.join(base, LATEST),
        "removed": removed,
        "changed": changed,
    }


def _preflight_verdict(hosts, problems, check_mode):
    """The verdict when no pair was measured (check mode, one host, preflight tags only)."""
    failed = {}
    for host in hosts:
        if host not in problems:
            failed[host] = "unreachable, or failed before its preflight ran: it was not checked"
        elif problems[host]:
            failed[host] = "FAILED preflight: " + "; ".join(p.get("reason") or "?" for p in problems[host])
    why = (
        "check mode: preflight and counters only, no pair measured"
        if check_mode
        else "one host: per-node checks only, no pair to test"
        if len(hosts) == 1
        else "preflight only"
    )
    if failed:
        names = ", ".join(sorted(failed)[:10]) + (" ..." if len(failed) > 10 else "")
        msg = "FAILED (%s): %d of %d host(s) failed preflight: %s" % (why, len(failed), len(hosts), names)
    else:
        msg = "PASSED (%s): %d host(s) passed preflight" % (why, len(hosts))
    return {"passed": not failed, "msg": msg, "hosts": failed, "measured": False}


def verdict(hosts, reports, problems, check_mode=False):
    """The run's verdict for the controller and each culprit: {passed, msg, hosts: {host: reason}, measured}.

    ``reports``: {host: fabric_report's registered result} (the same run_once result on every host, or absent);
    ``problems``: {host: fabric_validate's preflight problems} for the hosts whose preflight ran. With a report,
    the report judges (its message, its failed_hosts); without one, preflight does.
    """
    hosts = list(hosts or [])
    report = next((r for r in (reports.get(h) for h in hosts) if isinstance(r, dict) and "passed" in r), None)
    if report is None:
        return _preflight_verdict(hosts, problems or {}, check_mode)
    failed = {}
    for item in report.get("failed_hosts") or []:
        if item.get("host") in hosts:
            failed.setdefault(item["host"], []).append(item.get("reason") or "failed")
    return {
        "passed": bool(report["passed"]),
        "msg": report.get("msg") or ("PASSED" if report["passed"] else "FAILED"),
        "hosts": dict((h, "; ".join(r)) for h, r in failed.items()),
        "measured": True,
    }
