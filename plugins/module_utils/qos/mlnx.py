# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the output of NVIDIA's ``mlnx_qos -i <netdev>`` (mlnx-tools) into a state dict.

The tool prints (every section optional except PFC and the TC list; lines may carry trailing
spaces; the indentation is a TAB in the tool but often spaces once pasted)::

    DCBX mode: OS controlled | Firmware controlled
    Priority trust state: dscp | pcp
    dscp2prio mapping:                         (only with trust dscp)
            prio:0 dscp:07,06,05,04,03,02,01,00,
            ...                                (a priority with >8 DSCPs wraps onto more lines)
    default priority:                          (newer mlnx-tools; may be followed by "\tprio:N")
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016   (or total_size=)
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   0   0   1   0   0   0   0    (only when buffers are supported)
    tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  0
    tc: 6 ratelimit: 2.0 Gbps, tsa: strict | vendor
             priority:  6

Warnings the tool prints on the way ("Buffers commands are not supported on your system",
"****** WARNING: lldpad service is running ...") are collected, not fatal.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

NUM_PRIOS = 8

_DCBX_RE = re.compile(r"^DCBX mode:\s*(?P<mode>.+?)\s*$")
_TRUST_RE = re.compile(r"^Priority trust state:\s*(?P<trust>\S+)\s*$")
_DSCP_LINE_RE = re.compile(r"^prio:\s*(?P<prio>\d+)\s+dscp:\s*(?P<list>[\d,\s]*)$")
_DEFAULT_PRIO_RE = re.compile(r"^prio:\s*(?P<prio>\d+)\s*$")
_BUFFER_RE = re.compile(r"^Receive buffer size \(bytes\):\s*(?P<list>.*)$")
_CABLE_RE = re.compile(r"^Cable len:\s*(?P<len>\d+)\s*$")
_PFC_ROW_RE = re.compile(r"^(?P<name>priority|enabled|buffer)\s+(?P<vals>[\d\s]+)$")
_TC_RE = re.compile(
    r"^tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+?)\s*,\s*tsa:\s*(?P<tsa>[a-z]+)(?:\s*,\s*bw:\s*(?P<bw>\d+)\s*%)?\s*$"
)
_TC_PRIO_RE = re.compile(r"^priority:\s*(?P<prio>\d+)\s*$")
_RATE_RE = re.compile(r"^(?P<val>\d+(?:\.\d+)?)\s*Gbps$")


class MlnxQosParseError(ValueError):
    """The text is not mlnx_qos output (no PFC configuration and no TC list)."""


def _ints(text):
    return [int(x) for x in re.split(r"[\s,]+", text.strip()) if x != ""]


_SECTIONS = {"dscp2prio mapping:": "dscp2prio", "default priority:": "default_priority", "PFC configuration:": "pfc"}


