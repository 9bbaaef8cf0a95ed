# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reports of perftest's bandwidth tools (ib_write_bw, ib_read_bw, ib_send_bw) and the failures of every tool.

The argument vector, the parameters and the registry are kinds.py's, the gate gate.py's (one path for
bandwidth and latency).

- ``parse_text(output)``: the console report (header block, result table, warnings) of any
  perftest version we have seen: ``Gb/sec`` / ``MB/sec`` / ``MiB/sec`` tables, tables without
  MsgRate, tab padding, warnings inside the table, server banners, ``-a`` tables and the
  interleaved server+client stream of a loopback run.
- ``parse_json(text, unit)``: the ``--out_json_file`` document.
- ``classify_failure(stdout, stderr, rc)``: one known failure kind with a sentence and a hint.

All bandwidths returned are Gb/s (10^9 bit/s). perftest's ``MB/sec`` (before 24.07) and
``MiB/sec`` (24.07+) are both 2^20 bytes per second.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import scan

TESTS = ("write", "read", "send")

# Gb/s per one unit of each console unit.
_MIB_BITS = 1048576 * 8
UNIT_TO_GBPS = {
    "Gb/sec": 1.0,
    "MB/sec": _MIB_BITS / 1e9,
    "MiB/sec": _MIB_BITS / 1e9,
}
DEFAULT_UNIT = "MiB/sec"  # what perftest prints without --report_gbits (named MB/sec before 24.07)


def to_gbps(value, unit):
    """Convert a bandwidth in one of perftest's console units to Gb/s (10^9 bit/s)."""
    try:
        factor = UNIT_TO_GBPS[unit]
    except KeyError:
        raise ValueError("unknown perftest bandwidth unit %r (expected one of %s)" % (unit, ", ".join(UNIT_TO_GBPS)))
    return float(value) * factor


def from_gbps(gbps, unit):
    """Inverse of to_gbps."""
    return float(gbps) / UNIT_TO_GBPS[unit]


# --------------------------------------------------------------------------------------------
# console output

_SEPARATOR_RE = re.compile(r"^\s*-{10,}\s*$")
_HEADER_RE = re.compile(r"^\s*#bytes\b")
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_TITLE_RE = re.compile(r"^\s*(?P<title>[A-Za-z_]+(?: [A-Za-z_]+)*? BW Test)\s*$")
_BANNER_RE = re.compile(r"Waiting for client to connect")
_WARNING_RE = re.compile(
    r"(?i)\bwarning\b|Conflicting CPU frequency|doesn't supports? |CPU Frequency is not max|"
    r"peak won't be measured"
)

# Header keys (lower-cased, spaces squeezed) -> (result key, converter).
_HEADER_KEYS = {
    "device": ("device", str),
    "transport type": ("transport", str),
    "link type": ("link_type", str),
    "gid index": ("gid_index", int),
    "mtu": ("mtu", int),
    "number of qps": ("qps", int),
    "connection type": ("connection_type", str),
    "dual-port": ("dual_port", str),
    "using srq": ("using_srq", str),
    "tx depth": ("tx_depth", int),
    "cq moderation": ("cq_moderation", int),
    "outstand reads": ("outstand_reads", int),
    "max inline data": ("max_inline_data", int),
    "rdma_cm qps": ("rdma_cm_qps", str),
    "data ex. method": ("data_ex_method", str),
    "ibv_wr* api": ("ibv_wr_api", str),
    "pcie relax order": ("pcie_relax_order", str),
}


_TOP_LEVEL = ("device", "transport", "link_type", "gid_index", "mtu", "qps", "connection_type")


def _leading_int(text):
    match = re.match(r"^\s*(\d+)", text)
    return int(match.group(1)) if match else None


def _column_key(name):
    low = name.lower().replace(" ", "")
    if low == "#bytes":
        return "msg_size"
    if low == "#iterations":
        return "iterations"
    if low.startswith("bwpeak"):
        return "bw_peak"
    if low.startswith("bwaverage"):
        return "bw_avg"
    if low.startswith("msgrate"):
        return "msg_rate"
    return low.lstrip("#")


