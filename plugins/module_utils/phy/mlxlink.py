# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mlxlink (NVIDIA MFT) and mstlink (mstflint's open build of the same tool): argv and parsers (pure).

Both forms of ``mlxlink -d <dev> [-p <port>] -m -c [-e] [--rx_fec_histogram --show_histogram] [--json]`` are
read into the same port reading: the JSON document (``{"result": {"output": {<section>: {<label>: value}}},
"status": {"code", "message"}}``; per-lane values as ``{"values": [...]}``) and the text form (a section title,
a line of dashes, then ``Label<padding>: value`` lines, values coloured with ANSI codes on a terminal).

Labels are the ones mstflint's mlxlink prints (mlxlink_commander.cpp, mlxlink_port_info.cpp), checked per
release: "Symbol Errors"/"Symbol BER" exist from 4.18 (InfiniBand links only), "Raw Physical BER Per Lane"
from 4.32; before 4.18 the BER section has no symbol figures. LABELS lists every spelling a key has had. A
label printed as N/A is listed in ``unknown``; one whose value does not parse, in ``unparsed``; both leave
the key None, never 0.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import values as _v

EXECUTABLES = ("mlxlink", "mstlink")
HISTOGRAM_FLAGS = ["--rx_fec_histogram", "--show_histogram"]
# What clears counters: never in a read (PPCNT_CLEAR_FLAG "pc" and PPHCR_CLEAR_HISTOGRAM_FLAG in mlxlink_commander.h)
CLEAR_FLAGS = ("--pc", "--clear_histogram")

SEC_OPERATIONAL = "Operational Info"
SEC_BER = "Physical Counters and BER Info"
SEC_MODULE = "Module Info"
SEC_TOOL = "Tool Information"
SEC_TROUBLE = "Troubleshooting Info"
SEC_HISTOGRAM = "Histogram of FEC Errors"
SEC_EYE = "EYE Opening Info"

# key -> (section, [label spellings], parser)
LABELS = {
    "state": (SEC_OPERATIONAL, ["State"], "text"),
    "physical_state": (SEC_OPERATIONAL, ["Physical state"], "text"),
    "speed": (SEC_OPERATIONAL, ["Speed"], "text"),
    "width": (SEC_OPERATIONAL, ["Width"], "text"),
    "fec": (SEC_OPERATIONAL, ["FEC"], "text"),
    "time_since_clear_min": (SEC_BER, ["Time Since Last Clear [Min]"], "number"),
    "effective_errors": (SEC_BER, ["Effective Physical Errors"], "count"),
    "effective_ber": (SEC_BER, ["Effective Physical BER"], "ber"),
    "symbol_errors": (SEC_BER, ["Symbol Errors"], "count"),
    "symbol_ber": (SEC_BER, ["Symbol BER"], "ber"),
    "raw_errors_lanes": (SEC_BER, ["Raw Physical Errors Per Lane"], "count_lanes"),
    "raw_ber": (SEC_BER, ["Raw Physical BER"], "ber"),
    "raw_ber_lanes": (SEC_BER, ["Raw Physical BER Per Lane"], "ber_lanes"),
    "link_down": (SEC_BER, ["Link Down Counter"], "count"),
    "link_recovery": (SEC_BER, ["Link Error Recovery Counter"], "count"),
    "identifier": (SEC_MODULE, ["Identifier"], "text"),
    "vendor": (SEC_MODULE, ["Vendor Name"], "text"),
    "part_number": (SEC_MODULE, ["Vendor Part Number"], "text"),
    "serial": (SEC_MODULE, ["Vendor Serial Number"], "text"),
    "revision": (SEC_MODULE, ["Rev"], "text"),
    "cable_type": (SEC_MODULE, ["Cable Type"], "text"),
    "technology": (SEC_MODULE, ["Cable Technology"], "text"),
    "module_state": (SEC_MODULE, ["Module State"], "text"),
    "module_fw": (SEC_MODULE, ["FW Version"], "text"),
    "temperature": (SEC_MODULE, ["Temperature [C]"], "range"),
    "voltage": (SEC_MODULE, ["Voltage [mV]"], "range"),
    "bias": (SEC_MODULE, ["Bias Current [mA]"], "range"),
    "rx_power": (SEC_MODULE, ["Rx Power Current [dBm]"], "range"),
    "tx_power": (SEC_MODULE, ["Tx Power Current [dBm]"], "range"),
    "tx_fault": (SEC_MODULE, ["Tx Fault [per lane]"], "flag_lanes"),
    "tx_los": (SEC_MODULE, ["Tx LOS [per lane]"], "flag_lanes"),
    "rx_los": (SEC_MODULE, ["Rx LOS [per lane]"], "flag_lanes"),
    "tx_cdr_lol": (SEC_MODULE, ["Tx CDR LOL [per lane]"], "flag_lanes"),
    "rx_cdr_lol": (SEC_MODULE, ["Rx CDR LOL [per lane]"], "flag_lanes"),
    "module_fw_fault": (SEC_MODULE, ["Module FW Fault"], "count"),
    "datapath_fw_fault": (SEC_MODULE, ["DataPath FW Fault"], "count"),
    "mft_version": (SEC_TOOL, ["MFT Version"], "text"),
    "firmware": (SEC_TOOL, ["Firmware Version"], "text"),
    "recommendation": (SEC_TROUBLE, ["Recommendation"], "text"),
}
FLAG_KEYS = ("tx_fault", "tx_los", "rx_los", "tx_cdr_lol", "rx_cdr_lol")
EYE_LABELS = {
    "Lane": "lanes",
    "Initial FOM": "initial_fom",
    "Last FOM": "last_fom",
    "Upper Grades": "upper",
    "Mid Grades": "mid",
    "Lower Grades": "lower",
}

