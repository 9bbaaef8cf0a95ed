# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure readers for the Linux RDMA sysfs ABI (/sys/class/infiniband and friends).

Everything takes a ``sysfs_root`` so that fixture trees and the lab can stand in for
/sys. Nothing here talks to Ansible: modules call these functions and unit tests do too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import os
import re

# Per-lane signalling rate in Gb/s, as the kernel names them in ports/<n>/rate.
LANE_SPEEDS_GBPS = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}

PORT_STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}

# "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)", "100 Gb/sec (4X EDR)", "56 Gb/sec (4X FDR)",
# "200 Gb/sec (2X HDR)"; some drivers print only "100 Gb/sec" or add " (4X)".
_RATE_RE = re.compile(
    r"^\s*(?P<gbps>\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((?P<lanes>\d+)X(?:\s+(?P<speed>[A-Z0-9]+))?\))?\s*$"
)
_STATE_RE = re.compile(r"^\s*(?P<num>\d+)\s*:\s*(?P<name>\S+)\s*$")
_PCIE_SPEED_RE = re.compile(r"^\s*(?P<gts>\d+(?:\.\d+)?)\s*GT/s")


def read_text(path):
    """Return the stripped content of a sysfs attribute, or None when it is absent/unreadable.

    sysfs files may or may not end in a newline, and some attributes (e.g. a port's
    counters on a driver without a PMA) fail on read with EINVAL: both are normal.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except (IOError, OSError):
        return None
    return data.decode("utf-8", "replace").strip()


def parse_rate(text):
    """Parse ports/<n>/rate into (rate_gbps: float, lanes: int|None, lane_speed: str|None).

    >>> parse_rate("400 Gb/sec (4X NDR)")
    (400.0, 4, 'NDR')
    """
    if text is None:
        return None, None, None
    match = _RATE_RE.match(text)
    if not match:
        return None, None, None
    lanes = int(match.group("lanes")) if match.group("lanes") else None
    return float(match.group("gbps")), lanes, match.group("speed")


def parse_enum(text, names):
    """Parse "4: ACTIVE" / "5: LinkUp" into the name; fall back to the number's name."""
    if text is None:
        return None
    match = _STATE_RE.match(text)
    if not match:
        return text.strip() or None
    num = int(match.group("num"))
    return match.group("name") if match.group("name") else names.get(num)


def parse_pcie_speed(text):
    """ "32.0 GT/s PCIe" -> 32.0; "Unknown" or absent -> None."""
    if not text:
        return None
    match = _PCIE_SPEED_RE.match(text)
    return float(match.group("gts")) if match else None


def parse_int(text):
    if text is None:
        return None
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def _gid_is_ipv4_mapped(gid):
    # GIDs read like "0000:0000:0000:0000:0000:ffff:0a00:0001".
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return False
    return addr.ipv4_mapped is not None and str(addr.ipv4_mapped) != "0.0.0.0"


def find_roce_v2_ipv4_gid_index(port_dir):
    """Lowest GID index whose type is "RoCE v2" and whose GID is an IPv4-mapped address.

    That is the index perftest's -x and (before NCCL 2.21) NCCL_IB_GID_INDEX need on RoCE.
    """
    types_dir = os.path.join(port_dir, "gid_attrs", "types")
    try:
        names = os.listdir(types_dir)
    except OSError:
        return None
    for index in sorted(int(n) for n in names if n.isdigit()):
        gid_type = read_text(os.path.join(types_dir, str(index)))
        if not gid_type or gid_type.lower() != "roce v2":
            continue
        gid = read_text(os.path.join(port_dir, "gids", str(index)))
        if gid and _gid_is_ipv4_mapped(gid):
            return index
    return None


def read_pcie(pci_dir):
    """PCIe link of the device behind an RDMA device; degraded when trained below its maximum."""
    speed = parse_pcie_speed(read_text(os.path.join(pci_dir, "current_link_speed")))
    width = parse_int(read_text(os.path.join(pci_dir, "current_link_width")))
    max_speed = parse_pcie_speed(read_text(os.path.join(pci_dir, "max_link_speed")))
    max_width = parse_int(read_text(os.path.join(pci_dir, "max_link_width")))
    degraded = bool(
        (speed is not None and max_speed is not None and speed < max_speed)
        or (width is not None and max_width is not None and width < max_width)
    )
    return {
        "speed_gts": speed,
        "width": width,
        "max_speed_gts": max_speed,
        "max_width": max_width,
        "degraded": degraded,
    }