def _unit_of(columns):
    for col in columns:
        match = re.match(r"(?i)^BW\s*(?:peak|average)\s*\[(?P<unit>[^\]]+)\]", col)
        if match:
            return match.group("unit").strip()
    return None


def _num(text):
    return float(text) if "." in text or "e" in text.lower() else int(text)


def empty_result():
    return {
        "rows": [],
        "headline": None,
        "unit": None,
        "test_title": None,
        "bidirectional": False,
        "link_type": None,
        "transport": None,
        "device": None,
        "gid_index": None,
        "mtu": None,
        "qps": None,
        "connection_type": None,
        "server_banner": False,
        "remote_seen": False,
        "peak_measured": True,
        "cuda_device": None,
        "header": {},
        "warnings": [],
    }


def _make_row(values, unit):
    factor = UNIT_TO_GBPS.get(unit, UNIT_TO_GBPS[DEFAULT_UNIT])
    row = {
        "msg_size": int(values["msg_size"]),
        "iterations": int(values["iterations"]) if "iterations" in values else None,
        "bw_peak_gbps": float(values["bw_peak"]) * factor if "bw_peak" in values else None,
        "bw_avg_gbps": float(values["bw_avg"]) * factor,
        "msg_rate_mpps": float(values["msg_rate"]) if "msg_rate" in values else None,
    }
    for key in ("bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps"):
        if row[key] is not None and not math.isfinite(row[key]):
            raise ValueError("%s is not a finite number" % key)
    return row


def _fact(key, value):
    """(result key, value) of one "key : value" pair of the header block; None for a key not read."""
    if key not in _HEADER_KEYS:
        return None
    name, conv = _HEADER_KEYS[key]
    if conv is int:
        value = _leading_int(value)
    if value is None:
        return None
    return name, value


# What one line is to the reader (_TextReader.classify): the kind first, then what applying it needs.
_EMPTY, _HEADER, _NUMBERS, _BANNER, _WARNING, _TITLE, _FACTS = range(7)
_NOTHING = (_EMPTY,)
_BANNER_TEXT = "Waiting for client to connect"  # _BANNER_RE's literal


# a substring of every match of _WARNING_RE, lower-cased
_WARNING_WORDS = ("warning", "conflicting cpu frequency", "doesn't support", "cpu frequency is not max", "peak won't")


def _may_warn(line):
    """Whether _WARNING_RE matches the line, settled without it for most lines. Every one of its alternatives
    holds an "n" and an "r" (which, even case-insensitively, only n/N and r/R match); on an ASCII line,
    where ignoring case is lower-casing, one of _WARNING_WORDS is in the lower-cased line."""
    if not (("n" in line or "N" in line) and ("r" in line or "R" in line)):
        return False
    if line.isascii():
        low = line.lower()
        if not any(word in low for word in _WARNING_WORDS):
            return False
    return bool(_WARNING_RE.search(line))


