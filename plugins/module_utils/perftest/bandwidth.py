# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for perftest's bandwidth tools (ib_write_bw, ib_read_bw, ib_send_bw).

- ``build_argv(params)``: the argument vector (a list, never a shell string).
- ``parse_text(output)``: the console report (header block, result table, warnings) of any
  perftest version we have seen: ``Gb/sec`` / ``MB/sec`` / ``MiB/sec`` tables, tables without
  MsgRate, tab padding, warnings inside the table, server banners, ``-a`` tables and the
  interleaved server+client stream of a loopback run.
- ``parse_json(text, unit)``: the ``--out_json_file`` document.
- ``classify_failure(stdout, stderr, rc)``: one known failure kind with a sentence and a hint.
- ``gate(...)``: the pass/fail threshold from ``min_gbps`` and ``min_link_fraction`` x port rate.

All bandwidths returned are Gb/s (10^9 bit/s). perftest's ``MB/sec`` (before 24.07) and
``MiB/sec`` (24.07+) are both 2^20 bytes per second.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate as _gate
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import scan

TESTS = ("write", "read", "send")
DEFAULT_TCP_PORT = 18515

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


def default_executable(test):
    return "ib_%s_bw" % test


# --------------------------------------------------------------------------------------------
# argv


def _size_is_all(size):
    return str(size).strip().lower() == "all"


def validate_params(params):
    """Return a list of problems (sentences) with the parameters, empty when they are usable."""
    problems = []
    role = params.get("role")
    if role == "client" and not params.get("server"):
        problems.append("role=client needs server (the address of the host running the server side)")
    size = params.get("size")
    if size is not None and not _size_is_all(size):
        try:
            if int(str(size)) <= 0:
                raise ValueError
        except ValueError:
            problems.append("size=%r is neither a positive number of bytes nor 'all'" % (size,))
    for name in ("qps", "ib_port"):
        value = params.get(name)
        if value is not None and int(value) < 1:
            problems.append("%s=%s must be at least 1" % (name, value))
    port = params.get("tcp_port")
    if port is not None and not 1 <= int(port) <= 65535:
        problems.append("tcp_port=%s is not a TCP port (1..65535)" % port)
    duration = params.get("duration")
    if duration is not None and int(duration) < 1:
        problems.append("duration=%s must be at least 1 second (or unset for an iteration count)" % duration)
    if duration is not None and size is not None and _size_is_all(size):
        problems.append("size=all (-a) and duration (-D) cannot be combined: perftest rejects it")
    return problems


def build_argv(params, json_file=None):
    """The perftest argument vector for these module parameters.

    [executable, -d dev, -i port, (-x gid)?, -q qps, -s size | -a, (-D secs)?, (-b)?,
     (--use_cuda=<n>)?, -p tcp_port, (--report_gbits)?, -F, (--out_json --out_json_file=F)?,
     *extra_args, server (client only)]
    """
    test = params.get("test") or "write"
    argv = [params.get("executable") or default_executable(test)]
    argv += ["-d", str(params["device"]), "-i", str(params.get("ib_port") or 1)]
    if params.get("gid_index") is not None:
        argv += ["-x", str(params["gid_index"])]
    argv += ["-q", str(params.get("qps") or 1)]
    size = params.get("size")
    if size is None:
        size = 65536
    if _size_is_all(size):
        argv.append("-a")
    else:
        argv += ["-s", str(int(str(size)))]
    if params.get("duration"):
        argv += ["-D", str(params["duration"])]
    if params.get("bidirectional"):
        argv.append("-b")
    if params.get("use_cuda") is not None:
        argv.append("--use_cuda=%s" % params["use_cuda"])
    argv += ["-p", str(params.get("tcp_port") or DEFAULT_TCP_PORT)]
    if params.get("report_gbits", True):
        argv.append("--report_gbits")
    argv.append("-F")
    if params.get("out_json"):
        if not json_file:
            raise ValueError("out_json needs a json_file path")
        argv += ["--out_json", "--out_json_file=%s" % json_file]
    argv += [str(a) for a in (params.get("extra_args") or [])]
    if params.get("role") == "client":
        argv.append(str(params["server"]))
    return argv


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