def infiniband_class_dir(sysfs_root):
    return os.path.join(sysfs_root, "class", "infiniband")


def port_dir(sysfs_root, device, port):
    return os.path.join(infiniband_class_dir(sysfs_root), device, "ports", str(port))


def list_devices(sysfs_root):
    """RDMA device names under <root>/class/infiniband, sorted; [] when the class is absent."""
    try:
        return sorted(os.listdir(infiniband_class_dir(sysfs_root)))
    except OSError:
        return []


def list_ports(sysfs_root, device):
    try:
        names = os.listdir(os.path.join(infiniband_class_dir(sysfs_root), device, "ports"))
    except OSError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def read_port(sysfs_root, device, port):
    pdir = port_dir(sysfs_root, device, port)
    rate_gbps, lanes, lane_speed = parse_rate(read_text(os.path.join(pdir, "rate")))
    link_layer = read_text(os.path.join(pdir, "link_layer"))
    return {
        "state": parse_enum(read_text(os.path.join(pdir, "state")), PORT_STATES),
        "phys_state": parse_enum(read_text(os.path.join(pdir, "phys_state")), PHYS_STATES),
        "link_layer": link_layer,
        "rate_gbps": rate_gbps,
        "lanes": lanes,
        "lane_speed": lane_speed,
        "lid": parse_int(read_text(os.path.join(pdir, "lid"))),
        "sm_lid": parse_int(read_text(os.path.join(pdir, "sm_lid"))),
        "roce_v2_ipv4_gid_index": (find_roce_v2_ipv4_gid_index(pdir) if link_layer == "Ethernet" else None),
    }


def read_port_rate_gbps(sysfs_root, device, port):
    """The port's rate in Gb/s (None when unknown): what pair gates are fractions of."""
    return parse_rate(read_text(os.path.join(port_dir(sysfs_root, device, port), "rate")))[0]


def _netdevs(dev_dir):
    # The PCI function's net/ directory names the netdevs bound to the same function
    # (IPoIB ib0, or the RoCE Ethernet interface).
    try:
        return sorted(os.listdir(os.path.join(dev_dir, "device", "net")))
    except OSError:
        return []


def read_device(sysfs_root, device):
    dev_dir = os.path.join(infiniband_class_dir(sysfs_root), device)
    pci_dir = os.path.join(dev_dir, "device")
    pci_address = None
    if os.path.islink(pci_dir) or os.path.isdir(pci_dir):
        pci_address = os.path.basename(os.path.realpath(pci_dir))
        if not re.match(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$", pci_address):
            pci_address = None
    numa = parse_int(read_text(os.path.join(pci_dir, "numa_node")))
    ports = {}
    for port in list_ports(sysfs_root, device):
        ports[str(port)] = read_port(sysfs_root, device, port)
    return {
        "fw_ver": read_text(os.path.join(dev_dir, "fw_ver")),
        "board_id": read_text(os.path.join(dev_dir, "board_id")),
        "hca_type": read_text(os.path.join(dev_dir, "hca_type")),
        "node_guid": read_text(os.path.join(dev_dir, "node_guid")),
        "node_desc": read_text(os.path.join(dev_dir, "node_desc")),
        "netdevs": _netdevs(dev_dir),
        "pci_address": pci_address,
        # The kernel reports -1 when the platform does not know the NUMA node.
        "numa_node": numa if numa is not None and numa >= 0 else None,
        "pcie": read_pcie(pci_dir),
        "ports": ports,
    }


def discover(sysfs_root):
    """Everything ib_facts returns: {'devices': {...}, 'active_ports': ['dev:port', ...]}."""
    devices = {}
    for device in list_devices(sysfs_root):
        devices[device] = read_device(sysfs_root, device)
    return {"devices": devices, "active_ports": active_ports(devices)}


def active_ports(devices, link_layer=None):
    """'dev:port' for ports that are ACTIVE and LinkUp (optionally of one link layer)."""
    out = []
    for name in sorted(devices):
        for port in sorted(devices[name]["ports"], key=int):
            info = devices[name]["ports"][port]
            if info["state"] != "ACTIVE" or info["phys_state"] != "LinkUp":
                continue
            if link_layer and info["link_layer"] != link_layer:
                continue
            out.append("%s:%s" % (name, port))
    return out