class _TextReader(object):
    """Reads a console report line by line into an empty_result() (parse_text's state).

    What a line is (classify) depends on the line alone, so it is worked out once per distinct line and kept
    (self.kinds): a report repeated, or a megabyte of one header line, costs a dictionary look-up a line;
    applying it (line) is what depends on the lines before (the columns of the last header)."""

    def __init__(self):
        self.result = empty_result()
        self.columns = None
        self.seen_sizes = {}
        self.warnings = []
        self.kinds = {}

    def line(self, raw):
        """One line, tried as each kind of line in turn (the first that fits takes it)."""
        kind = self.kinds.get(raw)
        if kind is None:
            kind = self.kinds[raw] = self.classify(raw)
        if kind is _NOTHING:
            return
        if kind[0] == _NUMBERS:
            if self.columns:  # a table is open: is this one of its rows (worked out once, when first asked)?
                tokens = kind[3] if len(kind) > 3 else self._tokens(raw, kind)
                if tokens:
                    self._row(tokens)
                    return
            kind = kind[2]  # else the line is what it would be if it held no numbers
        if kind is not _NOTHING:
            self._apply(kind)

    def _tokens(self, raw, kind):
        tokens = kind[1].split()
        tokens = tokens if tokens and all(_NUMBER_RE.match(t) for t in tokens) else None
        self.kinds[raw] = kind + (tokens,)
        return tokens

    @staticmethod
    def classify(raw):
        """The kind of one line as a tuple (see _apply); the line's position does not matter."""
        line = raw.replace("\t", " ").rstrip()
        stripped = line.strip()
        if not stripped:
            return _NOTHING
        if stripped[0] in "-*" and (
            _SEPARATOR_RE.match(line) or stripped.strip("*").strip() == "" or stripped.startswith("* ")
        ):
            return (_BANNER,) if _BANNER_TEXT in line else _NOTHING  # a separator
        if stripped.startswith("#bytes") and _HEADER_RE.match(stripped):
            return _TextReader._header(stripped)
        if stripped[0] == "-" or stripped[0].isdigit():  # where a number (_NUMBER_RE) can start
            # maybe a row of a table: (_NUMBERS, stripped, what it is otherwise[, its tokens when all are numbers])
            return (_NUMBERS, stripped, _TextReader._other(line, stripped))
        return _TextReader._other(line, stripped)

    @staticmethod
    def _header(stripped):
        cols = scan.bandwidth_columns(stripped)
        if cols and _column_key(cols[0]) == "msg_size":
            return (_HEADER, [_column_key(c) for c in cols], _unit_of(cols))
        return (_HEADER, None, None)

    @staticmethod
    def _other(line, stripped):
        """A line that is neither a separator, a table header nor a table row."""
        if _BANNER_TEXT in line:
            return (_BANNER,)
        if _may_warn(line):
            return (_WARNING, stripped, "peak won't be measured" in line.lower())
        title = _TITLE_RE.match(line) if "Test" in line else None
        if title:
            return (_TITLE, title.group("title"), "bidirectional" in title.group("title").lower())
        return _TextReader._facts(line, stripped)

    @staticmethod
    def _facts(line, stripped):
        """The header block: addresses, the CUDA device, "key : value" pairs, as (_FACTS, remote, cuda, facts)."""
        if stripped[0] in "rRlLgG":  # only these lower to an "r", "l" or "g"
            low = stripped[:16].lower()
            if low.startswith("remote address"):
                return (_FACTS, True, None, ())
            if low.startswith(("local address", "gid:")):
                return _NOTHING
        cuda = scan.bracketed_after(line, "device name = [") if "device name = [" in line else None
        if cuda:
            return (_FACTS, False, cuda, ())
        facts = []
        for key, value in scan.header_pairs(line) if ":" in line else ():
            fact = _fact(" ".join(key.lower().split()), value)
            if fact:
                facts.append(fact)
        return (_FACTS, False, None, facts) if facts else _NOTHING

    def _apply(self, kind):
        what, result = kind[0], self.result
        if what == _BANNER:
            result["server_banner"] = True
        elif what == _HEADER:
            if kind[1]:
                self.columns = list(kind[1])
                if kind[2]:
                    result["unit"] = kind[2]
        elif what == _WARNING:
            if kind[2]:
                result["peak_measured"] = False
            self.warnings.append(kind[1])
        elif what == _TITLE:
            result["test_title"], result["bidirectional"] = kind[1], kind[2]
        elif what == _FACTS:
            self._facts_seen(kind)

    def _facts_seen(self, kind):
        result = self.result
        if kind[1]:
            result["remote_seen"] = True
        elif kind[2]:
            result["cuda_device"] = kind[2]
        for name, value in kind[3]:
            result["header"][name] = value
            if name in _TOP_LEVEL:
                result[name] = value

    def _row(self, tokens):
        if len(tokens) == len(self.columns) and "msg_size" in self.columns and "bw_avg" in self.columns:
            try:
                row = _make_row(dict(zip(self.columns, tokens)), self.result["unit"] or DEFAULT_UNIT)
            except (ValueError, OverflowError):
                return
            self._add_row(row)

    def _add_row(self, row):
        key = row["msg_size"]
        if key in self.seen_sizes:
            if self.seen_sizes[key] != row:
                self.warnings.append(
                    "two different result rows for %d bytes (interleaved output?): kept the first" % key
                )  # noqa: E501
            return
        self.seen_sizes[key] = row
        self.result["rows"].append(row)

    def finish(self):
        result = self.result
        result["warnings"] = list(dict.fromkeys(self.warnings))
        if result["rows"]:
            result["headline"] = max(result["rows"], key=lambda r: r["msg_size"])
            if all(r["bw_peak_gbps"] == 0 for r in result["rows"] if r["bw_peak_gbps"] is not None):
                result["peak_measured"] = False
        return result


