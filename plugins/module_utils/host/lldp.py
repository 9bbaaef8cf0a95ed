# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's LLDP neighbours from lldpd's JSON: which switch and port each NIC is cabled to (Ethernet/RoCE
fabrics, where no subnet manager knows the cabling).

Reads ``lldpctl -f json`` / ``lldpcli -f json show neighbors`` (one interface: ``interface`` is an object; several:
a list of one-key objects; the chassis keyed by the neighbour's system name) and ``-f json0`` (every container a
list, names under ``name``), as lldpd 1.0.16 writes them (tests/fixtures/lldp).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json


def _decode(output):
    if isinstance(output, (str, bytes)):
        text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
        if not text.strip():
            return {"lldp": {}}  # no neighbour at all: lldpd prints an empty document
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError("not lldpd JSON (%s): run lldpctl -f json" % exc)
    return output


def _as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _value(entry):
    """json0's [{"value": x}] (or json's plain x) -> x."""
    for item in _as_list(entry):
        if isinstance(item, dict):
            return item.get("value")
        return item
    return None


def _port_name(port):
    """The switch port: its id when the switch sends a name (ifname, local), else its description."""
    port = _as_list(port)[0] if _as_list(port) else {}
    ident = _as_list(port.get("id"))[0] if _as_list(port.get("id")) else {}
    if isinstance(ident, dict) and ident.get("type") in ("ifname", "local", "ifalias"):
        return ident.get("value")
    return _value(port.get("descr")) or (ident.get("value") if isinstance(ident, dict) else None)


def _json_interface(name, body):
    chassis = body.get("chassis") or {}
    switch = None
    if isinstance(chassis, dict) and "id" not in chassis and len(chassis) == 1:
        switch = next(iter(chassis))  # keyed by the neighbour's system name
    elif isinstance(chassis, dict):
        switch = _value(chassis.get("name")) or _value((chassis.get("id") or {}).get("value"))
    return name, {"switch": switch, "port": _port_name(body.get("port"))}


def _json0_interface(body):
    chassis = _as_list(body.get("chassis"))
    chassis = chassis[0] if chassis else {}
    ident = _as_list(chassis.get("id"))
    switch = _value(chassis.get("name")) or (ident[0].get("value") if ident and isinstance(ident[0], dict) else None)
    return body.get("name"), {"switch": switch, "port": _port_name(body.get("port"))}


def _interfaces(doc):
    """[(ifname, body, flavour)] of either JSON flavour."""
    lldp = doc.get("lldp") if isinstance(doc, dict) else None
    if isinstance(lldp, list):  # json0
        return [(None, body, "json0") for item in lldp for body in _as_list(item.get("interface"))]
    if not isinstance(lldp, dict):
        raise ValueError("no 'lldp' object: run lldpctl -f json (or lldpcli -f json show neighbors)")
    out = []
    for item in _as_list(lldp.get("interface")):
        if not isinstance(item, dict):
            raise ValueError("lldp.interface holds %r, not an interface object" % (item,))
        out.extend((name, body, "json") for name, body in item.items())
    return out


def neighbors(output):
    """{ifname: {"switch": system name (or chassis id), "port": switch port}} for every interface with a neighbour.
    ``output``: lldpd's JSON text or the decoded document. Raises ValueError for anything else."""
    out = {}
    for name, body, flavour in _interfaces(_decode(output)):
        if not isinstance(body, dict):
            continue
        ifname, peer = _json0_interface(body) if flavour == "json0" else _json_interface(name, body)
        if ifname:
            out[str(ifname)] = peer
    return out
