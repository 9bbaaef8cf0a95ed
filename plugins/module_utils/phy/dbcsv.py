# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ibdiagnet's ``ibdiagnet2.db_csv`` (pure): its PHY, performance-counter and cable tables, per port.

The file is a run of tables, each ``START_<NAME>``, one CSV header line, rows, ``END_<NAME>``. Which tables
this reads (docs/phy.md, "ibdiagnet db_csv and log"), columns always by header name, never by position:

- ``PM_INFO`` (``NodeGUID``, ``PortNumber``): ``LinkDownedCounter[Ext]``, ``LinkErrorRecoveryCounter[Ext]``.
- ``CABLE_INFO`` (``NodeGuid``, ``PortNum``; ``--get_cable_info``): ``Vendor``, ``PN``, ``SN``, ``Temperature``.
- ``PHY_DB<n>`` (``NodeGuid``, ``PortNum``; ``--get_phy_info``): the PPCNT physical-layer statistical counters
  when their columns carry the register's field names (``raw_ber_coef`` / ``raw_ber_magnitude``, BER = coef x
  10^-magnitude, as mlxlink computes it; ``effective_ber_*``, ``symbol_fec_ber_coef`` / ``symbol_ber_magnitude``,
  ``phy_raw_errors_lane<i>``, ``phy_effective_errors``, ``phy_symbol_errors``, ``time_since_last_clear``). A PHY
  table whose columns are only ``field<i>`` (as a real PHY_DB12 is read by one public tool) is not guessed at:
  its name is listed in the result's ``unread``.

