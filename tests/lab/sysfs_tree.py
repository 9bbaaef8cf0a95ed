#!/usr/bin/env python3
"""Build fixture sysfs trees shaped like a real kernel's, for unit tests, Molecule and the lab.

Lab/test code only: nothing under plugins/ or roles/ imports this.

Layout produced under ROOT (as the kernel lays it out):
  devices/pci0000:00/0000:00:01.0/<pci>/{current_link_speed,...,numa_node}
  devices/pci0000:00/0000:00:01.0/<pci>/infiniband/<dev>/{fw_ver,board_id,hca_type,node_guid,node_desc,ports/...}
  devices/pci0000:00/0000:00:01.0/<pci>/net/<netdev>/...
  class/infiniband/<dev> -> ../../devices/.../infiniband/<dev>      (symlink)
  class/infiniband/<dev>/device -> ../../../<pci>                    (symlink, as in the kernel)
  class/net/<netdev> -> ../../devices/.../net/<netdev>              (symlink)
Attribute files are written WITHOUT a trailing newline unless the spec says `newline: true`,
because real kernels differ and readers must cope with both.

Spec (YAML or JSON, or a dict):
  newline: false
  devices:
    mlx5_0:
      pci: "0000:18:00.0"            # default derived from the device index
      numa_node: 0
      fw_ver: 28.39.1002
      board_id: MT_0000000838
      hca_type: MT4129
      node_guid: a088:c203:0035:6f3a
      node_desc: "node1 mlx5_0"
      netdev: ibp24s0                 # optional
      pcie: {speed: "32.0 GT/s PCIe", width: 16, max_speed: "32.0 GT/s PCIe", max_width: 16}
      ports:
        1:
          state: "4: ACTIVE"
          phys_state: "5: LinkUp"
          rate: "400 Gb/sec (4X NDR)"
          link_layer: InfiniBand       # or Ethernet (RoCE)
          lid: "0xc"
          sm_lid: "0x1"
          counters: {symbol_error: 0, ...}      # defaults: every standard counter at 0
          hw_counters: {out_of_sequence: 0}     # optional
          gids: {0: "fe80:...", 3: "0000:...:ffff:0a00:0001"}   # RoCE
          gid_types: {0: "IB/RoCE v1", 3: "RoCE v2"}
  gpus:                                # optional: NVIDIA GPUs as PCI functions (vendor 0x10de, class 0x030200)
    - {pci: "0000:19:00.0", numa_node: 0}
  A GPU is devices/pci0000:00/0000:00:01.0/<pci>/{vendor,device,class,numa_node} and the kernel's
  bus/pci/devices/<pci> link to it (nccl_test counts GPUs there).
"""

import argparse
import json
import os
import sys

STANDARD_COUNTERS = (
    "VL15_dropped",
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
)

PORT_DEFAULTS = {
    "state": "4: ACTIVE",
    "phys_state": "5: LinkUp",
    "rate": "400 Gb/sec (4X NDR)",
    "link_layer": "InfiniBand",
    "lid": "0x1",
    "sm_lid": "0x1",
    "cap_mask": "0xa651e848",
}


def _write(path, value, newline):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = str(value)
    if newline and not text.endswith("\n"):
        text += "\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _symlink(target, link):
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)


def _build_port(port_dir, spec, newline):
    merged = dict(PORT_DEFAULTS)
    # "counters": False means no counters/ directory (some drivers, VFs): it is no attribute file either.
    merged.update({k: v for k, v in spec.items() if not isinstance(v, dict) and k != "counters"})
    for key, value in merged.items():
        if key.startswith("_"):
            continue
        if value is None:
            continue
        _write(os.path.join(port_dir, key), value, newline)
    if spec.get("counters") is not False:
        counters = dict.fromkeys(STANDARD_COUNTERS, 0)
        counters.update(spec.get("counters") or {})
        for name, value in counters.items():
            _write(os.path.join(port_dir, "counters", name), value, newline)
    for name, value in (spec.get("hw_counters") or {}).items():
        _write(os.path.join(port_dir, "hw_counters", name), value, newline)
    for index, gid in (spec.get("gids") or {}).items():
        _write(os.path.join(port_dir, "gids", str(index)), gid, newline)
    for index, gid_type in (spec.get("gid_types") or {}).items():
        _write(os.path.join(port_dir, "gid_attrs", "types", str(index)), gid_type, newline)
    for index, ndev in (spec.get("gid_ndevs") or {}).items():
        _write(os.path.join(port_dir, "gid_attrs", "ndevs", str(index)), ndev, newline)