def parse_text(output):
    """Parse perftest console output (stdout, or stdout+stderr) into a dict; never raises.

    Returns rows (one per message size, in the order printed, exact duplicates of an interleaved
    server+client stream dropped), the headline row (largest message size), the unit seen, header
    facts (device, link_type, transport, gid_index, mtu...), whether a server banner and a remote
    address were printed, and warning lines (also those printed inside the table).

    Linear in the length of the output whatever it holds (perftest/scan.py). A last line without a line break
    was cut: it is not read (a cut number is refused, not shortened) and a warning says so.
    """
    if not output:
        return empty_result()
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    return parse_lines(*scan.complete_lines(str(output)))


def parse_lines(lines, cut):
    """parse_text of a text already split by scan.complete_lines (the latency parser reads the same lines)."""
    reader = _TextReader()
    if cut is not None and cut.strip():
        reader.warnings.append("the output ends inside a line (cut?), not read: %s" % cut.strip()[:120])
    for raw in lines:
        reader.line(raw)
    return reader.finish()


# --------------------------------------------------------------------------------------------
# --out_json file

_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")


def _json_document(text):
    """The --out_json document as a dict (trailing commas of perftest before 24.01 tolerated)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        try:
            doc = json.loads(_TRAILING_COMMA_RE.sub(r"\1", text))
        except ValueError as exc:
            raise ValueError("perftest JSON report is not valid JSON: %s" % exc)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise ValueError("perftest JSON report has no 'results' object")
    return doc


def _json_values(res):
    """The row values of a results object, under the console's column keys."""
    try:
        values = {"msg_size": res["MsgSize"], "bw_avg": res["BW_average"]}
    except KeyError as exc:
        raise ValueError("perftest JSON report lacks results.%s" % exc.args[0])
    for key, name in (("iterations", "n_iterations"), ("bw_peak", "BW_peak"), ("msg_rate", "MsgRate")):
        if name in res:
            values[key] = res[name]
    return values


def parse_json(text, unit=None):
    """Parse an --out_json_file document.

    perftest writes the values in the console's unit (Gb/sec with --report_gbits, else MB/MiB per
    second) and does not name it, so the caller passes ``unit`` (default MiB/sec). Documents of
    perftest before 24.01 may carry trailing commas; they are tolerated. Raises ValueError when the
    text holds no results object.
    """
    unit = unit or DEFAULT_UNIT
    if unit not in UNIT_TO_GBPS:
        raise ValueError("unknown perftest bandwidth unit %r" % (unit,))
    doc = _json_document(text)
    info = doc.get("test_info") if isinstance(doc.get("test_info"), dict) else {}
    values = _json_values(doc["results"])
    try:
        row = _make_row(values, unit)
    except (TypeError, ValueError) as exc:
        raise ValueError("perftest JSON report has a non-numeric result: %s" % exc)
    out = empty_result()
    out.update(
        rows=[row],
        headline=row,
        unit=unit,
        test_info=info,
        test_title=info.get("test"),
        device=info.get("Device"),
        link_type=info.get("Link_type"),
        transport=info.get("Transport_type"),
        gid_index=info.get("GID_index"),
        mtu=info.get("Mtu"),
        qps=info.get("Number_of_qps"),
        connection_type=info.get("Connection_type"),
    )
    out["peak_measured"] = row["bw_peak_gbps"] not in (None, 0)
    return out