Malformed input (a table never closed, an END without its START, a row with more or fewer fields than its
header, a non-numeric counter) raises PhyFormatError naming the line. ``N/A`` and empty cells are None, never 0;
a BER coefficient 15 with magnitude 255 (the register's "no errors") reads as 0 (values.ber).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import ibdiag as _ibdiag
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import values as _v
from ansible_collections.ibtune.fabric.plugins.module_utils.phy.mlxlink import PhyFormatError

_MARK = re.compile(r"^(START|END)_([A-Za-z0-9_]+)$")
_FIELD_N = re.compile(r"^field\d+$")
KEY_COLUMNS = {"guid": ("NodeGuid", "NodeGUID"), "port": ("PortNum", "PortNumber")}
PM_COUNTERS = {
    "link_down": ("LinkDownedCounterExt", "LinkDownedCounter"),
    "link_recovery": ("LinkErrorRecoveryCounterExt", "LinkErrorRecoveryCounter"),
}
CABLE_COLUMNS = {"vendor": ("Vendor",), "part_number": ("PN",), "serial": ("SN",), "temperature": ("Temperature",)}
BER_FIELDS = {
    "raw_ber": ("raw_ber_coef", "raw_ber_magnitude"),
    "effective_ber": ("effective_ber_coef", "effective_ber_magnitude"),
    "symbol_ber": ("symbol_fec_ber_coef", "symbol_ber_magnitude"),
}
PHY_COUNTS = {
    "effective_errors": "phy_effective_errors",
    "symbol_errors": "phy_symbol_errors",
    "time_since_clear": "time_since_last_clear",
}


def split_tables(text):
    """{NAME: {"line": number of its header, "header": [...], "rows": [(line number, [cells])]}}."""
    tables, current = {}, None
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        mark = _MARK.match(stripped)
        if mark:
            current = _mark(tables, current, mark.group(1), mark.group(2), number)
            continue
        if current is None or not stripped:
            continue
        cells = [cell.strip() for cell in next(csv.reader([line]))]
        table = tables[current]
        if table["header"] is None:
            table.update(header=cells, line=number)
        elif len(cells) != len(table["header"]):
            raise PhyFormatError(
                "ibdiagnet2.db_csv line %d (%s) has %d fields, its header %d: %r"
                % (number, current, len(cells), len(table["header"]), line[:120])
            )
        else:
            table["rows"].append((number, cells))
    if current is not None:
        raise PhyFormatError("ibdiagnet2.db_csv: table %s is never closed (no END_%s; truncated?)" % (current, current))
    return tables


def _mark(tables, current, kind, name, number):
    if kind == "START":
        if current is not None:
            raise PhyFormatError(
                "ibdiagnet2.db_csv line %d: START_%s inside %s (no END_%s)" % (number, name, current, current)
            )
        if name in tables:
            raise PhyFormatError("ibdiagnet2.db_csv line %d: table %s a second time" % (number, name))
        tables[name] = {"line": None, "header": None, "rows": []}
        return name
    if current != name:
        raise PhyFormatError("ibdiagnet2.db_csv line %d: END_%s without START_%s" % (number, name, name))
    return None


def _column(header, names):
    for name in names:
        if name in header:
            return header.index(name)
    return None


def _key(table, cells, number, name):
    index = dict((k, _column(table["header"], names)) for k, names in KEY_COLUMNS.items())
    try:
        port = _v.count(cells[index["port"]])
    except _v.BadValue as exc:
        raise PhyFormatError("ibdiagnet2.db_csv line %d (%s): port: %s" % (number, name, exc))
    guid = _v.clean(cells[index["guid"]])
    if not guid or port is None:
        raise PhyFormatError("ibdiagnet2.db_csv line %d (%s): no node GUID or port number" % (number, name))
    return guid.lower(), port


def _keyed(table):
    return all(_column(table["header"] or [], names) is not None for names in KEY_COLUMNS.values())


def _counter(raw, number, name, column):
    try:
        return _v.count(raw)
    except _v.BadValue as exc:
        raise PhyFormatError("ibdiagnet2.db_csv line %d (%s) %s: %s" % (number, name, column, exc))


def ber_of(coef, magnitude):
    """coef x 10^-magnitude as values.ber reads it (15E-255 is 0), None when either is N/A."""
    coef, magnitude = _v.count(coef), _v.count(magnitude)
    if coef is None or magnitude is None:
        return None
    return _v.ber("%dE-%d" % (coef, magnitude))


def _phy_row(header, cells, number, name):
    out = {}
    for key, (coef, mag) in BER_FIELDS.items():
        i, j = _column(header, (coef,)), _column(header, (mag,))
        if i is not None and j is not None:
            try:
                out[key] = ber_of(cells[i], cells[j])
            except _v.BadValue as exc:
                raise PhyFormatError("ibdiagnet2.db_csv line %d (%s) %s: %s" % (number, name, key, exc))
    lanes = sorted(
        (int(c[len("phy_raw_errors_lane") :]), i)
        for i, c in enumerate(header)
        if re.match(r"^phy_raw_errors_lane\d+$", c)
    )
    if lanes:
        out["raw_errors_lanes"] = [_counter(cells[i], number, name, header[i]) for _lane, i in lanes]
    for key, column in PHY_COUNTS.items():
        i = _column(header, (column,))
        if i is not None:
            out[key] = _counter(cells[i], number, name, column)
    return out


def _merge(ports, key):
    return ports.setdefault(key, {"guid": key[0], "port": key[1], "pm": {}, "phy": {}, "cable": {}})


def _read_pm(table, ports):
    columns = dict((k, _column(table["header"], names)) for k, names in PM_COUNTERS.items())
    for number, cells in table["rows"]:
        entry = _merge(ports, _key(table, cells, number, "PM_INFO"))
        for key, i in columns.items():
            if i is not None:
                entry["pm"][key] = _counter(cells[i], number, "PM_INFO", table["header"][i])


def _read_cable(table, ports):
    columns = dict((k, _column(table["header"], names)) for k, names in CABLE_COLUMNS.items())
    for number, cells in table["rows"]:
        entry = _merge(ports, _key(table, cells, number, "CABLE_INFO"))
        for key, i in columns.items():
            if i is None:
                continue
            value = _v.clean(cells[i].strip('"'))
            if key == "temperature" and value is not None:
                try:
                    value = _v.number(value.rstrip("Cc").strip())
                except _v.BadValue as exc:
                    raise PhyFormatError("ibdiagnet2.db_csv line %d (CABLE_INFO) Temperature: %s" % (number, exc))
            entry["cable"][key] = value


def _read_phy(name, table, ports):
    """True when the table had named PHY columns this reads."""
    header = table["header"]
    named = any(c in header for pair in BER_FIELDS.values() for c in pair) or any(
        c in header for c in PHY_COUNTS.values()
    )
    if not named:
        return False
    for number, cells in table["rows"]:
        _merge(ports, _key(table, cells, number, name))["phy"].update(_phy_row(header, cells, number, name))
    return True


def nodes_of(table):
    """{guid: {"switch": bool, "desc": NodeDesc}} from the NODES table (NodeType 2 is a switch)."""
    header = (table or {}).get("header") or []
    guid, kind, desc = (_column(header, (c,)) for c in ("NodeGUID", "NodeType", "NodeDesc"))
    if guid is None or kind is None:
        return {}
    return dict(
        (cells[guid].lower(), {"switch": cells[kind] == "2", "desc": None if desc is None else cells[desc].strip('"')})
        for _number, cells in table["rows"]
    )


def parse_db_csv(text):
    """{"ports": [{guid, port, pm, phy, cable}], "nodes": {guid: {switch, desc}}, "tables": [names], "unread":
    [PHY tables not read by name]}."""
    tables = split_tables(text)
    if not tables:
        raise PhyFormatError("not an ibdiagnet2.db_csv: no START_<TABLE> line")
    ports, unread = {}, []
    for name in sorted(tables):
        table = tables[name]
        if table["header"] is None or not _keyed(table):
            if name.startswith("PHY_DB"):
                unread.append(name)
            continue
        if name == "PM_INFO":
            _read_pm(table, ports)
        elif name == "CABLE_INFO":
            _read_cable(table, ports)
        elif name.startswith("PHY_DB") and not _read_phy(name, table, ports):
            unread.append(name)
    return {
        "ports": [ports[k] for k in sorted(ports)],
        "nodes": nodes_of(tables.get("NODES")),
        "tables": sorted(tables),
        "unread": unread,
    }


def reading_of_port(entry):
    """A port reading (the shape mlxlink.parse gives) from one parse_db_csv port: what the tables held."""
    phy, pm, cable = entry.get("phy") or {}, entry.get("pm") or {}, entry.get("cable") or {}
    reading = _ibdiag.reading_of_row({})
    reading["format"] = "ibdiagnet-db_csv"
    minutes = phy.get("time_since_clear")
    reading["counters"].update(
        time_since_clear_min=None if minutes is None else minutes / 60000.0,
        effective_errors=phy.get("effective_errors"),
        effective_ber=phy.get("effective_ber"),
        symbol_errors=phy.get("symbol_errors"),
        symbol_ber=phy.get("symbol_ber"),
        raw_errors_lanes=phy.get("raw_errors_lanes"),
        raw_ber=phy.get("raw_ber"),
        link_down=pm.get("link_down"),
        link_recovery=pm.get("link_recovery"),
    )
    if cable:
        reading["module"] = {
            "vendor": cable.get("vendor"),
            "part_number": cable.get("part_number"),
            "serial": cable.get("serial"),
            "temperature_c": cable.get("temperature"),
            "temperature_range": None,
        }
    reading["unknown"] = sorted(
        k for part in (phy, pm, cable) for k, v in part.items() if v is None and k != "time_since_clear"
    )
    return reading
