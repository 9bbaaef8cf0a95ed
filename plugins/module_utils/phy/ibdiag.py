# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ibdiagnet's per-port BER table, ``ibdiagnet2.net_dump_ext`` (pure): every port of the fabric, switches
included, as ``ibdiagnet --get_phy_info`` read it from the subnet manager host.

The table is one header line and one line per port, fields separated by `` : ``; comment lines start with
``#``. Columns are found by their header name, not position (``Ty : # : #IB : GUID : LID : Sta : PhysSta :
LWA : LSA : Conn LID (#) : FEC mode : RTR : Raw BER : Effective BER : Symbol BER : Symbol Err :
Effective Err : Node Desc``, as two independent parsers of real files document it); the node description,
the last column, may itself contain `` : ``. A table without the BER columns, or a line with fewer fields
than the header, is refused with its line number. BERs use values.ber (1.5e-254 is the no-errors sentinel).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import values as _v
from ansible_collections.ibtune.fabric.plugins.module_utils.phy.mlxlink import PhyFormatError

REQUIRED = ("GUID", "#IB", "Raw BER", "Effective BER")
COLUMNS = {
    "type": "Ty",
    "lid": "LID",
    "state": "Sta",
    "physical_state": "PhysSta",
    "width": "LWA",
    "speed": "LSA",
    "fec": "FEC mode",
    "raw_ber": "Raw BER",
    "effective_ber": "Effective BER",
    "symbol_ber": "Symbol BER",
    "symbol_errors": "Symbol Err",
    "effective_errors": "Effective Err",
}
BERS = ("raw_ber", "effective_ber", "symbol_ber")
COUNTS = ("symbol_errors", "effective_errors")


def _split(line):
    return [part.strip() for part in line.split(" : ")]


def _header(lines):
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.lstrip().startswith("#") and "GUID" in line and " : " in line:
            return number, _split(line)
    raise PhyFormatError("not an ibdiagnet2.net_dump_ext: no header line with GUID")


def _row(fields, index, header_len):
    row = {"guid": fields[index["GUID"]].lower(), "port": _v.count(fields[index["#IB"]])}
    row["node_desc"] = (
        " : ".join(fields[header_len - 1 :]).strip().strip('"') if index.get("Node Desc") == header_len - 1 else None
    )
    for key, column in COLUMNS.items():
        if column not in index:
            row[key] = None
            continue
        raw = fields[index[column]]
        try:
            if key in BERS:
                row[key] = _v.ber(raw)
            elif key in COUNTS:
                row[key] = _v.count(raw)
            else:
                row[key] = _v.clean(raw)
        except _v.BadValue:
            row[key] = None
            row.setdefault("unparsed", []).append("%s: %s" % (column, raw))
    return row


def parse_net_dump_ext(text):
    """[{guid, port, node_desc, type, lid, state, physical_state, width, speed, fec, raw_ber, effective_ber,
    symbol_ber, symbol_errors, effective_errors[, unparsed]}]; PhyFormatError names the bad line."""
    lines = (text or "").splitlines()
    start, header = _header(lines)
    index = dict((name, i) for i, name in enumerate(header))
    missing = [c for c in REQUIRED if c not in index]
    if missing:
        raise PhyFormatError(
            "ibdiagnet2.net_dump_ext header has no %s column (run ibdiagnet --get_phy_info)" % ", ".join(missing)
        )
    rows = []
    for number, line in enumerate(lines[start:], start + 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _split(line)
        if len(fields) < len(header):
            raise PhyFormatError(
                "ibdiagnet2.net_dump_ext line %d has %d fields, the header %d: %r"
                % (number, len(fields), len(header), line[:120])
            )
        try:
            rows.append(_row(fields, index, len(header)))
        except _v.BadValue as exc:
            raise PhyFormatError("ibdiagnet2.net_dump_ext line %d: %s" % (number, exc))
    return rows


def reading_of_row(row):
    """A port reading (the shape mlxlink.parse gives) from one net_dump_ext row: BER figures only."""
    return {
        "format": "ibdiagnet-net_dump_ext",
        "mft_version": None,
        "firmware": None,
        "sections": [],
        "link": {
            "state": row.get("state"),
            "physical_state": row.get("physical_state"),
            "speed": row.get("speed"),
            "width": row.get("width"),
            "fec": row.get("fec"),
            "speed_gbps": None,
            "lanes": _v.width_lanes(row.get("width")),
        },
        "counters": {
            "time_since_clear_min": None,
            "effective_errors": row.get("effective_errors"),
            "effective_ber": row.get("effective_ber"),
            "symbol_errors": row.get("symbol_errors"),
            "symbol_ber": row.get("symbol_ber"),
            "raw_errors_lanes": None,
            "raw_ber": row.get("raw_ber"),
            "raw_ber_lanes": None,
            "link_down": None,
            "link_recovery": None,
        },
        "fec_histogram": None,
        "module": None,
        "eye": None,
        "recommendation": None,
        "unknown": [],
        "unparsed": list(row.get("unparsed") or []),
        "labels": [],
    }
