# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side RoCE QoS (ConnectX): desired state from the QoS model, current state from mlnx_qos
and sysfs/configfs, the difference, and the plan that closes it (argv lists and file writes).

Knobs (NVIDIA's RoCE lossless recipe; all but the mlnx_qos ones are lost at reboot):
- ``mlnx_qos -i <netdev> --trust dscp`` and ``--pfc 0,0,0,1,0,0,0,0`` (PFC on the lossless priority only),
  ``--dscp2prio set,<dscp>,<prio>`` where the DSCP map must move a DSCP;
- ``<sysfs>/class/net/<netdev>/ecn/roce_np/enable/<prio>`` and ``ecn/roce_rp/enable/<prio>`` (ECN, notification
  and reaction point) = 1 on the lossless priority;
- ``<sysfs>/class/net/<netdev>/ecn/roce_np/cnp_dscp`` and ``cnp_802p_prio`` (CNP marking);
- ``<sysfs>/class/infiniband/<dev>/tc/<port>/traffic_class`` (MLNX_OFED global traffic class; reads back as
  ``Global tclass=106``);
- ``<configfs>/rdma_cm/<dev>/ports/<port>/default_roce_tos`` (rdma_cm's ToS; the ``rdma_cm/<dev>`` group is
  created with mkdir).
Nothing here runs anything: the module executes the plan.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.qos.mlnx import parse_mlnx_qos
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import nccl_tc, normalize_model

_TCLASS_RE = re.compile(r"^\s*(?:Global\s+tclass\s*=\s*)?(?P<val>-?\d+)\s*$", re.IGNORECASE)
_NETDEV_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")
_RDMADEV_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class RoceQosError(ValueError):
    """One sentence: what, where, how to fix."""


def validate_interface(iface):
    """Check one {netdev, rdma_device, port} entry; returns a normalized copy."""
    netdev = str(iface.get("netdev") or "")
    if not _NETDEV_RE.match(netdev):
        raise RoceQosError("interfaces: netdev %r is not a valid interface name." % (netdev,))
    rdma = iface.get("rdma_device")
    if rdma is not None and not _RDMADEV_RE.match(str(rdma)):
        raise RoceQosError("interfaces: rdma_device %r of %s is not a valid RDMA device name." % (rdma, netdev))
    try:
        port = int(iface.get("port") or 1)
    except (TypeError, ValueError):
        raise RoceQosError("interfaces: port %r of %s must be an integer." % (iface.get("port"), netdev))
    return {"netdev": netdev, "rdma_device": str(rdma) if rdma is not None else None, "port": port}


def rdma_device_of(sysfs_root, netdev):
    """The RDMA device on the same PCI function as netdev (class/net/<if>/device/infiniband/<dev>)."""
    path = os.path.join(sysfs_root, "class", "net", netdev, "device", "infiniband")
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    return names[0] if names else None


def desired_state(model, traffic_class=True, default_roce_tos=True):
    """What one RoCE port should look like under the model (None = leave alone)."""
    model = normalize_model(model)
    if model["mode"] != "roce_lossless":
        return None
    prio, cnp_prio = model["roce_priority"], model["cnp_priority"]
    ecn_on = model["ecn"] != "none"
    tos = nccl_tc(model["roce_dscp"], model["ecn"])
    return {
        "trust": "dscp",
        "pfc": [1 if p == prio else 0 for p in range(8)],
        "dscp2prio": {model["roce_dscp"]: prio, model["cnp_dscp"]: cnp_prio},
        "ecn_np": {prio: 1} if ecn_on else {},
        "ecn_rp": {prio: 1} if ecn_on else {},
        "cnp_dscp": model["cnp_dscp"],
        "cnp_802p_prio": cnp_prio,
        "traffic_class": tos if traffic_class else None,
        "default_roce_tos": tos if default_roce_tos else None,
    }


def knob_paths(iface, sysfs_root, configfs_root):
    netdev, dev, port = iface["netdev"], iface["rdma_device"], iface["port"]
    ecn = os.path.join(sysfs_root, "class", "net", netdev, "ecn")
    paths = {
        "ecn_np": os.path.join(ecn, "roce_np", "enable"),
        "ecn_rp": os.path.join(ecn, "roce_rp", "enable"),
        "cnp_dscp": os.path.join(ecn, "roce_np", "cnp_dscp"),
        "cnp_802p_prio": os.path.join(ecn, "roce_np", "cnp_802p_prio"),
        "traffic_class": None,
        "rdma_cm_dir": None,
        "default_roce_tos": None,
    }
    if dev:
        paths["traffic_class"] = os.path.join(sysfs_root, "class", "infiniband", dev, "tc", str(port), "traffic_class")
        paths["rdma_cm_dir"] = os.path.join(configfs_root, "rdma_cm", dev)
        paths["default_roce_tos"] = os.path.join(paths["rdma_cm_dir"], "ports", str(port), "default_roce_tos")
    return paths


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace").strip()
    except (IOError, OSError):
        return None


def parse_traffic_class(text):
    """tc/<port>/traffic_class: "Global tclass=106" (MLNX_OFED), a bare "106", or empty (unset) -> int|None."""
    if not text:
        return None
    first = text.splitlines()[0]
    match = _TCLASS_RE.match(first)
    if not match:
        return None
    value = int(match.group("val"))
    return value if value >= 0 else None


def _int_or_none(text):
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def read_current(iface, mlnx_qos_text, sysfs_root, configfs_root, desired):
    """Current state of the knobs desired manages.

    Returns (current, missing, parsed mlnx_qos). missing lists [{key, path}] of knobs this driver does
    not expose (e.g. the inbox mlx5 driver has no tc/<port>/traffic_class): they are reported, not guessed.
    """
    qos = parse_mlnx_qos(mlnx_qos_text)
    paths = knob_paths(iface, sysfs_root, configfs_root)
    current = {
        "trust": qos["trust"],
        "pfc": qos["pfc"],
        "dscp2prio": {d: qos["dscp2prio"].get(d) for d in desired["dscp2prio"]},
        "ecn_np": {},
        "ecn_rp": {},
        "cnp_dscp": None,
        "cnp_802p_prio": None,
        "traffic_class": None,
        "default_roce_tos": None,
    }
    missing = []
    for key in ("ecn_np", "ecn_rp"):
        for prio in desired[key]:
            path = os.path.join(paths[key], str(prio))
            value = _read(path)
            if value is None:
                missing.append({"key": "%s/%d" % (key, prio), "path": path})
            current[key][prio] = _int_or_none(value)
    for key in ("cnp_dscp", "cnp_802p_prio"):
        value = _read(paths[key])
        if value is None:
            missing.append({"key": key, "path": paths[key]})
        current[key] = _int_or_none(value)
    if desired["traffic_class"] is not None:
        path = paths["traffic_class"]
        value = _read(path) if path else None
        if value is None:
            missing.append(
                {"key": "traffic_class", "path": path or "tc/%d/traffic_class (no RDMA device)" % iface["port"]}
            )
        else:
            current["traffic_class"] = parse_traffic_class(value)
    if desired["default_roce_tos"] is not None:
        path = paths["default_roce_tos"]
        if path is None or not os.path.isdir(os.path.join(configfs_root, "rdma_cm")):
            # configfs is not mounted or rdma_cm is not loaded: the group cannot be created.
            missing.append({"key": "default_roce_tos", "path": path or os.path.join(configfs_root, "rdma_cm")})
        else:
            current["default_roce_tos"] = _int_or_none(_read(path))
    return current, missing, qos


SCALAR_KNOBS = ("cnp_dscp", "cnp_802p_prio", "traffic_class", "default_roce_tos")


def _ecn_changes(desired, current, skip):
    changes = []
    for key in ("ecn_np", "ecn_rp"):
        for prio, value in sorted(desired[key].items()):
            if ("%s/%d" % (key, prio)) not in skip and current[key].get(prio) != value:
                changes.append({"key": key, "prio": prio, "before": current[key].get(prio), "after": value})
    return changes


def diff(desired, current, skip=()):
    """Differences as [{key, before, after}], in apply order. Keys in skip (missing knobs) are left out."""
    changes = []
    if desired["trust"] != current["trust"]:
        changes.append({"key": "trust", "before": current["trust"], "after": desired["trust"]})
    if list(desired["pfc"]) != list(current["pfc"] or []):
        changes.append({"key": "pfc", "before": current["pfc"], "after": desired["pfc"]})
    for dscp, prio in sorted(desired["dscp2prio"].items()):
        if current["dscp2prio"].get(dscp) != prio:
            changes.append({"key": "dscp2prio", "dscp": dscp, "before": current["dscp2prio"].get(dscp), "after": prio})
    changes += _ecn_changes(desired, current, skip)
    for key in SCALAR_KNOBS:
        if desired[key] is not None and key not in skip and current[key] != desired[key]:
            changes.append({"key": key, "before": current[key], "after": desired[key]})
    return changes


def _mlnx_qos_actions(netdev, by_key, executable):
    """trust, then PFC, then the DSCP map: mlnx_qos refuses --trust together with --dscp2prio."""
    actions = []
    if "trust" in by_key:
        actions.append({"argv": [executable, "-i", netdev, "--trust", by_key["trust"][0]["after"]]})
    if "pfc" in by_key:
        vector = ",".join(str(x) for x in by_key["pfc"][0]["after"])
        actions.append({"argv": [executable, "-i", netdev, "--pfc", vector]})
    if "dscp2prio" in by_key:
        argv = [executable, "-i", netdev]
        for change in by_key["dscp2prio"]:
            argv += ["--dscp2prio", "set,%d,%d" % (change["dscp"], change["after"])]
        actions.append({"argv": argv})
    return actions


def _file_actions(paths, by_key):
    """The sysfs and configfs writes, in apply order (rdma_cm's group is made before its ToS is written)."""
    actions = []
    for key in ("ecn_np", "ecn_rp"):
        for change in by_key.get(key, []):
            actions.append({"write": os.path.join(paths[key], str(change["prio"])), "value": str(change["after"])})
    for key in ("cnp_dscp", "cnp_802p_prio", "traffic_class"):
        for change in by_key.get(key, []):
            actions.append({"write": paths[key], "value": str(change["after"])})
    for change in by_key.get("default_roce_tos", []):
        actions.append({"mkdir": paths["rdma_cm_dir"]})
        actions.append({"write": paths["default_roce_tos"], "value": str(change["after"])})
    return actions


def plan(iface, changes, executable, sysfs_root, configfs_root):
    """Actions that apply changes: {"argv": [...]} | {"mkdir": path} | {"write": path, "value": str}."""
    by_key = {}
    for change in changes:
        by_key.setdefault(change["key"], []).append(change)
    paths = knob_paths(iface, sysfs_root, configfs_root)
    return _mlnx_qos_actions(iface["netdev"], by_key, executable) + _file_actions(paths, by_key)


def apply_changes(current, changes):
    """The state current would have once changes are applied (what check and diff mode show as 'after')."""
    state = dict(current)
    for key in ("dscp2prio", "ecn_np", "ecn_rp"):
        state[key] = dict(current.get(key) or {})
    for change in changes:
        if "prio" in change:
            state[change["key"]][change["prio"]] = change["after"]
        elif "dscp" in change:
            state["dscp2prio"][change["dscp"]] = change["after"]
        else:
            state[change["key"]] = change["after"]
    return state


def full_changes(desired, skip=()):
    """Every desired knob as a change from 'unknown': what a boot-time reapply must do."""
    empty = {
        "trust": None,
        "pfc": None,
        "dscp2prio": {},
        "ecn_np": {},
        "ecn_rp": {},
        "cnp_dscp": None,
        "cnp_802p_prio": None,
        "traffic_class": None,
        "default_roce_tos": None,
    }
    return diff(desired, empty, skip)


def state_text(iface, state):
    """A stable, line-per-knob rendering for diff mode (before/after)."""
    if state is None:
        return ""
    name = iface["netdev"]
    dev = iface["rdma_device"] or "?"
    port = iface["port"]
    lines = [
        "%s trust: %s" % (name, state.get("trust")),
        "%s pfc: %s" % (name, ",".join(str(x) for x in state["pfc"]) if state.get("pfc") is not None else None),
    ]
    for dscp in sorted(state.get("dscp2prio") or {}):
        lines.append("%s dscp2prio %d: %s" % (name, dscp, state["dscp2prio"][dscp]))
    for key in ("ecn_np", "ecn_rp"):
        for prio in sorted(state.get(key) or {}):
            lines.append("%s ecn/%s/enable/%d: %s" % (name, key.replace("ecn_", "roce_"), prio, state[key][prio]))
    lines.append("%s ecn/roce_np/cnp_dscp: %s" % (name, state.get("cnp_dscp")))
    lines.append("%s ecn/roce_np/cnp_802p_prio: %s" % (name, state.get("cnp_802p_prio")))
    if "traffic_class" in state:
        lines.append("%s tc/%d/traffic_class: %s" % (dev, port, state.get("traffic_class")))
    if "default_roce_tos" in state:
        lines.append("%s rdma_cm ports/%d/default_roce_tos: %s" % (dev, port, state.get("default_roce_tos")))
    return "\n".join(lines) + "\n"


def _quote(text):
    text = str(text)
    if re.match(r"^[A-Za-z0-9_./,:=@%+-]+$", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def boot_script(actions_by_iface, header="ibtune.fabric fabric_qos"):
    """A POSIX sh script that reapplies the actions at boot; every step runs, the exit code says if one failed."""
    lines = [
        "#!/bin/sh",
        "# %s: RoCE QoS reapplied at boot (sysfs/configfs settings do not survive a reboot)." % header,
        "# Generated by the ibtune.fabric.roce_qos module from the QoS model; do not edit.",
        "rc=0",
        'step() { "$@" || { echo "ibtune-roce-qos: failed: $*" >&2; rc=1; }; }',
        'put() { printf \'%s\\n\' "$2" > "$1" || { echo "ibtune-roce-qos: cannot write $2 to $1" >&2; rc=1; }; }',
    ]
    for netdev, actions in actions_by_iface:
        lines.append("# %s" % netdev)
        for action in actions:
            if "argv" in action:
                lines.append("step " + " ".join(_quote(a) for a in action["argv"]))
            elif "mkdir" in action:
                lines.append("step mkdir -p " + _quote(action["mkdir"]))
            else:
                lines.append("put %s %s" % (_quote(action["write"]), _quote(action["value"])))
    lines.append("exit $rc")
    return "\n".join(lines) + "\n"