def build_tree(root, spec):
    """Create (or refresh) a fixture sysfs tree under root from spec; returns root."""
    if isinstance(spec, str):
        spec = load_spec(spec)
    newline = bool(spec.get("newline", False))
    os.makedirs(os.path.join(root, "class", "infiniband"), exist_ok=True)
    os.makedirs(os.path.join(root, "class", "net"), exist_ok=True)
    bridge = os.path.join("devices", "pci0000:00", "0000:00:01.0")
    for index, (name, dev) in enumerate(sorted((spec.get("devices") or {}).items())):
        dev = dev or {}
        pci = dev.get("pci") or "0000:%02x:00.0" % (0x18 + index)
        pci_rel = os.path.join(bridge, pci)
        pci_dir = os.path.join(root, pci_rel)
        pcie = {"speed": "32.0 GT/s PCIe", "width": 16, "max_speed": "32.0 GT/s PCIe", "max_width": 16}
        pcie.update(dev.get("pcie") or {})
        _write(os.path.join(pci_dir, "current_link_speed"), pcie["speed"], newline)
        _write(os.path.join(pci_dir, "current_link_width"), pcie["width"], newline)
        _write(os.path.join(pci_dir, "max_link_speed"), pcie["max_speed"], newline)
        _write(os.path.join(pci_dir, "max_link_width"), pcie["max_width"], newline)
        _write(os.path.join(pci_dir, "numa_node"), dev.get("numa_node", 0), newline)
        _write(os.path.join(pci_dir, "vendor"), "0x15b3", newline)
        ib_rel = os.path.join(pci_rel, "infiniband", name)
        ib_dir = os.path.join(root, ib_rel)
        attrs = {
            "fw_ver": dev.get("fw_ver", "28.39.1002"),
            "board_id": dev.get("board_id", "MT_0000000838"),
            "hca_type": dev.get("hca_type", "MT4129"),
            "node_guid": dev.get("node_guid", "a088:c203:0035:%04x" % (0x6F00 + index)),
            "node_desc": dev.get("node_desc", "lab %s" % name),
            "node_type": "1: CA",
        }
        for key, value in attrs.items():
            _write(os.path.join(ib_dir, key), value, newline)
        _symlink(os.path.relpath(pci_dir, ib_dir), os.path.join(ib_dir, "device"))
        for port, port_spec in sorted((dev.get("ports") or {1: {}}).items(), key=lambda kv: int(kv[0])):
            _build_port(os.path.join(ib_dir, "ports", str(port)), port_spec or {}, newline)
        class_link = os.path.join(root, "class", "infiniband", name)
        _symlink(os.path.relpath(ib_dir, os.path.dirname(class_link)), class_link)
        netdev = dev.get("netdev")
        if netdev:
            net_dir = os.path.join(pci_dir, "net", netdev)
            _write(os.path.join(net_dir, "operstate"), "up", newline)
            _write(os.path.join(net_dir, "mtu"), dev.get("mtu", 4092), newline)
            net_link = os.path.join(root, "class", "net", netdev)
            _symlink(os.path.relpath(net_dir, os.path.dirname(net_link)), net_link)
    _build_gpus(root, bridge, spec.get("gpus") or [], newline)
    return root


def _build_gpus(root, bridge, gpus, newline):
    os.makedirs(os.path.join(root, "bus", "pci", "devices"), exist_ok=True)
    for index, gpu in enumerate(gpus):
        gpu = gpu or {}
        pci = gpu.get("pci") or "0000:%02x:00.0" % (0x19 + 0x10 * index)
        pci_dir = os.path.join(root, bridge, pci)
        for name, value in (
            ("vendor", "0x10de"),
            ("device", gpu.get("device", "0x2330")),  # H100 SXM5 80GB
            ("class", gpu.get("class", "0x030200")),
            ("numa_node", gpu.get("numa_node", 0)),
        ):
            _write(os.path.join(pci_dir, name), value, newline)
        link = os.path.join(root, "bus", "pci", "devices", pci)
        _symlink(os.path.relpath(pci_dir, os.path.dirname(link)), link)


def load_spec(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if path.endswith(".json"):
        return json.loads(text)
    import yaml  # only the lab/test side needs PyYAML

    return yaml.safe_load(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--spec", required=True, help="YAML/JSON spec file")
    parser.add_argument("--root", required=True, help="directory to build the tree in (acts as /sys)")
    args = parser.parse_args(argv)
    build_tree(args.root, load_spec(args.spec))
    print("built fixture sysfs tree in %s" % args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