class _Reader(object):
    """parse_mlnx_qos' state: the result so far, the section a line belongs to and the tc being listed."""

    def __init__(self):
        self.state = {
            "dcbx_mode": None,
            "trust": None,
            "dscp2prio": {},
            "default_priority": None,
            "buffer_size": None,
            "buffer_total": None,
            "cable_len": None,
            "pfc": None,
            "pfc_buffer": None,
            "prio_tc": {},
            "tcs": {},
            "warnings": [],
        }
        self.section = None
        self.current_tc = None

    def line(self, line):
        """One stripped line: the first reader that knows it takes it; anything else is a message of the tool
        (warnings, "not supported" lines)."""
        readers = (self._dcbx, self._trust, self._section_header, self._buffer, self._cable, self._tc)
        if any(reader(line) for reader in readers) or self._in_section(line):
            return
        self.state["warnings"].append(line)

    def _dcbx(self, line):
        match = _DCBX_RE.match(line)
        if match:
            mode = match.group("mode").lower()
            self.state["dcbx_mode"] = next((m for m in ("os", "firmware") if mode.startswith(m)), mode)
            self.section = None
        return bool(match)

    def _trust(self, line):
        match = _TRUST_RE.match(line)
        if match:
            self.state["trust"] = match.group("trust").lower()
            self.section = None
        return bool(match)

    def _section_header(self, line):
        for header, section in _SECTIONS.items():
            if line.startswith(header):
                self.section = section
                return True
        return False

    def _buffer(self, line):
        match = _BUFFER_RE.match(line)
        if not match:
            return False
        self.section = None
        sizes = []
        for item in (item.strip() for item in match.group("list").split(",")):
            if "=" in item:
                self.state["buffer_total"] = int(item.split("=", 1)[1])
            elif item:
                sizes.append(int(item))
        self.state["buffer_size"] = sizes
        return True

    def _cable(self, line):
        match = _CABLE_RE.match(line)
        if match:
            self.state["cable_len"] = int(match.group("len"))
            self.section = None
        return bool(match)

    def _tc(self, line):
        match = _TC_RE.match(line)
        if not match:
            return False
        self.section = "tc"
        self.current_tc = int(match.group("tc"))
        rate_match = _RATE_RE.match(match.group("rate").strip())
        self.state["tcs"][self.current_tc] = {
            "tsa": match.group("tsa"),
            "bw": int(match.group("bw")) if match.group("bw") is not None else None,
            "ratelimit_gbps": float(rate_match.group("val")) if rate_match else None,
            "priorities": [],
        }
        return True

    def _in_section(self, line):
        """A line of the section open now (a DSCP list, the default priority, a PFC row, a tc's priority)."""
        reader = {
            "dscp2prio": self._dscp,
            "default_priority": self._default_priority,
            "pfc": self._pfc_row,
            "tc": self._tc_priority,
        }.get(self.section)
        return bool(reader and reader(line))

    def _dscp(self, line):
        match = _DSCP_LINE_RE.match(line)
        if match:
            prio = int(match.group("prio"))
            for dscp in _ints(match.group("list")):
                self.state["dscp2prio"][dscp] = prio
        return bool(match)

    def _default_priority(self, line):
        match = _DEFAULT_PRIO_RE.match(line)
        if match:
            self.state["default_priority"] = int(match.group("prio"))
        return bool(match)

    def _pfc_row(self, line):
        match = _PFC_ROW_RE.match(line)
        if match:
            key = {"enabled": "pfc", "buffer": "pfc_buffer"}.get(match.group("name"))
            if key:
                self.state[key] = _ints(match.group("vals"))
        return bool(match)

    def _tc_priority(self, line):
        match = _TC_PRIO_RE.match(line)
        if not (match and self.current_tc is not None):
            return False
        prio = int(match.group("prio"))
        self.state["tcs"][self.current_tc]["priorities"].append(prio)
        self.state["prio_tc"][prio] = self.current_tc
        return True


def parse_mlnx_qos(text):
    """Parse mlnx_qos output into a dict.

    Keys: dcbx_mode ('os'|'firmware'|None), trust ('dscp'|'pcp'|'none'|None),
    dscp2prio {dscp: prio} (only listed entries), default_priority (int|None),
    buffer_size [8 ints]|None, buffer_total (int|None), cable_len (int|None),
    pfc [8 ints 0/1], pfc_buffer [8 ints]|None, prio_tc [8 ints]|partial (priority -> tc for
    priorities listed), tcs {tc: {tsa, bw, ratelimit_gbps, priorities}}, warnings [str].
    Raises MlnxQosParseError when the text has neither a PFC table nor a TC list.
    """
    reader = _Reader()
    for raw in (text or "").splitlines():
        line = raw.strip()
        if line:
            reader.line(line)
    state = reader.state
    if state["pfc"] is None and not state["tcs"]:
        raise MlnxQosParseError(
            "this is not mlnx_qos output (no 'PFC configuration' table and no 'tc:' lines): %r" % (text or "")[:200]
        )
    return state


def pfc_priorities(state):
    """Priorities with PFC enabled, sorted."""
    return [prio for prio, enabled in enumerate(state.get("pfc") or []) if enabled]


def dscp_priority(state, dscp):
    """The priority a DSCP lands on under trust dscp, or None when the map does not list it."""
    return (state.get("dscp2prio") or {}).get(dscp)
