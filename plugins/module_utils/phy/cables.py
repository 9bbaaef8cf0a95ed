# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Naming a cable by its two ends and the serial numbers its modules report (pure).

A port is an end: a host port {"kind": "host", "host", "device", "port"} or a switch port {"kind": "switch",
"switch", "guid", "lid", "port"}. ``ends`` (built from the topology by the caller: the phy_verdict filter)
maps an end's key to {"label", "peer", "peer_key"}: the labels are the topology's own ("ibt-lab-node2
mlx5_1", "lab-leaf4 p2", as subnet/topology.Index spells ports), so a cable is named the same way in the
suspect-cable verdict, the topology findings and here. Without a topology a host end is still named by host
and device and its peer is "its peer (unknown: no topology)".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

UNKNOWN_PEER = "its peer (unknown: no topology)"


def end_key(end):
    """'host:node2/mlx5_1/1' or 'switch:0x...a00004/2' (by GUID when known, else by name or LID)."""
    if end.get("kind") == "switch":
        ident = end.get("guid") or end.get("switch") or "lid-%s" % end.get("lid")
        return "switch:%s/%s" % (str(ident).lower(), int(end.get("port") or 0))
    return "host:%s/%s/%s" % (end.get("host"), end.get("device"), int(end.get("port") or 1))


def default_label(end):
    """The end's own name when the topology does not know it."""
    if end.get("kind") == "switch":
        return "%s p%s" % (end.get("switch") or "lid-%s" % end.get("lid"), end.get("port"))
    port = int(end.get("port") or 1)
    label = "%s %s" % (end.get("host"), end.get("device"))
    return label if port == 1 else "%s port %d" % (label, port)


def describe(end, ends):
    """(label, peer label, peer key) of an end."""
    entry = (ends or {}).get(end_key(end)) or {}
    return entry.get("label") or default_label(end), entry.get("peer") or UNKNOWN_PEER, entry.get("peer_key")


def serial_of(reading):
    module = (reading or {}).get("module") or {}
    return module.get("serial")


def cable_id(end, ends):
    """A key the two ends of one cable share (their sorted end keys; the end alone when the peer is unknown)."""
    key = end_key(end)
    peer_key = ((ends or {}).get(key) or {}).get("peer_key")
    return " = ".join(sorted([key, peer_key])) if peer_key else key


def cable_text(a, b, serials):
    """'ibt-lab-node2 mlx5_1 <-> lab-leaf4 p2 (serial X at ibt-lab-node2 mlx5_1, serial Y at lab-leaf4 p2)'.

    ``serials``: {end label: serial}; one shared serial (a DAC or AOC reports the same at both ends) is said once.
    """
    known = [(label, s) for label, s in sorted((serials or {}).items()) if s]
    text = "%s <-> %s" % (a, b)
    if not known:
        return text + " (serial unknown)"
    if len(set(s for _l, s in known)) == 1:
        return text + " (serial %s)" % known[0][1]
    return text + " (%s)" % ", ".join("serial %s at %s" % (s, label) for label, s in known)
