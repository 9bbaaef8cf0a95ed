# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The BER check lines of ``ibdiagnet2.log`` (pure): what ibdiagnet --get_phy_info itself judged, per port.

Two kinds of line are read, every other line is ignored:

- a check's outcome, ``-I- <check> finished successfully`` / ``-E- <check> finished with errors`` (or ``-W-``
  ... ``with warnings``), for a check whose name holds ``BER`` (NVIDIA's manual: "Contact Support if
  Symbol/Effective BER Check finished with errors"; the same form as the real ``Ports counters value Check
  finished with errors`` lines other tools match);
- a per-port ``-E-``/``-W-`` line naming a BER, ``<port> - <what> ... value=<v> ... threshold=<t>`` (the shape of
  ibdiagnet's real counter lines, ``r9i1n24/U1/P1 - "symbol_error_counter" increased during the run
  (difference value=117,difference allowed threshold=1)``); the port is ``<name or S<guid>/N<guid>>/P<n>``.

A BER line without a port ``/P<n>``, or whose value or threshold is not a number, raises PhyFormatError naming
the line; ``N/A`` is None, never 0; ``15E-255`` is 0 (values.ber).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import values as _v
from ansible_collections.ibtune.fabric.plugins.module_utils.phy.mlxlink import PhyFormatError

_OUTCOME = re.compile(r"^-([IWE])-\s+(?P<check>.*\bBER\b.*?)\s+finished\s+(?P<result>successfully|with \w+)\s*$")
_PORT_LINE = re.compile(r"^-([WE])-\s+(?P<port>\S+)\s+-\s+(?P<what>.*\bBER\b.*)$", re.IGNORECASE)
_PORT = re.compile(r"^(?:S(?P<guid>[0-9a-fA-F]{16})/N[0-9a-fA-F]{16}|(?P<name>.+?))/P(?P<port>\d+)$")
_VALUE = re.compile(r"\bvalue\s*[=:]\s*(?P<v>[^,)\s]+)", re.IGNORECASE)
_THRESHOLD = re.compile(r"\bthreshold\s*[=:]\s*(?P<v>[^,)\s]+)", re.IGNORECASE)
SEVERITY = {"E": "error", "W": "warning", "I": "info"}


def _port(token, number):
    match = _PORT.match(token)
    if not match:
        raise PhyFormatError(
            "ibdiagnet2.log line %d: port %r is not <name>/P<n> or S<guid>/N<guid>/P<n>" % (number, token)
        )
    guid = match.group("guid")
    return {
        "guid": ("0x" + guid.lower()) if guid else None,
        "name": match.group("name"),
        "port": int(match.group("port")),
    }


def _figure(pattern, text, number, what):
    match = pattern.search(text)
    if not match:
        return None
    try:
        return _v.ber(match.group("v"))
    except _v.BadValue as exc:
        raise PhyFormatError("ibdiagnet2.log line %d: %s %s" % (number, what, exc))


def _finding(match, number, line):
    out = _port(match.group("port"), number)
    what = match.group("what").strip()
    out.update(
        severity=SEVERITY[match.group(1).upper()],
        what=what,
        value=_figure(_VALUE, what, number, "value"),
        threshold=_figure(_THRESHOLD, what, number, "threshold"),
        line=number,
        text=line.strip(),
    )
    return out


def parse_log(text):
    """{"checks": [{check, severity, result, line}], "findings": [{guid, name, port, severity, what, value,
    threshold, line, text}]} from an ibdiagnet2.log; PhyFormatError names a malformed BER line."""
    checks, findings = [], []
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = _v.strip_ansi(line).strip()
        outcome = _OUTCOME.match(stripped)
        if outcome:
            checks.append(
                {
                    "check": outcome.group("check"),
                    "severity": SEVERITY[outcome.group(1)],
                    "result": outcome.group("result"),
                    "line": number,
                }
            )
            continue
        port_line = _PORT_LINE.match(stripped)
        if port_line:
            findings.append(_finding(port_line, number, stripped))
    return {"checks": checks, "findings": findings}