_SECTION_LINE = re.compile(r"^-{3,}\s*$")
_FIELD_LINE = re.compile(r"^(\S.*?)\s*: ?(.*)$")
_BIN = re.compile(r"^\[(\d+)(?::(\d+))?\]\s*,?\s*(\S*)$")


class PhyToolError(RuntimeError):
    """The tool answered, but with a failure (a non-zero status in its JSON)."""


class PhyFormatError(ValueError):
    """The output is not mlxlink's (no section, no JSON result)."""


def query_argv(executable, device, port=None, histogram=True, eye=False, json_output=True):
    """The read-only query. ``device`` is an RDMA device (mlx5_0), a PCI address or an in-band ``lid-<LID>``
    (a switch, through the subnet); ``port`` the port (a switch port; HCAs take their device's)."""
    argv = [executable, "-d", str(device)]
    if port is not None:
        argv += ["-p", str(port)]
    argv += ["-m", "-c"]
    if eye:
        argv.append("-e")
    if histogram:
        argv += HISTOGRAM_FLAGS
    if json_output:
        argv.append("--json")
    return argv


def clear_argv(executable, device, port=None):
    """Clear the PHY counters (PPCNT) and the FEC histogram: only when the user asked (clear: true)."""
    argv = [executable, "-d", str(device)]
    if port is not None:
        argv += ["-p", str(port)]
    return [argv + ["--pc"], argv + ["--rx_fec_histogram", "--clear_histogram"]]


def sections_of_json(text):
    """{section: {label: value}} from mlxlink --json; PhyToolError on a non-zero status, else PhyFormatError."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise PhyFormatError("mlxlink --json output is not JSON (%s)" % exc)
    if not isinstance(doc, dict):
        raise PhyFormatError("mlxlink --json output is not a JSON object")
    status = doc.get("status") if isinstance(doc.get("status"), dict) else {}
    code = status.get("code")
    if code not in (0, None):
        raise PhyToolError("mlxlink failed with status %s: %s" % (code, status.get("message") or "no message"))
    output = (doc.get("result") or {}).get("output") if isinstance(doc.get("result"), dict) else None
    if not isinstance(output, dict):
        raise PhyFormatError("mlxlink --json output has no result.output")
    return dict((k, v) for k, v in output.items() if isinstance(v, dict))


def sections_of_text(text):
    """{section: {label: value}} from mlxlink's text output; PhyFormatError when it has no section."""
    sections = {}
    lines = [_v.strip_ansi(line).rstrip("\r") for line in (text or "").splitlines()]
    current = None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _SECTION_LINE.match(lines[i + 1]) and line.strip() and ":" not in line:
            current = sections.setdefault(line.strip(), {})
            continue
        if current is None or _SECTION_LINE.match(line):
            continue
        match = _FIELD_LINE.match(line)
        if match:
            current[match.group(1).strip()] = match.group(2).strip()
    if not sections:
        raise PhyFormatError("not mlxlink output: no 'Title' + '-----' section found")
    return sections


def _parse(kind, raw):
    if kind == "text":
        return _v.clean(raw if not isinstance(raw, dict) else ",".join(raw.get("values") or []))
    if kind == "number":
        return _v.number(raw)
    if kind == "count":
        return _v.count(raw)
    if kind == "ber":
        return _v.ber(raw)
    if kind == "count_lanes":
        return _v.lanes(raw, _v.count)
    if kind == "ber_lanes":
        return _v.lanes(raw, _v.ber)
    if kind == "flag_lanes":
        return _v.lanes(raw, _v.count)
    if kind == "range":
        return _v.with_range(raw if not isinstance(raw, dict) else ",".join(raw.get("values") or []))
    raise KeyError(kind)


def _is_na(raw):
    if isinstance(raw, dict):
        return _v.split_lanes(raw) is None
    return _v.clean(raw) is None