class _TextReader(object):
    """Reads a console report line by line into an empty_result() (parse_text's state)."""

    def __init__(self):
        self.result = empty_result()
        self.columns = None
        self.seen_sizes = {}
        self.warnings = []

    def line(self, raw):
        """One line, tried as each kind of line in turn (the first that fits takes it)."""
        line = raw.replace("\t", " ").rstrip()
        stripped = line.strip()
        if not stripped:
            return
        for reader in (self._separator, self._header, self._row, self._banner, self._warning, self._title):
            if reader(line, stripped):
                return
        self._facts(line, stripped)

    def _separator(self, line, stripped):
        if stripped[0] not in "-*":
            return False
        if _SEPARATOR_RE.match(line) or stripped.strip("*").strip() == "" or stripped.startswith("* "):
            if _BANNER_RE.search(line):
                self.result["server_banner"] = True
            return True
        return False

    def _header(self, line, stripped):
        if not (stripped.startswith("#bytes") and _HEADER_RE.match(stripped)):
            return False
        cols = scan.bandwidth_columns(stripped)
        if cols and _column_key(cols[0]) == "msg_size":
            self.columns = [_column_key(c) for c in cols]
            unit = _unit_of(cols)
            if unit:
                self.result["unit"] = unit
        return True

    def _row(self, line, stripped):
        if not self.columns:
            return False
        tokens = stripped.split()
        if not (tokens and all(_NUMBER_RE.match(t) for t in tokens)):
            return False
        if len(tokens) == len(self.columns) and "msg_size" in self.columns and "bw_avg" in self.columns:
            try:
                row = _make_row(dict(zip(self.columns, tokens)), self.result["unit"] or DEFAULT_UNIT)
            except (ValueError, OverflowError):
                return True
            self._add_row(row)
        return True

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

    def _banner(self, line, stripped):
        if _BANNER_RE.search(line):
            self.result["server_banner"] = True
            return True
        return False

    def _warning(self, line, stripped):
        if not _WARNING_RE.search(line):
            return False
        if "peak won't be measured" in line.lower():
            self.result["peak_measured"] = False
        self.warnings.append(stripped)
        return True

    def _title(self, line, stripped):
        title = _TITLE_RE.match(line) if "Test" in line else None
        if title:
            self.result["test_title"] = title.group("title")
            self.result["bidirectional"] = "bidirectional" in title.group("title").lower()
        return bool(title)

    def _facts(self, line, stripped):
        """The header block: addresses, the CUDA device, "key : value" pairs."""
        low = stripped[:16].lower()
        if low.startswith("remote address"):
            self.result["remote_seen"] = True
            return
        if low.startswith(("local address", "gid:")):
            return
        cuda = scan.bracketed_after(line, "device name = [")
        if cuda:
            self.result["cuda_device"] = cuda
            return
        for key, value in scan.header_pairs(line) if ":" in line else ():
            self._fact(" ".join(key.lower().split()), value)

    def _fact(self, key, value):
        if key not in _HEADER_KEYS:
            return
        name, conv = _HEADER_KEYS[key]
        if conv is int:
            value = _leading_int(value)
        if value is None:
            return
        self.result["header"][name] = value
        if name in _TOP_LEVEL:
            self.result[name] = value

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
    reader = _TextReader()
    if not output:
        return reader.result
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    lines, cut = scan.complete_lines(str(output))
    if cut is not None and cut.strip():
        reader.warnings.append("the output ends inside a line (cut?), not read: %s" % cut.strip()[:120])
    for raw in lines:
        reader.line(raw)
    return reader.finish()


# --------------------------------------------------------------------------------------------
# --out_json file

_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")


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
    res = doc["results"]
    info = doc.get("test_info") if isinstance(doc.get("test_info"), dict) else {}
    try:
        values = {"msg_size": res["MsgSize"], "bw_avg": res["BW_average"]}
    except KeyError as exc:
        raise ValueError("perftest JSON report lacks results.%s" % exc.args[0])
    if "n_iterations" in res:
        values["iterations"] = res["n_iterations"]
    if "BW_peak" in res:
        values["bw_peak"] = res["BW_peak"]
    if "MsgRate" in res:
        values["msg_rate"] = res["MsgRate"]
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


