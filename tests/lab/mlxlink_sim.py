#!/usr/bin/env python3
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's mlxlink: answers `mlxlink -d <dev> [-p N] -m -c [-e] [--rx_fec_histogram --show_histogram]
[--json]` (and `--pc`, `--rx_fec_histogram --clear_histogram`) for the node's fixture RDMA tree, in MFT 4.34.1's
formats (the JSON document and the text form, labels as mstflint's mlxlink prints them), with figures from the
lab fabric map. Lab only (installed as /opt/ibtune-lab/bin/mlxlink by tests/lab/prepare.yml); stdlib only.

The fabric map's "phy" key (tests/lab/fabric/phy_prefailure.json):
  {"ports": {"<node>/<dev>" or "lid-<LID>/<port>": {
      "lane_ber": {"<lane>": rate}        a lane's raw (pre-FEC) BER (default lanes 2e-10, 6e-10, 3e-10, 4e-10),
      "climb_per_min": {"<lane>": k}      that lane's rate grows by k x its base per minute since the clear
                                          (a number: every lane),
      "temperature_c": 70,                the module's temperature (default 48; its alarm range -5..75),
      "rx_power_dbm": [..],               per-lane Rx power (default 1.9; alarm range -10.41..6),
      "effective_errors_per_min": n,      errors FEC could not correct (default 0: "15E-255"),
      "fec_tail_per_min": n,              codewords in histogram bin 10 and up,
      "link_down_per_min": n,             flaps,
      "serial": "..."}},                  the module's serial (default derived from node and device)
   "since_clear_min": 1440}               how long ago the counters were cleared when the port is first read
State: /var/lib/ibtune-lab/phy/<port>.json (the clear time: `--pc` resets it; set_fabric removes the directory),
and every invocation is appended to /var/lib/ibtune-lab/phy/mlxlink.log (argv, one JSON line), so a test can
prove that nothing cleared the counters unasked. Environment overrides for unit tests: IBTUNE_LAB_NODE,
IBTUNE_LAB_SYSFS, IBTUNE_LAB_FABRIC, IBTUNE_LAB_PHY_STATE, IBTUNE_LAB_NOW (a fixed clock, epoch seconds).
"""

import hashlib
import json
import os
import re
import sys
import time

DEFAULT_LANES = [2e-10, 6e-10, 3e-10, 4e-10, 2e-10, 5e-10, 3e-10, 4e-10]
TOOL = {"Firmware Version": "28.39.1002", "MFT Version": "4.34.1-10", "amBER Version": "5.75"}
LABEL_WIDTH = 35  # mlxlink_record.cpp: key + setw(37 - len(key)) ": "


def env(name, default):
    return os.environ.get(name) or default


def now():
    return float(env("IBTUNE_LAB_NOW", "0")) or time.time()


def node_name():
    name = os.environ.get("IBTUNE_LAB_NODE")
    if name:
        return name
    try:
        with open("/etc/ibtune-lab/node") as handle:
            return handle.read().strip()
    except OSError:
        return os.uname().nodename


def load_map():
    try:
        with open(env("IBTUNE_LAB_FABRIC", "/etc/ibtune-lab/fabric.json")) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def parse_args(argv):
    opts = {"device": None, "port": None, "flags": set()}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-d", "--device") and args:
            opts["device"] = args.pop(0)
        elif arg in ("-p", "--port") and args:
            opts["port"] = args.pop(0)
        else:
            opts["flags"].add(arg)
    return opts


def fail(message, json_out):
    # mstlink 4.21.0 prints this on stderr and exits 1, also under --json
    # (tests/fixtures/phy/mstlink-4.21.0-no-device.*)
    sys.stdout.write("\x1b[31m \n\x1b[0m \n")
    sys.stderr.write("-E- %s\n" % message)
    return 1


def host_port(device, port):
    """(speed_gbps, lanes, state) from the node's fixture tree, or None when the device is not there."""
    root = env("IBTUNE_LAB_SYSFS", "/var/lib/ibtune-lab/sys")
    base = os.path.join(root, "class", "infiniband", device, "ports", str(port))
    try:
        with open(os.path.join(base, "rate")) as handle:
            rate = handle.read()
        with open(os.path.join(base, "state")) as handle:
            state = handle.read()
    except OSError:
        return None
    match = re.match(r"\s*(\d+(?:\.\d+)?) Gb/sec \((\d+)X", rate)
    if not match:
        return None
    return float(match.group(1)), int(match.group(2)), "Active" if "ACTIVE" in state else "Down"


def state_path(key):
    directory = env("IBTUNE_LAB_PHY_STATE", "/var/lib/ibtune-lab/phy")
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".json")


def cleared_at(key, fabric):
    path = state_path(key)
    try:
        with open(path) as handle:
            return float(json.load(handle)["cleared_at"])
    except (OSError, ValueError, KeyError):
        value = now() - 60.0 * float(fabric.get("since_clear_min", 1440))
        write_state(path, value)
        return value


def write_state(path, value):
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "w") as handle:
        json.dump({"cleared_at": value}, handle)
    os.rename(tmp, path)


def log(argv):
    with open(os.path.join(os.path.dirname(state_path("x")), "mlxlink.log"), "a") as handle:
        handle.write(json.dumps({"time": now(), "node": node_name(), "argv": argv}) + "\n")


def lane_rates(spec, lanes):
    rates = list(DEFAULT_LANES[:lanes])
    for lane, rate in (spec.get("lane_ber") or {}).items():
        rates[int(lane)] = float(rate)
    return rates


def ber_text(rate):
    """mlxlink's coef E-magnitude (one-digit or two-digit coefficient), 15E-255 for no errors."""
    if rate <= 0:
        return "15E-255"
    exponent = 0
    while rate < 1:
        rate *= 10
        exponent += 1
    return "%dE-%d" % (int(round(rate)), exponent)


def figures(key, spec, fabric, speed, lanes):
    """Counters since the clear at this moment."""
    minutes = max(0.0, (now() - cleared_at(key, fabric)) / 60.0)
    lane_bits_per_min = speed / lanes * 1e9 * 60.0
    climb = spec.get("climb_per_min", 0)
    climbs = [float(climb.get(str(i), 0)) if isinstance(climb, dict) else float(climb) for i in range(lanes)]
    errors = [
        int(r * lane_bits_per_min * (minutes + k * minutes * minutes / 2.0))
        for r, k in zip(lane_rates(spec, lanes), climbs)
    ]
    bits = lane_bits_per_min * minutes
    eff = int(float(spec.get("effective_errors_per_min", 0)) * minutes)
    return {
        "minutes": minutes,
        "raw_errors": errors,
        "raw_ber_lanes": [ber_text(e / bits) if bits else "15E-255" for e in errors],
        "raw_ber": ber_text(sum(errors) / (bits * lanes)) if bits else "15E-255",
        "effective_errors": eff,
        "effective_ber": ber_text(eff / (bits * lanes)) if bits and eff else "15E-255",
        "link_down": int(float(spec.get("link_down_per_min", 0)) * minutes),
        "tail": int(float(spec.get("fec_tail_per_min", 0)) * minutes),
        "codewords": int(bits * lanes / 5440),
    }


def serial_for(key, spec):
    if spec.get("serial"):
        return spec["serial"]
    return "MT24%s" % hashlib.sha1(key.encode()).hexdigest()[:8].upper()


def sections(key, spec, fig, speed, lanes, state, histogram, eye):
    def per_lane(value):
        return ",".join([value] * lanes)

    rx = spec.get("rx_power_dbm") or [1.9] * lanes
    out = {
        "Operational Info": {
            "State": state,
            "Physical state": "LinkUp" if state == "Active" else "Polling",
            "Speed": "IB-NDR" if speed / lanes == 100 else "%dG" % speed,
            "Width": "%dx" % lanes,
            "FEC": "Standard_RS-FEC - (544,514)",
            "Loopback Mode": "No Loopback",
            "Auto Negotiation": "ON",
        },
        "Troubleshooting Info": {
            "Status Opcode": "0",
            "Group Opcode": "N/A",
            "Recommendation": "No issue was observed",
        },
        "Tool Information": dict(TOOL),
        "Module Info": {
            "Temperature [C]": "%d [-5..75]" % int(spec.get("temperature_c", 48)),
            "Voltage [mV]": "3290.1 [2970..3630]",
            "Bias Current [mA]": "%s [2..15]" % per_lane("8.380"),
            "Rx Power Current [dBm]": "%s [-10.41..6]" % ",".join("%.3f" % v for v in rx),
            "Tx Power Current [dBm]": "%s [-8.508..5]" % per_lane("1.562"),
            "Identifier": "OSFP",
            "Compliance": "IB NDR",
            "Cable Technology": "850 nm VCSEL",
            "Cable Type": "Optical Module (separated)",
            "OUI": "Nvidia",
            "Vendor Name": "Nvidia",
            "Vendor Part Number": "MMA4Z00-NS",
            "Vendor Serial Number": serial_for(key, spec),
            "Rev": "A6",
            "Module State": "Ready state",
            "DataPath FW Fault": "0",
            "Module FW Fault": "0",
            "Tx Fault [per lane]": {"values": ["0"] * lanes},
            "Rx LOS [per lane]": {"values": ["0"] * lanes},
            "Tx LOS [per lane]": {"values": ["0"] * lanes},
            "Rx CDR LOL [per lane]": {"values": ["0"] * lanes},
            "Tx CDR LOL [per lane]": {"values": ["0"] * lanes},
        },
        "Physical Counters and BER Info": {
            "Time Since Last Clear [Min]": "%.1f" % fig["minutes"],
            "Symbol Errors": str(fig["effective_errors"]),
            "Symbol BER": fig["effective_ber"],
            "Effective Physical Errors": str(fig["effective_errors"]),
            "Effective Physical BER": fig["effective_ber"],
            "Raw Physical Errors Per Lane": {"values": [str(e) for e in fig["raw_errors"]]},
            "Raw Physical BER Per Lane": {"values": fig["raw_ber_lanes"]},
            "Raw Physical BER": fig["raw_ber"],
            "Link Down Counter": str(fig["link_down"]),
            "Link Error Recovery Counter": "0",
        },
    }
    if histogram:
        total = sum(fig["raw_errors"])
        counts = [max(0, fig["codewords"] - total), int(total * 0.998), int(total * 0.002), int(total * 1e-5)] + [
            0
        ] * 12
        for tail in range(10, 16):
            counts[tail] = fig["tail"] if tail == 10 else 0
        out["Histogram of FEC Errors"] = dict(
            ("Bin %d" % i, {"values": ["[%d]" % i, str(c)]}) for i, c in enumerate(counts)
        )
        out["Histogram of FEC Errors"]["Header"] = {"values": ["Range", "Occurrences"]}
    if eye:
        out["EYE Opening Info"] = {
            "Lane": {"values": [str(i) for i in range(lanes)]},
            "Initial FOM": {"values": ["100"] * lanes},
            "Last FOM": {"values": ["104"] * lanes},
            "Upper Grades": {"values": ["108"] * lanes},
            "Mid Grades": {"values": ["120"] * lanes},
            "Lower Grades": {"values": ["104"] * lanes},
        }
    return out


def text_value(value):
    if isinstance(value, dict):
        return (
            ",".join(value["values"])
            if not value["values"][0].startswith("[")
            else "%s   \t%s" % tuple(value["values"])
        )
    return value


def render_text(secs):
    order = [
        "Operational Info",
        "Troubleshooting Info",
        "Tool Information",
        "Module Info",
        "Physical Counters and BER Info",
        "Histogram of FEC Errors",
        "EYE Opening Info",
    ]
    out = []
    for title in [t for t in order if t in secs]:
        out += ["", title, "-" * len(title)]
        for label, value in secs[title].items():
            out.append("%s%s: %s" % (label, " " * max(0, LABEL_WIDTH - len(label)), text_value(value)))
    return "\n".join(out) + "\n"


def clear(key, json_out, what):
    write_state(state_path(key), now())
    if json_out:
        sys.stdout.write(
            json.dumps({"result": {"config": [what]}, "status": {"code": 0, "message": "success"}}, indent=1) + "\n"
        )
    else:
        sys.stdout.write("\n%s...\n" % what)
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    opts = parse_args(argv)
    flags, json_out = opts["flags"], "--json" in opts["flags"]
    log(argv)
    if opts["device"] is None:
        sys.stderr.write("-E- Please provide a device name using -d or --device\n")
        return 1
    fabric = load_map()
    device = opts["device"]
    if device.startswith("lid-"):
        if not opts["port"]:
            return fail("Port number is required for in-band devices: -p <port>", json_out)
        key, (speed, lanes, state) = "%s/%s" % (device, opts["port"]), (400.0, 4, "Active")
    else:
        found = host_port(device, opts["port"] or 1)
        if found is None:
            return fail('Failed to open device: "%s", Invalid argument' % device, json_out)
        key, (speed, lanes, state) = "%s/%s" % (node_name(), device), found
    spec = ((fabric.get("phy") or {}).get("ports") or {}).get(key) or {}
    if "--pc" in flags:
        return clear(key, json_out, "Clearing Counters")
    if "--clear_histogram" in flags:
        return clear(key, json_out, "Clearing Histogram Counters")
    fig = figures(key, spec, fabric.get("phy") or {}, speed, lanes)
    histogram = "--rx_fec_histogram" in flags and "--show_histogram" in flags
    secs = sections(key, spec, fig, speed, lanes, state, histogram, "-e" in flags or "--show_eye" in flags)
    if not ("-m" in flags or "--show_module" in flags):
        del secs["Module Info"]
    if not ("-c" in flags or "--show_counters" in flags):
        del secs["Physical Counters and BER Info"]
    if json_out:
        doc = {"result": {"output": dict(sorted(secs.items()))}, "status": {"code": 0, "message": "success"}}
        sys.stdout.write(json.dumps(doc, indent="\t", sort_keys=True) + "\n\n")
    else:
        sys.stdout.write(render_text(secs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
