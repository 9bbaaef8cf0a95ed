# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From every port's readings to the PHY verdict, and that verdict into the report (pure).

``evaluate(ports, ends, thresholds, history)``: ``ports`` is a list of {"end", "before", "before_at", "after",
"after_at", "error"} (one per host or switch port; readings as mlxlink.parse gives them, "error" when the port
could not be read); ``ends`` names the ends (cables.py). The result, the ``phy`` value fabric_report takes:
{"version": 1, "settings", "findings": [...], "ports": [...], "unread": [...], "cleared": bool}. A finding is
{check, severity, value, limit, lane, msg, end, peer, cable, cable_id, serials, kind, host, device, switch,
port}; its msg starts with the cable, both ends and the serial(s): "cable ibt-lab-node2 mlx5_1 <-> lab-leaf4
p2 (serial X): lane 2 raw (pre-FEC) BER ...".

``apply(report, phy)`` adds phy_findings (errors first), phy (a summary) and the totals phy_errors and
phy_warnings to a report; an error fails it, warnings are listed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import cables as _cables
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import gates as _gates
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import history as _history

VERSION = 1
_ORDER = {"error": 0, "warning": 1}


def _where(end):
    keys = ("kind", "host", "device", "switch", "guid", "lid", "port")
    return dict((k, end.get(k)) for k in keys if end.get(k) is not None)


def _serials(entries, ends):
    """{cable id: {end label: serial}} over every port read (both ends of a cable land on the same id)."""
    out = {}
    for entry in entries:
        reading = entry.get("after") or entry.get("before")
        label, _peer, _key = _cables.describe(entry["end"], ends)
        out.setdefault(_cables.cable_id(entry["end"], ends), {})[label] = _cables.serial_of(reading)
    return out


def _summary(entry, fig, label, peer, cable):
    reading = entry.get("after") or {}
    module = reading.get("module") or {}
    lanes = (fig or {}).get("raw_ber_lanes") or []
    known = [v for v in lanes if v is not None]
    out = _where(entry["end"])
    out.update(end=label, peer=peer, cable=cable, serial=_cables.serial_of(reading), speed=(fig or {}).get("speed"))
    for key in ("window_s", "source", "effective_ber", "symbol_ber", "link_down", "link_recovery"):
        out[key] = (fig or {}).get(key)
    out.update(
        raw_ber_lanes=lanes or None,
        raw_ber_max=max(known) if known else None,
        temperature_c=module.get("temperature_c"),
        vendor=module.get("vendor"),
        part_number=module.get("part_number"),
    )
    return out


def _stamp(found, entry, label, peer, cable, cid, serials):
    first = cable.split(" <-> ")[0]
    for f in found:
        f.update(_where(entry["end"]))
        f.update(end=label, peer=peer, cable=cable, cable_id=cid, serials=serials)
        f["msg"] = "cable %s: %s%s" % (cable, f["msg"], "" if label == first else " (measured at %s)" % label)
    return found


def _oriented(entry, label, peer, peer_key):
    """(a, b) of a cable, the same from either end: the host end first, else the names in order."""
    if entry["end"].get("kind") != "switch":
        return label, peer
    if peer_key and peer_key.startswith("host:"):
        return peer, label
    return tuple(sorted((label, peer))) if peer != _cables.UNKNOWN_PEER else (label, peer)


def evaluate(ports, ends=None, thresholds=None, history=None, now=None):
    """The PHY verdict of a validation (docstring above); ValueError on bad thresholds."""
    cfg = _gates.settings(thresholds)
    entries = [p for p in ports or [] if isinstance(p, dict) and isinstance(p.get("end"), dict)]
    all_serials = _serials([e for e in entries if not e.get("error")], ends)
    figs, findings, summaries, unread = [], [], [], []
    named = []
    for entry in entries:
        label, peer, peer_key = _cables.describe(entry["end"], ends)
        cid = _cables.cable_id(entry["end"], ends)
        serials = all_serials.get(cid, {})
        cable = _cables.cable_text(*(_oriented(entry, label, peer, peer_key) + (serials,)))
        named.append((label, peer, cable, cid, serials))
        if entry.get("error") or entry.get("after") is None:
            unread.append(dict(_where(entry["end"]), end=label, cable=cable, error=entry.get("error") or "not read"))
            figs.append(None)
            continue
        found, fig = _gates.check_port(
            entry.get("before"), entry["after"], cfg, entry.get("before_at"), entry.get("after_at")
        )
        figs.append(fig)
        findings += _stamp(found, entry, label, peer, cable, cid, serials)
        summaries.append(_summary(entry, fig, label, peer, cable))
        summaries[-1]["cable_id"] = cid
    for index, found in sorted(_gates.raw_ber_outliers(figs, cfg).items()):
        label, peer, cable, cid, serials = named[index]
        findings += _stamp(found, entries[index], label, peer, cable, cid, serials)
    for summary, found in _history.trend_findings(history, summaries, cfg):
        entry = next(e for e in entries if _cables.cable_id(e["end"], ends) == summary["cable_id"])
        label, peer, cable, cid, serials = named[entries.index(entry)]
        findings += _stamp(found, entry, label, peer, cable, cid, serials)
    for item in unread:
        findings.append(
            dict(
                item,
                check="unread",
                severity="warning",
                value=None,
                limit=None,
                lane=None,
                msg="cable %s: PHY not read (%s): its pre-failure signals are unknown" % (item["cable"], item["error"]),
            )
        )
    findings.sort(key=lambda f: (_ORDER.get(f["severity"], 2), f.get("cable") or "", f["check"], f.get("lane") or 0))
    return {
        "version": VERSION,
        "settings": cfg,
        "findings": findings,
        "ports": summaries,
        "unread": unread,
        "cleared": any(bool(e.get("cleared")) for e in entries),
        "time": now,
    }


def check_value(phy):
    """ValueError when ``phy`` is not an evaluate() result."""
    if not isinstance(phy, dict) or phy.get("version") != VERSION or not isinstance(phy.get("findings"), list):
        raise ValueError(
            "phy must be the phy_verdict filter's result (version %d with findings), got %r"
            % (VERSION, type(phy).__name__ if not isinstance(phy, dict) else sorted(phy))
        )


def apply(report, phy):
    """Adds phy_findings, phy and totals phy_errors/phy_warnings to ``report``; an error fails it."""
    check_value(phy)
    found = [dict(f) for f in phy["findings"] if isinstance(f, dict) and f.get("msg")]
    errors = [f for f in found if f.get("severity") == "error"]
    report["phy_findings"] = found
    report["phy"] = {
        "ports": len(phy.get("ports") or []),
        "unread": len(phy.get("unread") or []),
        "cleared": bool(phy.get("cleared")),
        "window_s": _median_window(phy.get("ports") or []),
    }
    report["totals"]["phy_errors"] = len(errors)
    report["totals"]["phy_warnings"] = len(found) - len(errors)
    if errors:
        report["passed"] = False
    return report


def _median_window(ports):
    values = sorted(p["window_s"] for p in ports if p.get("window_s") is not None)
    return values[len(values) // 2] if values else None


def error_messages(report):
    """The msg of every PHY error of a report (for the failure message)."""
    return [f["msg"] for f in report.get("phy_findings") or [] if f.get("severity") == "error"]