# --------------------------------------------------------------------------------------------
# failures

WC_STATUS = {
    1: "IBV_WC_LOC_LEN_ERR",
    2: "IBV_WC_LOC_QP_OP_ERR",
    4: "IBV_WC_LOC_PROT_ERR",
    5: "IBV_WC_WR_FLUSH_ERR",
    9: "IBV_WC_REM_INV_REQ_ERR",
    10: "IBV_WC_REM_ACCESS_ERR",
    11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR",
    13: "IBV_WC_RNR_RETRY_EXC_ERR",
}

_HINTS = {
    "no_device": (
        "check `ibstat` / `ibv_devices` on this host, that the driver "
        "(e.g. mlx5_ib) is loaded, that `device` names an existing device, and in a container that "
        "/dev/infiniband is passed through"
    ),
    "connect": (
        "start the server side first (perftest_bw role=server) and check the server address, that "
        "tcp_port is the same on both sides and that no firewall blocks it"
    ),
    "port_busy": (
        "another process (often a leftover perftest server) holds tcp_port: pick another tcp_port or "
        "stop that process (`ss -ltnp`)"
    ),
    "modify_qp_rtr": (
        "on RoCE pass the RoCE v2 GID index of an IPv4 address "
        "(gid_index, see ib_facts roce_v2_ipv4_gid_index or `show_gids`); check that the port is ACTIVE "
        "and that both sides use the same MTU and link layer"
    ),
    "mr_alloc": (
        "raise the locked-memory limit (`ulimit -l unlimited`, "
        "LimitMEMLOCK=infinity, /etc/security/limits.d) and, with use_cuda, load nvidia-peermem or use a "
        "dma-buf capable driver"
    ),
    "completion_error": (
        "check both ports' error counters (ib_counters) and the cable/switch "
        "port; status 12 (retry exceeded) points at the link or a dead peer, status 4 (local protection) "
        "with use_cuda at GPUDirect memory registration"
    ),
    "crash": "rerun by hand to see the backtrace and check the perftest build and driver",
    "bw_limit": "the link is slower than the --limit_bw given in extra_args",
    "timeout": "make sure the client side runs within timeout (the server serves one client), or raise timeout",
    "unknown": "read the stdout and stderr returned by the task",
}

_FAILURE_PATTERNS = [
    (
        "no_device",
        re.compile(
            r"Did not detect devices|Unable to find the Infiniband/RoCE device|No IB devices found|"
            r"IB device \S+ not found|Couldn't get device list|Failed to get IB devices list"
        ),
    ),
    ("port_busy", re.compile(r"Couldn't listen to port\s*(?P<port>\d+)?")),
    ("connect", re.compile(r"Couldn't connect to (?P<target>\S+?)(?::(?P<port>\d+))?\s*$", re.M)),
    ("modify_qp_rtr", re.compile(r"Failed to modify QP (?P<qpn>\S+) to RTR")),
    (
        "mr_alloc",
        re.compile(r"Couldn't allocate MR|Failed to create MR|failed to create mr|Couldn't create IB resources"),
    ),
    (
        "completion_error",
        re.compile(
            r"Completion with error|Failed status (?P<status>\d+):?(?:.*?syndro?m (?P<syndrome>0x[0-9a-fA-F]+))?"
        ),
    ),
    ("bw_limit", re.compile(r"BW result is below bw limit")),
]
_CRASH_RE = re.compile(r"Segmentation fault|core dumped|Aborted|Bus error|Killed")
_STATUS_RE = re.compile(r"Failed status (?P<status>\d+):?(?:.*?syndro?m (?P<syndrome>0x[0-9a-fA-F]+))?")


