# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PHY figures as a Prometheus textfile (ibtune_phy.prom), for node_exporter's textfile collector.

render(entries) turns read.read_ends() entries of one host into gauges and counters; a figure the tool
printed as N/A is left out (no series), never written as 0. fabric_monitoring runs main() from a systemd
timer (roles/fabric_monitoring/tasks/phy_textfile.yml); it never clears counters. Metrics (labels device,
port; lane where per lane; docs/phy.md):
  ibtune_phy_up 1/0 (the port was read), ibtune_phy_read_timestamp_seconds,
  ibtune_phy_effective_ber, ibtune_phy_symbol_ber (0 for the no-errors value), ibtune_phy_raw_ber{lane},
  ibtune_phy_raw_errors_total{lane}, ibtune_phy_effective_errors_total, ibtune_phy_symbol_errors_total,
  ibtune_phy_link_down_total, ibtune_phy_link_recovery_total, ibtune_phy_time_since_clear_seconds,
  ibtune_phy_fec_bin_codewords_total{bin}, ibtune_phy_fec_tail_total (bins >= the tail bin),
  ibtune_phy_module_temperature_celsius and _alarm_low/_alarm_high_celsius, ibtune_phy_module_rx_power_dbm{lane},
  ibtune_phy_module_tx_power_dbm{lane} and their _alarm_low/_alarm_high_dbm,
  ibtune_phy_module_info{vendor, part_number, serial, identifier} 1.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import gates as _gates
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import module as _module_run

HELP = {
    "ibtune_phy_up": ("gauge", "1 when mlxlink read the port, 0 when it could not"),
    "ibtune_phy_read_timestamp_seconds": ("gauge", "when the port was read"),
    "ibtune_phy_effective_ber": ("gauge", "post-FEC BER since the last clear (0 = the no-errors value 15E-255)"),
    "ibtune_phy_symbol_ber": ("gauge", "symbol BER since the last clear (0 = the no-errors value)"),
    "ibtune_phy_raw_ber": ("gauge", "pre-FEC BER of a lane since the last clear"),
    "ibtune_phy_raw_errors_total": ("counter", "pre-FEC bit errors of a lane since the last clear"),
    "ibtune_phy_effective_errors_total": ("counter", "errors FEC could not correct since the last clear"),
    "ibtune_phy_symbol_errors_total": ("counter", "symbol errors since the last clear"),
    "ibtune_phy_link_down_total": ("counter", "link down events since the last clear"),
    "ibtune_phy_link_recovery_total": ("counter", "link error recoveries since the last clear"),
    "ibtune_phy_time_since_clear_seconds": ("gauge", "how long the counters have counted"),
    "ibtune_phy_fec_bin_codewords_total": ("counter", "FEC codewords by symbols corrected (bin) since the last clear"),
    "ibtune_phy_fec_tail_total": ("counter", "FEC codewords in the histogram's tail bins since the last clear"),
    "ibtune_phy_module_temperature_celsius": ("gauge", "module temperature"),
    "ibtune_phy_module_temperature_alarm_low_celsius": ("gauge", "the module's low temperature alarm"),
    "ibtune_phy_module_temperature_alarm_high_celsius": ("gauge", "the module's high temperature alarm"),
    "ibtune_phy_module_rx_power_dbm": ("gauge", "received optical power of a lane"),
    "ibtune_phy_module_rx_power_alarm_low_dbm": ("gauge", "the module's low Rx power alarm"),
    "ibtune_phy_module_rx_power_alarm_high_dbm": ("gauge", "the module's high Rx power alarm"),
    "ibtune_phy_module_tx_power_dbm": ("gauge", "transmitted optical power of a lane"),
    "ibtune_phy_module_tx_power_alarm_low_dbm": ("gauge", "the module's low Tx power alarm"),
    "ibtune_phy_module_tx_power_alarm_high_dbm": ("gauge", "the module's high Tx power alarm"),
    "ibtune_phy_module_info": ("gauge", "the module's vendor, part and serial number (value 1)"),
}


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(base, extra=None):
    items = list(base.items()) + list((extra or {}).items())
    return ",".join('%s="%s"' % (k, _escape(v)) for k, v in items)


def _number(value):
    return repr(float(value)) if isinstance(value, float) else str(value)


def _counters(samples, base, counters, seconds_factor=60.0):
    for key, name in (
        ("effective_ber", "ibtune_phy_effective_ber"),
        ("symbol_ber", "ibtune_phy_symbol_ber"),
        ("effective_errors", "ibtune_phy_effective_errors_total"),
        ("symbol_errors", "ibtune_phy_symbol_errors_total"),
        ("link_down", "ibtune_phy_link_down_total"),
        ("link_recovery", "ibtune_phy_link_recovery_total"),
    ):
        if counters.get(key) is not None:
            samples.append((name, base, counters[key]))
    if counters.get("time_since_clear_min") is not None:
        samples.append(("ibtune_phy_time_since_clear_seconds", base, counters["time_since_clear_min"] * seconds_factor))
    for key, name in (("raw_ber_lanes", "ibtune_phy_raw_ber"), ("raw_errors_lanes", "ibtune_phy_raw_errors_total")):
        for lane, value in enumerate(counters.get(key) or []):
            if value is not None:
                samples.append((name, dict(base, lane=str(lane)), value))


