# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl-tests output (text table and ``-J`` JSON) and nccl-tests' bandwidth formulas.

Text table (NVIDIA/nccl-tests src/util.cu): a ``#`` header naming the columns
(``size count type redop root time algbw busbw #wrong time algbw busbw #wrong``; older releases
have no ``redop``/``root`` and call the error column ``error``, with ``N/A`` when validation is
off), then one row per size: out-of-place figures first, in-place second. NCCL INFO lines and
other stray output may sit between rows. ``# Avg bus bandwidth : X`` averages every row.

GB/s here are 10^9 bytes per second, as nccl-tests prints them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# busbw = algbw x factor(n): nccl-tests' per-collective correction (doc/PERFORMANCE.md).
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "gather",
    "scatter",
    "hypercube",
)


def bus_factor(collective, nranks):
    """nccl-tests' busbw/algbw factor for a collective over nranks ranks."""
    n = int(nranks)
    if n < 1:
        raise ValueError("nranks must be >= 1, got %r" % (nranks,))
    name = collective.replace("-", "_").lower()
    if name.endswith("_perf"):
        name = name[: -len("_perf")]
    if name == "all_reduce":
        return 2.0 * (n - 1) / n
    if name in ("all_gather", "reduce_scatter", "alltoall", "gather", "scatter", "hypercube"):
        return float(n - 1) / n
    if name in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise ValueError("unknown collective %r: use one of %s" % (collective, ", ".join(COLLECTIVES)))


def algbw_gbs(size_bytes, time_us):
    """Algorithm bandwidth in GB/s (10^9 B/s) for size bytes in time_us microseconds."""
    if not time_us:
        return 0.0
    return float(size_bytes) / (float(time_us) * 1e-6) / 1e9


def busbw_gbs(collective, nranks, size_bytes, time_us):
    return algbw_gbs(size_bytes, time_us) * bus_factor(collective, nranks)


_HEADER_WORDS = ("size", "count", "type")
_NUM_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<v>[0-9.eE+\-]+|nan|inf)", re.IGNORECASE)
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s*(?P<status>\S+)?")
_HEADER_INFO_RE = re.compile(
    r"^#\s*nThread\s+(?P<nthread>\d+)\s+nGpus\s+(?P<ngpus>\d+)\s+minBytes\s+(?P<min>\d+)\s+maxBytes\s+(?P<max>\d+)"
)
_RANK_RE = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device\s+(?P<dev>\d+)"
)
_TESTS_VERSION_RE = re.compile(
    r"^#\s*nccl-tests version (?P<tests>\S+) nccl-headers=(?P<headers>\d+) nccl-library=(?P<library>\d+)"
)
_COLL_NAME_RE = re.compile(r"^#\s*Collective test starting:\s*(?P<name>\S+)")


def _num(token):
    if token in ("N/A", "-", ""):
        return None
    if _NUM_RE.match(token):
        value = float(token)
        return int(value) if value.is_integer() and "." not in token and "e" not in token.lower() else value
    return None


def _header_columns(line):
    """Column names of a table header line ('#  size  count  type ...'), or None."""
    tokens = line.lstrip("#").split()
    if len(tokens) < 6 or tuple(t.lower() for t in tokens[:3]) != _HEADER_WORDS:
        return None
    return [t.lower() for t in tokens]


def _split_columns(columns):
    """Index the leading descriptive columns and the two (time, algbw, busbw, wrong) groups."""
    lead = []
    groups = []
    current = None
    for index, name in enumerate(columns):
        if name in ("time", "cputime"):
            current = {"time": index}
            groups.append(current)
        elif current is None:
            lead.append((name, index))
        elif name in ("algbw", "busbw"):
            current[name] = index
        elif name in ("#wrong", "error", "wrong", "#error"):
            current["wrong"] = index
    return lead, groups


def _group_values(tokens, group):
    if group is None:
        return None
    out = {}
    for key in ("time", "algbw", "busbw", "wrong"):
        idx = group.get(key)
        value = _num(tokens[idx]) if idx is not None and idx < len(tokens) else None
        out[key] = float(value) if value is not None and key != "wrong" else value
    return out


