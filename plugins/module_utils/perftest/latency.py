# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for perftest's latency tools (ib_write_lat, ib_read_lat, ib_send_lat).

``parse_lat_text(output)`` reads the console report of every layout perftest prints. The headers,
as defined in linux-rdma/perftest src/perftest_parameters.h (read at 00b55b6, 2026-07):

- iterations mode, perftest 3.x+ (commit 1ccb3fd, 2016-07, "Extra measurements in latency tests";
  ``RESULT_FMT_LAT``, perftest_parameters.h line 209, rows ``REPORT_FMT_LAT`` line 243; one line in
  perftest, wrapped here)::

     #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]
        99% percentile[usec]   99.9% percentile[usec]
     2       1000          0.96           1.25         0.98               0.98          0.01
        1.00                    1.25

- iterations mode before 1ccb3fd (still shipped by old distribution perftest builds)::

     #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]
     2       1000          2.57           15.38        2.66

- duration mode ``-D`` (``RESULT_FMT_LAT_DUR`` line 211, rows ``REPORT_FMT_LAT_DUR`` line 248, since
  commit 8e3996d, 2016-07, "Add transactions per second to latency tests"; before it the header had
  ``t_avg[usec]`` only)::

     #bytes        #iterations       t_avg[usec]    tps average
     2             1008430           2.97           168068.16

- ``--output=latency``: the whole report is one number, the average latency (``printf("%lf\\n",
  average)`` in print_report_lat / print_report_lat_duration, src/perftest_parameters.c lines 5194 and
  5238).

With ``--cpu_util`` (duration only) a ``CPU_Util[%]`` column follows (``RESULT_EXT_CPU_UTIL``).
The values are what perftest printed (usec; with ``-C``/``--report-cycles`` perftest prints cycles
under the same ``[usec]`` header, which no parser can tell apart: do not pass ``-C``). ``t_typical`` is
the median, ``t_avg`` the mean, both over the sorted samples without the two largest
(``LAT_MEASURE_TAIL``); the percentiles are samples of that sorted array.