def _fields(sections):
    """(values by key, unknown labels, unparsed 'label: value' strings, labels seen)."""
    found, unknown, unparsed, seen = {}, [], [], set()
    for key, (section, spellings, kind) in LABELS.items():
        table = sections.get(section) or {}
        for label in spellings:
            if label not in table:
                continue
            seen.add(label)
            raw = table[label]
            if _is_na(raw):
                unknown.append(label)
                break
            try:
                found[key] = _parse(kind, raw)
            except _v.BadValue:
                unparsed.append("%s: %s" % (label, raw))
            break
    return found, unknown, unparsed, seen


def _histogram(table, unparsed):
    """[[low, high, count]] in bin order, or None; any bad bin makes the whole histogram unknown (the bins are
    disjoint ranges: one missing would shift the tail)."""
    if not table:
        return None
    bins = {}
    for label, raw in table.items():
        match = re.match(r"^Bin (\d+)$", label)
        if not match:
            continue
        items = _v.split_lanes(raw) if isinstance(raw, dict) else [_v.strip_ansi(str(raw)).strip()]
        text = " ".join(items or [])
        parsed = _BIN.match(re.sub(r"\s+", " ", text.replace(",", " ")).strip())
        if not parsed or not parsed.group(3).isdigit():
            unparsed.append("%s: %s" % (label, raw))
            return None
        low = int(parsed.group(1))
        high = int(parsed.group(2)) if parsed.group(2) is not None else low
        bins[int(match.group(1))] = [low, high, int(parsed.group(3))]
    if not bins or sorted(bins) != list(range(len(bins))):
        if bins:
            unparsed.append("%s: bins %s are not 0..n" % (SEC_HISTOGRAM, sorted(bins)))
        return None
    return [bins[i] for i in range(len(bins))]


def _eye(table):
    """{lanes, initial_fom, last_fom, upper, mid, lower} from the JSON eye section, or None."""
    if not table:
        return None
    eye = {}
    for label, key in EYE_LABELS.items():
        try:
            eye[key] = _v.lanes(table.get(label))
        except _v.BadValue:
            return None
    if not eye.get("lanes") or any(eye[k] is not None and len(eye[k]) != len(eye["lanes"]) for k in eye):
        return None
    eye["lanes"] = [int(x) for x in eye["lanes"]]
    return eye


def _module(found):
    module = dict(
        (k, found.get(k))
        for k in (
            "identifier",
            "vendor",
            "part_number",
            "serial",
            "revision",
            "cable_type",
            "technology",
            "module_state",
            "module_fw",
        )
    )
    for key, unit in (
        ("temperature", "c"),
        ("voltage", "mv"),
        ("bias", "ma"),
        ("rx_power", "dbm"),
        ("tx_power", "dbm"),
    ):
        values, low, high = found.get(key) or (None, None, None)
        name = "%s_%s" % (key, unit)
        if key in ("temperature", "voltage"):
            module[name] = values[0] if values else None
        else:
            module[name] = values
        module[key + "_range"] = [low, high] if low is not None and high is not None else None
    module["faults"] = dict((k, found.get(k)) for k in FLAG_KEYS + ("module_fw_fault", "datapath_fw_fault"))
    return module


def reading_from_sections(sections, form):
    """The port reading (docs/phy.md, "The reading") from parsed sections."""
    if SEC_BER not in sections and SEC_MODULE not in sections and SEC_OPERATIONAL not in sections:
        raise PhyFormatError(
            "mlxlink output has none of the sections %s, %s, %s" % (SEC_OPERATIONAL, SEC_BER, SEC_MODULE)
        )
    found, unknown, unparsed, seen = _fields(sections)
    link = dict((k, found.get(k)) for k in ("state", "physical_state", "speed", "width", "fec"))
    link["lanes"] = _v.width_lanes(link["width"])
    link["speed_gbps"] = _v.speed_gbps(link["speed"], link["lanes"])
    counters = dict(
        (k, found.get(k))
        for k in (
            "time_since_clear_min",
            "effective_errors",
            "effective_ber",
            "symbol_errors",
            "symbol_ber",
            "raw_errors_lanes",
            "raw_ber",
            "raw_ber_lanes",
            "link_down",
            "link_recovery",
        )
    )
    return {
        "format": form,
        "mft_version": found.get("mft_version"),
        "firmware": found.get("firmware"),
        "sections": sorted(sections),
        "link": link,
        "counters": counters,
        "fec_histogram": _histogram(sections.get(SEC_HISTOGRAM), unparsed),
        "module": _module(found) if SEC_MODULE in sections else None,
        "eye": _eye(sections.get(SEC_EYE)),
        "recommendation": found.get("recommendation"),
        "unknown": sorted(unknown),
        "unparsed": unparsed,
        "labels": sorted(seen),
    }


def parse(text):
    """A port reading from mlxlink output, JSON or text (told apart by the first character)."""
    body = (text or "").lstrip()
    if body.startswith("{"):
        return reading_from_sections(sections_of_json(body), "json")
    return reading_from_sections(sections_of_text(text), "text")
