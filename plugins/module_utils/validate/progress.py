# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's progress line for a running pass, from the hosts' schedule state files (pure)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _minutes(seconds):
    seconds = max(0, int(round(seconds)))
    if seconds < 90:
        return "%d s" % seconds
    return "%d min" % int(round(seconds / 60.0))


def line(states, label="pass 1", running=None):
    """One line from {host: state}: the slowest host's round, failing sides so far, and an ETA
    from the mean round time seen so far (None when no state has arrived yet). ``running``: how many hosts
    run the pass (its participants); without it the line can only count the hosts whose state arrived."""
    states = dict((h, s) for h, s in (states or {}).items() if isinstance(s, dict) and s.get("rounds_total"))
    if not states:
        return None
    total = max(s["rounds_total"] for s in states.values())
    done = min(s.get("rounds_done", 0) for s in states.values())
    failing = sum(int(s.get("failures") or 0) for s in states.values())
    times = [t for s in states.values() for t in (s.get("round_seconds") or [])]
    text = "%s: round %d/%d" % (label, min(done + 1, total) if done < total else total, total)
    if done >= total:
        text = "%s: %d/%d rounds done" % (label, total, total)
    text += ", %d side%s failing" % (failing, "" if failing == 1 else "s")
    if times and done < total:
        mean = sum(times) / len(times)
        text += ", ETA %s" % _minutes(mean * (total - done))
    return text + _hosts(len(states), running)


def _hosts(reporting, running):
    """' (4 hosts running, 2 reported so far)' - the count of hosts that run, never only the ones heard from."""
    if not running or running <= reporting:
        count = max(reporting, running or 0)
        return " (%d host%s running)" % (count, "" if count == 1 else "s")
    return " (%d host%s running, %d reported so far)" % (running, "" if running == 1 else "s", reporting)
