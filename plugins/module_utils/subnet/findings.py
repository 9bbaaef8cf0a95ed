# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The finding every fabric check returns, the norm checks compare a switch or link with, and the sentence
that sums findings up.

A finding is {check, severity (error|warning), switch, port, peer, msg, ...}: ``msg`` is one sentence
naming switch, port and peer and saying what to do; checks may add keys of their own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter


def finding(check, severity, msg, switch=None, port=None, peer=None, **extra):
    """One finding record."""
    found = {"check": check, "severity": severity, "switch": switch, "port": port, "peer": peer, "msg": msg}
    found.update(extra)
    return found


def norm(values):
    """The fabric's norm of some values: the most common one (a tie goes to the larger value)."""
    counts = Counter(values)
    best = max(counts.values())
    return max(v for v, c in counts.items() if c == best)


def summarize(findings):
    """One line: how many findings and errors, then the errors' sentences (the first ten)."""
    errors = [f for f in findings if f["severity"] == "error"]
    if not findings:
        return "fabric checks passed: no finding"
    head = "%d fabric finding(s), %d error(s)" % (len(findings), len(errors))
    return head + ": " + " ".join(f["msg"] for f in (errors or findings)[:10])