def parse_text(text):
    """Parse nccl-tests stdout. Returns a dict with rows, avg_busbw, out_of_bounds, header info."""
    result = {
        "rows": [],
        "avg_busbw": None,
        "out_of_bounds": None,
        "nranks": None,
        "ngpus": None,
        "nthread": None,
        "hosts": [],
        "nccl_version_code": None,
        "nccl_tests_version": None,
        "collective": None,
        "stray_lines": 0,
    }
    state = {"lead": None, "groups": None, "ranks": set()}
    for raw in text.splitlines():
        stripped = raw.rstrip().strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            _comment_line(result, state, stripped)
            continue
        row = _parse_row(stripped.split(), state["lead"], state["groups"]) if state["groups"] is not None else None
        if row is None:
            result["stray_lines"] += 1
        else:
            result["rows"].append(row)
    if state["ranks"]:
        result["nranks"] = max(state["ranks"]) + 1
    return result


def _comment_line(result, state, line):
    """A '#' line: the table header, or one of the header/footer lines nccl-tests prints."""
    header = _header_columns(line)
    if header:
        state["lead"], state["groups"] = _split_columns(header)
        return
    for pattern, handler in _COMMENT_HANDLERS:
        match = pattern.match(line)
        if match:
            handler(result, state, match)
            return


def _avg(result, state, match):
    value = match.group("v")
    result["avg_busbw"] = _num(value) if value.lower() not in ("nan", "inf") else None


def _oob(result, state, match):
    result["out_of_bounds"] = int(match.group("n"))


def _header_info(result, state, match):
    result["nthread"] = int(match.group("nthread"))
    result["ngpus"] = int(match.group("ngpus"))


def _rank(result, state, match):
    state["ranks"].add(int(match.group("rank")))
    if match.group("host") not in result["hosts"]:
        result["hosts"].append(match.group("host"))


def _tests_version(result, state, match):
    result["nccl_tests_version"] = match.group("tests")
    result["nccl_version_code"] = int(match.group("library"))


def _collective(result, state, match):
    result["collective"] = match.group("name")


_COMMENT_HANDLERS = (
    (_AVG_RE, _avg),
    (_OOB_RE, _oob),
    (_HEADER_INFO_RE, _header_info),
    (_RANK_RE, _rank),
    (_TESTS_VERSION_RE, _tests_version),
    (_COLL_NAME_RE, _collective),
)


def _parse_row(tokens, lead, groups):
    """A data row, or None for anything else (NCCL INFO lines, warnings, 'Test NCCL failure')."""
    needed = max(max(g.values()) for g in groups) + 1 if groups else 0
    if len(tokens) < needed or not tokens or not tokens[0].isdigit():
        return None
    row = {}
    for name, index in lead:
        token = tokens[index]
        if name == "size":
            row["size"] = int(token)
        elif name == "count":
            if not token.isdigit():
                return None
            row["count"] = int(token)
        elif name == "root":
            row["root"] = int(token) if re.match(r"^-?\d+$", token) else None
        else:
            row[name] = token
    oop = _group_values(tokens, groups[0] if groups else None)
    ip = _group_values(tokens, groups[1] if len(groups) > 1 else None)
    if oop is None or oop["time"] is None or oop["busbw"] is None:
        return None
    row.update(
        {
            "time_us": oop["time"],
            "algbw": oop["algbw"],
            "busbw": oop["busbw"],
            "wrong": oop["wrong"],
            "in_place_time_us": ip["time"] if ip else None,
            "in_place_algbw": ip["algbw"] if ip else None,
            "in_place_busbw": ip["busbw"] if ip else None,
            "in_place_wrong": ip["wrong"] if ip else None,
        }
    )
    row.setdefault("redop", None)
    row.setdefault("root", None)
    return row


def _json_num(value):
    if value is None or value == "nan":
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return value