Headline: the SMALLEST message size of the table. The latency of a link is quoted at small messages
(perftest's default size is 2 bytes, DEF_SIZE_LAT); with ``-a`` the large sizes measure bandwidth,
so a gate in microseconds applies to the smallest size. Every size is in ``rows``.

The server side of ib_read_lat prints no table (src/read_lat.c: only the client posts reads); the
server sides of ib_write_lat and ib_send_lat print the same table as their clients.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import scan

TESTS = ("write", "read", "send")
DEFAULT_SIZE = 2  # DEF_SIZE_LAT
DEFAULT_ITERATIONS = 1000  # DEF_ITERS
MIN_ITERATIONS = 5  # MIN_ITER

# Every value a row can carry, in microseconds unless named otherwise.
ROW_KEYS = (
    "msg_size",
    "iterations",
    "t_min_us",
    "t_max_us",
    "t_typical_us",
    "t_avg_us",
    "t_stdev_us",
    "p99_us",
    "p999_us",
    "tps_avg",
    "cpu_util_pct",
)

# Layout names, by the set of columns a header has.
FORMATS = {
    "iterations": "t_min, t_max, t_typical, t_avg, t_stdev, 99% and 99.9% percentiles (perftest 3.x+)",
    "iterations_old": "t_min, t_max, t_typical only (perftest before 2016-07)",
    "duration": "-D: t_avg and tps average",
    "duration_old": "-D: t_avg only (perftest before 2016-07)",
    "average_only": "--output=latency: one number, the average",
}

_SEPARATOR_RE = re.compile(r"^\s*-{10,}\s*$")
_HEADER_RE = re.compile(r"^\s*#bytes\b")
# "#bytes", "t_min[usec]", "99.9% percentile[usec]", "tps average", "CPU_Util[%]"
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_NONFINITE_RE = re.compile(r"(?i)^-?(?:nan|inf(?:inity)?)$")
_AVERAGE_ONLY_RE = re.compile(r"^\s*(\d+\.\d+)\s*$")
_TITLE_RE = re.compile(r"^\s*(?P<title>[A-Za-z_]+(?: [A-Za-z_]+)*? Latency Test)\s*$")
_UNIT_RE = re.compile(r"\[(?P<unit>[^\]]+)\]")


def _column_key(name):
    low = re.sub(r"\s+", "", name.lower())
    if low == "#bytes":
        return "msg_size"
    if low == "#iterations":
        return "iterations"
    if low.startswith("99.9%"):
        return "p999_us"
    if low.startswith("99%"):
        return "p99_us"
    if low == "tpsaverage":
        return "tps_avg"
    if low.startswith("cpu_util"):
        return "cpu_util_pct"
    match = re.match(r"^t_(min|max|typical|avg|stdev)\[", low)
    if match:
        return "t_%s_us" % match.group(1)
    return low.lstrip("#")


def _format_of(columns):
    cols = set(columns)
    if "t_typical_us" in cols:
        return "iterations" if "p99_us" in cols else "iterations_old"
    if "t_avg_us" in cols:
        return "duration" if "tps_avg" in cols else "duration_old"
    return None


def empty_result():
    return {
        "format": None,
        "columns": [],
        "rows": [],
        "headline": None,
        "unit": None,
        "test_title": None,
        "device": None,
        "transport": None,
        "link_type": None,
        "gid_index": None,
        "mtu": None,
        "connection_type": None,
        "server_banner": False,
        "remote_seen": False,
        "header": {},
        "warnings": [],
    }


def empty_row():
    return dict((key, None) for key in ROW_KEYS)


def _make_row(columns, tokens):
    row = empty_row()
    for key, text in zip(columns, tokens):
        if key not in row:
            continue
        value = float(text)
        if not math.isfinite(value):
            raise ValueError("%s is not a finite number" % key)
        row[key] = int(value) if key in ("msg_size", "iterations") else value
    return row


# What one line is to _LatReader (_classify): the kind first, then what applying it needs.
_SKIP, _HEADER, _TITLE, _OTHER = range(4)


def _header_kind(stripped):
    names = scan.latency_columns(stripped) or []
    keys = [_column_key(n) for n in names]
    fmt = _format_of(keys)
    unit = None
    for name in names:
        found = _UNIT_RE.search(name)
        if found and name.lower().startswith("t_"):
            unit = found.group("unit").strip()
            break
    return (_HEADER, keys, fmt, unit)


def _classify(raw):
    """The kind of one line as a tuple (see _LatReader.line); the line's position does not matter, so a reader
    works it out once per distinct line."""
    line = raw.replace("\t", " ").rstrip()
    stripped = line.strip()
    if not stripped or (stripped[0] == "-" and _SEPARATOR_RE.match(line)):
        return (_SKIP,)
    if stripped.startswith("#bytes") and _HEADER_RE.match(stripped):
        return _header_kind(stripped)
    title = _TITLE_RE.match(line) if "Test" in line else None
    if title:
        return (_TITLE, title.group("title"))
    match = _AVERAGE_ONLY_RE.match(stripped) if stripped[0].isdigit() else None  # \d: a decimal, so a digit
    return (_OTHER, stripped, float(match.group(1)) if match else None)


class _LatReader(object):
    """Reads the result table of a latency report into an empty_result() (parse_lat_text's state)."""

    def __init__(self, result, warnings):
        self.result = result
        self.warnings = warnings
        self.columns = None
        self.seen = {}
        self.average_only = None
        self.kinds = {}  # line -> _classify(line): what a line is depends on it alone

    def line(self, raw):
        kind = self.kinds.get(raw)
        if kind is None:
            kind = self.kinds[raw] = _classify(raw)
        what = kind[0]
        if what == _HEADER:
            if kind[2]:  # else a bandwidth header (it has no t_* column)
                self.columns = list(kind[1])
                self.result.update(columns=self.columns, format=kind[2])
                if kind[3] is not None:
                    self.result["unit"] = kind[3]
        elif what == _TITLE:
            self.result["test_title"] = kind[1]
        elif what == _OTHER:
            if self.columns is None:
                if kind[2] is not None:
                    self.average_only = kind[2]
                return
            self._row(kind[1])

    def _row(self, stripped):
        tokens = stripped.split()
        if len(tokens) != len(self.columns) or not _NUMBER_RE.match(tokens[0]):
            return
        if not all(_NUMBER_RE.match(t) for t in tokens):
            if all(_NUMBER_RE.match(t) or _NONFINITE_RE.match(t) for t in tokens):
                self.warnings.append("result row with a non-finite value skipped: %s" % stripped)
            return
        try:
            row = _make_row(self.columns, tokens)
        except (ValueError, OverflowError):
            self.warnings.append("result row with a non-finite value skipped: %s" % stripped)
            return
        size = row["msg_size"]
        if size in self.seen:
            if self.seen[size] != row:
                self.warnings.append("two different result rows for %d bytes: kept the first" % size)
            return
        self.seen[size] = row
        self.result["rows"].append(row)

    def finish(self):
        result = self.result
        if not result["rows"] and result["format"] is None and self.average_only is not None:
            row = empty_row()
            row["t_avg_us"] = self.average_only
            result.update(format="average_only", columns=["t_avg_us"], rows=[row], unit="usec")
        result["warnings"] = list(dict.fromkeys(self.warnings))
        if result["rows"]:
            sized = [r for r in result["rows"] if r["msg_size"] is not None]
            result["headline"] = min(sized, key=lambda r: r["msg_size"]) if sized else result["rows"][0]
        return result


def parse_lat_text(output):
    """Parse a perftest latency report (stdout, or stdout+stderr) into a dict; never raises.

    Returns ``format`` (a key of FORMATS, None without a table), ``columns``, ``rows`` (one per
    message size in the order printed, every ROW_KEYS key, None where the layout has no such
    column), ``headline`` (the smallest size's row), ``unit`` (``usec``), the header facts perftest's
    bandwidth parser reads (device, link_type, transport, gid_index, mtu, connection_type,
    server_banner, remote_seen, header), the test title ("RDMA_Write Latency Test") and warning lines
    (also those printed inside the table, e.g. "Conflicting CPU frequency values detected").

    Linear in the length of the output whatever it holds; a last line without a line break was cut and is not
    read (``--output=latency``'s one number cut to "2" is refused, not read as 2 us).
    """
    result = empty_result()
    if not output:
        return result
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    output = str(output)
    lines, cut = scan.complete_lines(output)
    facts = perftest.parse_lines(lines, cut)  # the parameter block is the same in bw and lat tools
    for key in ("device", "transport", "link_type", "gid_index", "mtu", "connection_type"):
        result[key] = facts.get(key)
    result["header"] = dict(facts.get("header") or {})
    result["server_banner"] = bool(facts.get("server_banner"))
    result["remote_seen"] = bool(facts.get("remote_seen"))
    reader = _LatReader(result, list(facts.get("warnings") or []))
    for raw in lines:  # parse_lines above warned about a cut last line
        reader.line(raw)
    return reader.finish()


def headline_latency(row):
    """(value_us, basis): the typical (median) latency, else the average where only it is printed."""
    if not row:
        return None, None
    if row.get("t_typical_us") is not None:
        return row["t_typical_us"], "t_typical"
    if row.get("t_avg_us") is not None:
        return row["t_avg_us"], "t_avg"
    return None, None