def _module(samples, base, module):
    if module.get("temperature_c") is not None:
        samples.append(("ibtune_phy_module_temperature_celsius", base, module["temperature_c"]))
    for key, name in (
        ("temperature_range", "ibtune_phy_module_temperature_alarm_%s_celsius"),
        ("rx_power_range", "ibtune_phy_module_rx_power_alarm_%s_dbm"),
        ("tx_power_range", "ibtune_phy_module_tx_power_alarm_%s_dbm"),
    ):
        if module.get(key):
            samples.append((name % "low", base, module[key][0]))
            samples.append((name % "high", base, module[key][1]))
    for key, name in (
        ("rx_power_dbm", "ibtune_phy_module_rx_power_dbm"),
        ("tx_power_dbm", "ibtune_phy_module_tx_power_dbm"),
    ):
        for lane, value in enumerate(module.get(key) or []):
            if value is not None:
                samples.append((name, dict(base, lane=str(lane)), value))
    info = dict((k, module.get(k) or "") for k in ("vendor", "part_number", "serial", "identifier"))
    if any(info.values()):
        samples.append(("ibtune_phy_module_info", dict(base, **info), 1))


def samples_of(entry, tail_bin):
    end = entry["end"]
    base = {"device": end.get("device") or "lid-%s" % end.get("lid"), "port": str(end.get("port") or 1)}
    reading = entry.get("reading")
    samples = [("ibtune_phy_up", base, 0 if reading is None else 1)]
    if reading is None:
        return samples
    samples.append(("ibtune_phy_read_timestamp_seconds", base, float(entry.get("read_at") or time.time())))
    _counters(samples, base, reading.get("counters") or {})
    histogram = reading.get("fec_histogram")
    if histogram:
        for low, high, value in histogram:
            samples.append(
                (
                    "ibtune_phy_fec_bin_codewords_total",
                    dict(base, bin=str(low) if low == high else "%d-%d" % (low, high)),
                    value,
                )
            )
        samples.append(("ibtune_phy_fec_tail_total", base, sum(v for _l, high, v in histogram if high >= tail_bin)))
    if reading.get("module"):
        _module(samples, base, reading["module"])
    return samples


def render(entries, tail_bin=None):
    """The textfile for one host's read entries (every name with its HELP and TYPE once)."""
    tail = _gates.DEFAULTS["fec_tail_bin"] if tail_bin is None else int(tail_bin)
    by_name = {}
    for entry in entries:
        for name, labels, value in samples_of(entry, tail):
            by_name.setdefault(name, []).append((labels, value))
    lines = []
    for name in [n for n in HELP if n in by_name]:
        kind, text = HELP[name]
        lines += ["# HELP %s %s" % (name, text), "# TYPE %s %s" % (name, kind)]
        lines += ["%s{%s} %s" % (name, _labels(labels), _number(value)) for labels, value in by_name[name]]
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    """The textfile, 0644, into the directory the role made (node_exporter reads it)."""
    _files.write_text(path, text, mode=0o644, dir_mode=None)


USAGE = "usage: ibtune-phy-textfile --out FILE [--executable mlxlink] [--sysfs-root /sys] [--devices mlx5_0:1,...]"


def main(argv=None, stdout=None):
    """Read the host's ports and write the textfile; exit 0 even when a port is unreadable (ibtune_phy_up 0)."""
    args = list(sys.argv[1:] if argv is None else argv)
    stdout = stdout or sys.stdout
    opts = {
        "--out": None,
        "--executable": None,
        "--sysfs-root": "/sys",
        "--devices": "",
        "--timeout": "30",
        "--tail-bin": None,
    }
    while args:
        key = args.pop(0)
        if key not in opts or not args:
            stdout.write(USAGE + "\n")
            return 2
        opts[key] = args.pop(0)
    if not opts["--out"]:
        stdout.write(USAGE + "\n")
        return 2
    params = {
        "sysfs_root": opts["--sysfs-root"],
        "devices": [d for d in opts["--devices"].split(",") if d] or None,
        "executable": opts["--executable"],
        "timeout": float(opts["--timeout"]),
        "histogram": True,
    }
    try:
        result = _module_run.run(params)
    except _module_run.PhyModuleError as exc:
        stdout.write("ibtune-phy-textfile: %s\n" % exc)
        return 1
    write_atomic(opts["--out"], render(result["ports"], opts["--tail-bin"]))
    stdout.write("%s\n" % result["msg"])
    return 0
