# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check's PHY part: the effective-BER sentinel and the module's alarms, in seconds.

node_problems(config, ports) reads each expected port once (mlxlink -m -c --json, no FEC histogram: the
cheapest query, about 0.8 s a device on real hardware) and returns one line per problem:
  - the effective (post-FEC) BER is no longer the no-errors value 15E-255: errors FEC could not correct
    reached the application since the counters were last cleared (clear them after replacing the cable);
  - a module alarm: temperature at the fail threshold or the module's own high alarm, optical power,
    bias or voltage outside the module's range, a Tx fault, loss of signal or CDR lock on an active link,
    a module firmware fault (phy.gates.check_module, errors only).
A port the tool cannot read is skipped, not a problem: a tool hiccup must not drain a node. Never clears.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import gates as _gates
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import read as _read

DEFAULTS = {"enabled": False, "executable": "", "timeout_s": 8, "temperature_fail_c": 75.0}


def config(raw):
    """DEFAULTS merged with ``raw`` (the node health config's "phy" key); ValueError names a bad key."""
    if raw in (None, {}):
        return dict(DEFAULTS)
    if not isinstance(raw, dict):
        raise ValueError("phy must be an object like %s" % DEFAULTS)
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ValueError("unknown phy keys %s: use %s" % (", ".join(unknown), ", ".join(sorted(DEFAULTS))))
    merged = dict(DEFAULTS)
    merged.update(raw)
    return merged


def port_problems(device, port, reading, cfg):
    """Problem lines of one port's reading."""
    where = "%s port %s" % (device, port)
    module = (reading.get("module") or {}) if reading else {}
    serial = module.get("serial")
    suffix = " (module serial %s)" % serial if serial else ""
    out = []
    effective = ((reading or {}).get("counters") or {}).get("effective_ber")
    if effective is not None and effective > 0:
        out.append(
            "%s: effective BER %.2g is above the no-errors value: errors FEC could not correct reached the "
            "application since the last clear%s" % (where, effective, suffix)
        )
    thresholds = _gates.settings(
        {
            "temperature_fail_c": float(cfg["temperature_fail_c"]),
            "temperature_warn_c": min(_gates.DEFAULTS["temperature_warn_c"], float(cfg["temperature_fail_c"])),
        }
    )
    for finding in _gates.check_module(reading, thresholds):
        if finding["severity"] == "error":
            out.append("%s: %s%s" % (where, finding["msg"], suffix))
    return out


def node_problems(raw_config, ports, runner=None):
    """Problem lines for the node's expected ports ([{device, port}]); [] when off or healthy."""
    cfg = config(raw_config)
    if not cfg["enabled"] or not ports:
        return []
    executable = _read.find_executable(cfg["executable"] or None)
    if not executable:
        return [
            "PHY check: %s not found (install MFT or mstflint, or turn node_health_phy off)"
            % (cfg["executable"] or "mlxlink/mstlink")
        ]
    ends = [{"kind": "host", "device": p["device"], "port": int(p.get("port", 1))} for p in ports]
    kwargs = {"runner": runner} if runner else {}
    problems = []
    for entry in _read.read_ends(ends, executable, timeout=float(cfg["timeout_s"]), histogram=False, **kwargs):
        if entry["reading"] is None:
            continue
        end = entry["end"]
        problems += port_problems(end["device"], end["port"], entry["reading"], cfg)
    return problems