def parse_json(text):
    """Parse an nccl-tests -J file (JSON_FILE_VERSION 1, nccl-tests 2.18.5+)."""
    data = json.loads(text)
    if not isinstance(data, dict) or "results" not in data:
        raise ValueError("not an nccl-tests -J file: no 'results' list")
    rows = []
    for item in data.get("results") or []:
        oop = item.get("out_of_place") or {}
        ip = item.get("in_place") or {}
        root = item.get("root")
        try:
            root = int(str(root).strip()) if root is not None else None
        except ValueError:
            root = None
        row = {
            "size": int(item["size"]),
            "count": int(item["count"]),
            "type": item.get("type"),
            "redop": item.get("redop"),
            "root": root,
            "time_us": _json_num(oop.get("time", oop.get("cpu_time"))),
            "algbw": _json_num(oop.get("alg_bw")),
            "busbw": _json_num(oop.get("bus_bw")),
            "wrong": _json_num(oop.get("nwrong")),
            "in_place_time_us": _json_num(ip.get("time", ip.get("cpu_time"))),
            "in_place_algbw": _json_num(ip.get("alg_bw")),
            "in_place_busbw": _json_num(ip.get("bus_bw")),
            "in_place_wrong": _json_num(ip.get("nwrong")),
        }
        rows.append(row)
    config = data.get("config") or {}
    devices = config.get("devices") or []
    avg = (data.get("average_bus_bandwidth") or {}).get("bandwidth")
    oob = (data.get("out_of_bounds") or {}).get("count")
    return {
        "rows": rows,
        "avg_busbw": _json_num(avg),
        "out_of_bounds": oob,
        "nranks": len(devices) or None,
        "ngpus": config.get("ngpus"),
        "nthread": config.get("nthreads"),
        "hosts": sorted({d.get("hostname") for d in devices if d.get("hostname")}),
        "nccl_version_code": data.get("nccl_version"),
        "nccl_tests_version": None,
        "collective": None,
        "stray_lines": 0,
        "errors": data.get("errors") or [],
    }


def version_from_code(code):
    """NCCL_VERSION_CODE (22809) -> '2.28.9'."""
    if code is None:
        return None
    code = int(code)
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


def summarize(parsed):
    """max_size_bytes, max_size_busbw (out-of-place busbw at the largest size; the in-place figure when
    a backend measures only in place), wrong element total."""
    rows = parsed["rows"]
    if not rows:
        return {"max_size_bytes": None, "max_size_busbw": None, "wrong_total": None}
    largest = max(row["size"] for row in rows)
    at_max = [row for row in rows if row["size"] == largest]
    # Several rows of the same size (-n repeats, several ops): take the last, as nccl-tests' final word.
    row = at_max[-1]
    busbw = row["busbw"] if row["busbw"] is not None else row.get("in_place_busbw")
    wrong = 0
    seen = False
    for item in rows:
        for key in ("wrong", "in_place_wrong"):
            if item.get(key) is not None:
                wrong += item[key]
                seen = True
    return {"max_size_bytes": largest, "max_size_busbw": busbw, "wrong_total": wrong if seen else None}


def parse_size(text):
    """'8', '1K', '64M', '4G' (nccl-tests' -b/-e suffixes, powers of 1024) -> bytes."""
    if isinstance(text, int):
        return text
    match = re.match(r"^\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*$", str(text), re.IGNORECASE)
    if not match:
        raise ValueError("size %r is not a number with an optional K, M, G or T suffix" % (text,))
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match.group(2).upper()]
    return int(match.group(1)) * scale


def size_series(min_bytes, max_bytes, step_factor=2):
    """The sizes nccl-tests visits with -b min -e max -f factor."""
    low, high = parse_size(min_bytes), parse_size(max_bytes)
    factor = int(step_factor)
    if low < 1 or high < low or factor < 2:
        raise ValueError("sizes need 1 <= min <= max and a step factor >= 2")
    out = []
    size = low
    while size <= high:
        out.append(size)
        size *= factor
    return out


# nccl-tests' -a option: how the ranks' times combine (its default is 1, the mean over ranks).
AVERAGE_CODES = {"rank0": 0, "avg": 1, "min": 2, "max": 3}


def fmt_size(size):
    """4294967296 -> "4 GiB"; sizes that are no whole unit stay in bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return "%d %s" % (size // scale, unit)
    return "%d B" % size


def summary_message(backend, host, transport, collectives):
    """One line for a passed run: "torch on gpu01 over Socket: all_reduce 346.5 GB/s at 4 GiB, ...".

    collectives: {name: {max_size_busbw, max_size_bytes}}. When NCCL's log named no network (NCCL_DEBUG below
    INFO, or only P2P/SHM inside one node), the line says so instead of naming one.
    """
    figures = ", ".join(
        "%s %.1f GB/s at %s" % (name, c["max_size_busbw"], fmt_size(c["max_size_bytes"]))
        for name, c in collectives.items()
        if c.get("max_size_busbw") is not None
    )
    where = "over %s" % transport if transport else "(NCCL's log names no network: run with nccl_debug=INFO to see it)"
    return "%s on %s %s: %s" % (backend, host, where, figures or "no figures")