def _first_line(text, pattern):
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()
    return None


def _completion_message(text, match):
    status = _STATUS_RE.search(text)
    if not status:
        return "perftest got a completion with error"
    num = int(status.group("status"))
    message = "perftest got a completion with error: status %d (%s)" % (num, WC_STATUS.get(num, "?"))
    if status.group("syndrome"):
        message += ", vendor syndrome %s" % status.group("syndrome")
    return message


def _connect_message(text, match):
    port = match.group("port")
    return "perftest could not connect to the server at %s%s" % (match.group("target"), ":" + port if port else "")


# the sentence of each known failure, from the text and the pattern's match
_MESSAGES = {
    "no_device": lambda text, match: "perftest found no RDMA device (%s)" % _first_line(text, match.re),
    "port_busy": lambda text, match: (
        "perftest could not listen on TCP port %s (already in use)" % (match.group("port") or "?")
    ),
    "connect": _connect_message,
    "modify_qp_rtr": lambda text, match: (
        "perftest failed to modify QP %s to RTR (the two ends could not be connected)" % match.group("qpn")
    ),
    "mr_alloc": lambda text, match: "perftest could not register its memory region (%s)" % _first_line(text, match.re),
    "completion_error": _completion_message,
    "bw_limit": lambda text, match: "perftest reported its BW result below the --limit_bw value",
}


def _decoded(value):
    value = value or ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _known_failure(text, crash_note):
    """The first known failure pattern in the text, as {kind, message, hint}; None when there is none."""
    for kind, pattern in _FAILURE_PATTERNS:
        match = pattern.search(text)
        if match:
            return {"kind": kind, "message": _MESSAGES[kind](text, match) + crash_note, "hint": _HINTS[kind]}
    return None


def _exit_failure(text, rc, parsed, expect_table):
    """A run that matched no known failure: a non-zero exit, or no result table where one was due."""
    if rc not in (0, None):
        last = _last_meaningful_line(text)
        message = "perftest exited with code %s" % rc + (" (last line: %s)" % last if last else "")
        return {"kind": "unknown", "message": message, "hint": _HINTS["unknown"]}
    if expect_table and not parsed["rows"]:
        message = "perftest exited with code %s but printed no result table" % rc
        return {"kind": "unknown", "message": message, "hint": _HINTS["unknown"]}
    return None


def classify_failure(stdout, stderr, rc, parsed=None, expect_table=True):
    """Classify a finished perftest run; None when it succeeded (rc 0 and a result table).

    ``parsed`` is any parser's result with a ``rows`` list (parse_text, or the latency parser's);
    ``expect_table=False`` accepts a clean exit without a table (ib_read_lat's server prints none).

    Returns {kind, message, hint}. The specific cause wins over its consequence: "Couldn't allocate
    MR" followed by a segmentation fault is mr_alloc (the message mentions the crash).
    """
    stdout, stderr = _decoded(stdout), _decoded(stderr)
    text = stdout + "\n" + stderr
    crashed = bool(_CRASH_RE.search(text)) or (rc is not None and (rc < 0 or rc >= 128))
    crash_note = " and then crashed (%s)" % _crash_reason(text, rc) if crashed else ""
    known = _known_failure(text, crash_note)
    if known:
        return known
    if crashed:
        return {"kind": "crash", "message": "perftest crashed (%s)" % _crash_reason(text, rc), "hint": _HINTS["crash"]}
    return _exit_failure(text, rc, parse_text(stdout) if parsed is None else parsed, expect_table)


def _crash_reason(text, rc):
    line = _first_line(text, _CRASH_RE)
    if line:
        return line
    if rc is not None and rc < 0:
        return "killed by signal %d" % -rc
    if rc is not None and rc >= 128:
        return "exit code %d, signal %d" % (rc, rc - 128)
    return "unknown"


def _last_meaningful_line(text):
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped and not _SEPARATOR_RE.match(stripped):
            return stripped
    return None