def classify_failure(stdout, stderr, rc, parsed=None, expect_table=True):
    """Classify a finished perftest run; None when it succeeded (rc 0 and a result table).

    ``parsed`` is any parser's result with a ``rows`` list (parse_text, or the latency parser's);
    ``expect_table=False`` accepts a clean exit without a table (ib_read_lat's server prints none).

    Returns {kind, message, hint}. The specific cause wins over its consequence: "Couldn't allocate
    MR" followed by a segmentation fault is mr_alloc (the message mentions the crash).
    """
    stdout = stdout or ""
    stderr = stderr or ""
    if isinstance(stdout, bytes):
        stdout = stdout.decode("utf-8", "replace")
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    text = stdout + "\n" + stderr
    crashed = bool(_CRASH_RE.search(text)) or (rc is not None and (rc < 0 or rc >= 128))
    crash_note = ""
    if crashed:
        crash_note = " and then crashed (%s)" % _crash_reason(text, rc)
    for kind, pattern in _FAILURE_PATTERNS:
        match = pattern.search(text)
        if not match:
            continue
        if kind == "no_device":
            message = "perftest found no RDMA device (%s)" % _first_line(text, pattern)
        elif kind == "port_busy":
            message = "perftest could not listen on TCP port %s (already in use)" % (match.group("port") or "?")
        elif kind == "connect":
            target = match.group("target")
            port = match.group("port")
            message = "perftest could not connect to the server at %s%s" % (target, ":" + port if port else "")
        elif kind == "modify_qp_rtr":
            message = "perftest failed to modify QP %s to RTR (the two ends could not be connected)" % (
                match.group("qpn")
            )
        elif kind == "mr_alloc":
            message = "perftest could not register its memory region (%s)" % _first_line(text, pattern)
        elif kind == "completion_error":
            status = _STATUS_RE.search(text)
            if status:
                num = int(status.group("status"))
                message = "perftest got a completion with error: status %d (%s)" % (num, WC_STATUS.get(num, "?"))
                if status.group("syndrome"):
                    message += ", vendor syndrome %s" % status.group("syndrome")
            else:
                message = "perftest got a completion with error"
        else:  # bw_limit
            message = "perftest reported its BW result below the --limit_bw value"
        return {"kind": kind, "message": message + crash_note, "hint": _HINTS[kind]}
    if crashed:
        return {"kind": "crash", "message": "perftest crashed (%s)" % _crash_reason(text, rc), "hint": _HINTS["crash"]}
    if parsed is None:
        parsed = parse_text(stdout)
    if rc not in (0, None):
        last = _last_meaningful_line(text)
        message = "perftest exited with code %s" % rc
        if last:
            message += " (last line: %s)" % last
        return {"kind": "unknown", "message": message, "hint": _HINTS["unknown"]}
    if expect_table and not parsed["rows"]:
        return {
            "kind": "unknown",
            "message": "perftest exited with code %s but printed no result table" % rc,
            "hint": _HINTS["unknown"],
        }
    return None


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


# --------------------------------------------------------------------------------------------
# gate


def gate(bw_avg_gbps, min_gbps=None, min_link_fraction=None, link_rate_gbps=None, bidirectional=False):
    """Threshold = max(min_gbps, min_link_fraction x link rate (x2 when bidirectional)), as gate.py decides it.

    One side's view of the pair: its own port rate is the only rate it knows. Returns {threshold_gbps,
    passed, basis, error}: threshold None and passed True when no gate is given; ``error`` says why
    min_link_fraction could not be applied (unknown port rate). passed is None when there is no measurement
    or the gate cannot be applied.
    """
    threshold = _gate.bandwidth_threshold(
        min_gbps=min_gbps,
        min_link_fraction=min_link_fraction,
        server_rate_gbps=link_rate_gbps,
        bidirectional=bidirectional,
    )
    limit = threshold["threshold_gbps"]
    if limit is None:
        passed = None if (threshold["error"] or bw_avg_gbps is None) else True
    else:
        passed = None if bw_avg_gbps is None else float(bw_avg_gbps) >= limit
    return {"threshold_gbps": limit, "passed": passed, "basis": threshold["basis"], "error": threshold["error"]}


def format_gbps(value):
    return "%.1f" % float(value)
