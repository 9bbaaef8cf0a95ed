# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the roce_qos and qos_check modules do, as functions over their parameters (the modules are glue), and
the fabric_qos role's choice of RoCE ports.

run_qos_check(params, host): the NCCL variables (given, or read from an nccl.conf as NCCL reads it), the host's
state (given, or read with mlnx_qos) and the switch's, checked against the model (model.check_layers).

run_roce_qos(params, host, check_mode, diff_mode): for every interface, read the current state (mlnx_qos,
sysfs, configfs), plan what closes the gap to the model's desired state (qos/roce.py), execute the plan unless
in check mode, read back, and return the result. ``host`` runs commands and finds executables (the module
passes AnsibleModule.run_command and get_bin_path). A failure after some actions ran still says changed=true
and lists the applied actions (a partial apply changed the host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError, read_text
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.env import parse_conf
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.mlnx import MlnxQosParseError, parse_mlnx_qos
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import (
    QosModelError,
    check_layers,
    normalize_model,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.roce import (
    RoceQosError,
    apply_changes,
    boot_script,
    desired_state,
    diff,
    full_changes,
    plan,
    rdma_device_of,
    read_current,
    state_text,
    validate_interface,
)


def roce_interfaces(explicit, facts=None):
    """The RoCE ports fabric_qos sets: ``explicit`` (fabric_qos_roce_interfaces) when given, else every ACTIVE,
    LinkUp Ethernet port of ib_facts' devices that has a netdev, as {netdev, rdma_device, port}."""
    if explicit:
        return list(explicit)
    found = []
    devices = (facts or {}).get("devices") or {}
    for name in sorted(devices, key=lambda text: str(text).lower()):
        device = devices[name]
        for port in sorted(device.get("ports") or {}, key=lambda text: str(text).lower()):
            info = device["ports"][port]
            up = info.get("state") == "ACTIVE" and info.get("phys_state") == "LinkUp"
            if info.get("link_layer") == "Ethernet" and up and device.get("netdevs"):
                found.append({"netdev": device["netdevs"][0], "rdma_device": name, "port": int(port)})
    return found


def valid_interfaces(value):
    """fabric_qos_roce_interfaces' shape: a list whose every entry is a mapping with a netdev."""
    return isinstance(value, (list, tuple)) and all(isinstance(item, dict) and "netdev" in item for item in value)


def jsonable(value):
    """Tuples to lists and keys to strings, as the result is returned."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


class _Run(object):
    """One roce_qos run: the host it acts on and the actions it has applied so far."""

    def __init__(self, params, host, check_mode):
        self.params = params
        self.host = host
        self.check_mode = check_mode
        self.applied = []
        self.executable = None

    def fail(self, msg, **extra):
        """ModuleError; after a partial apply it says changed=true and which actions ran."""
        if self.applied:
            extra.update(changed=True, applied_actions=jsonable(self.applied))
        raise ModuleError(msg, **extra)

    def find_executable(self):
        executable = self.params["executable"]
        if os.sep not in executable:
            found = self.host.get_bin_path(executable)
            if not found:
                self.fail(
                    "%s is not installed on this host: install mlnx-tools (MLNX_OFED/DOCA) or set executable."
                    % executable
                )
            return found
        if not os.access(executable, os.X_OK):
            self.fail("%s is not an executable file: install mlnx-tools or fix executable." % executable)
        return executable

    def ports(self):
        """The interfaces, checked, each with its RDMA device."""
        sysfs_root = self.params["sysfs_root"]
        out = []
        for raw in self.params["interfaces"]:
            try:
                iface = validate_interface(raw)
            except RoceQosError as exc:
                self.fail(str(exc))
            if not os.path.isdir(os.path.join(sysfs_root, "class", "net", iface["netdev"])):
                self.fail(
                    "interface %s does not exist under %s/class/net: fix interfaces or sysfs_root."
                    % (iface["netdev"], sysfs_root)
                )
            if iface["rdma_device"] is None:
                iface["rdma_device"] = rdma_device_of(sysfs_root, iface["netdev"])
            out.append(iface)
        return out

    def read_port(self, iface, desired):
        rc, out, err = self.host.run_command([self.executable, "-i", iface["netdev"]])
        if rc != 0:
            self.fail(
                "%s -i %s failed (rc %d): %s; check that the interface is a ConnectX port and mlnx_qos works."
                % (self.executable, iface["netdev"], rc, (err or out).strip()[:300])
            )
        try:
            return read_current(iface, out, self.params["sysfs_root"], self.params["configfs_root"], desired)
        except MlnxQosParseError as exc:
            self.fail("cannot read %s -i %s: %s" % (self.executable, iface["netdev"], exc))

    def run_actions(self, actions):
        """Run the actions in order; each one that succeeded is remembered (for a failure's changed)."""
        for action in actions:
            if "argv" in action:
                self._command(action)
            elif "mkdir" in action:
                self._mkdir(action["mkdir"])
            else:
                self._write(action["write"], action["value"])
            self.applied.append(action)

    def _command(self, action):
        rc, out, err = self.host.run_command(action["argv"])
        if rc != 0:
            self.fail(
                "%s failed (rc %d): %s" % (" ".join(action["argv"]), rc, (err or out).strip()[:300]),
                failed_action=action,
            )

    def _mkdir(self, path):
        if os.path.isdir(path):
            return
        try:
            os.mkdir(path)
        except OSError as exc:
            self.fail("cannot create the configfs group %s: %s; is rdma_cm loaded and configfs mounted?" % (path, exc))

    def _write(self, path, value):
        try:
            with open(path, "w") as handle:
                handle.write(value + "\n")
        except (IOError, OSError) as exc:
            self.fail(
                "cannot write %s to %s: %s; run as root on a host whose driver exposes this knob." % (value, path, exc)
            )

    def port_missing(self, iface, missing, result):
        """Record the knobs a port lacks; fail when fail_on_missing."""
        for item in missing:
            result["missing"].append(dict(item, netdev=iface["netdev"]))
        if missing and self.params["fail_on_missing"]:
            self.fail(
                "%s lacks %s: this driver does not expose the knob; use MLNX_OFED/DOCA or set "
                "fail_on_missing=false." % (iface["netdev"], ", ".join(m["path"] for m in missing)),
                missing=result["missing"],
            )

    def apply_port(self, iface, desired, current, skip, actions, result):
        """Execute a port's plan and read it back; the state it is left in."""
        self.run_actions(actions)
        current, _missing, _qos = self.read_port(iface, desired)
        left = diff(desired, current, skip)
        if left:
            differences = "; ".join("%s is %s, wanted %s" % (c["key"], c["before"], c["after"]) for c in left)
            self.fail(
                "after applying, %s still differs: %s; the driver refused it, or firmware-controlled "
                "DCBX let the switch override it (see dmesg; mlnx_qos --dcbx os, or fix the switch)."
                % (iface["netdev"], differences),
                changes=result["changes"],
            )
        return current


def _port(run, iface, desired, result, texts, boot):
    """Read, diff, plan (and unless check mode apply) one port, filling the result."""
    sysfs_root, configfs_root = run.params["sysfs_root"], run.params["configfs_root"]
    current, missing, _qos = run.read_port(iface, desired)
    skip = {m["key"] for m in missing}
    run.port_missing(iface, missing, result)
    changes = diff(desired, current, skip)
    actions = plan(iface, changes, run.executable, sysfs_root, configfs_root)
    texts[0].append(state_text(iface, current))
    boot.append((iface["netdev"], plan(iface, full_changes(desired, skip), run.executable, sysfs_root, configfs_root)))
    result["changes"].extend(dict(change, netdev=iface["netdev"]) for change in changes)
    result["actions"].extend(actions)
    if actions and not run.check_mode:
        current = run.apply_port(iface, desired, current, skip, actions, result)
        texts[1].append(state_text(iface, current))
    else:
        texts[1].append(state_text(iface, apply_changes(current, changes)))
    result["desired"][iface["netdev"]] = jsonable(desired)
    result["current"][iface["netdev"]] = jsonable(current)
    # what the cross-layer check judges: the state the host is left in; in check mode, the one the run would set
    result["after"][iface["netdev"]] = result["desired" if run.check_mode else "current"][iface["netdev"]]


def _summary(n_ports, result, check_mode):
    return "%d port%s: %d knob%s %s%s" % (
        n_ports,
        "" if n_ports == 1 else "s",
        len(result["changes"]),
        "" if len(result["changes"]) == 1 else "s",
        "would change" if check_mode else "changed",
        ", %d missing" % len(result["missing"]) if result["missing"] else "",
    )


def run_roce_qos(params, host, check_mode=False, diff_mode=False):
    """The roce_qos result (see the module's RETURN)."""
    run = _Run(params, host, check_mode)
    try:
        model = normalize_model(params["qos"])
    except QosModelError as exc:
        run.fail(str(exc))
    result = dict(changed=False, changes=[], actions=[], desired={}, current={}, after={}, missing=[], boot_script="")
    if model["mode"] != "roce_lossless":
        result["msg"] = "QoS mode is %s: nothing to do on RoCE host ports" % model["mode"]
        return result
    run.executable = run.find_executable()
    desired = desired_state(model, params["traffic_class"], params["default_roce_tos"])
    texts, boot = ([], []), []
    ports = run.ports()
    for iface in ports:
        _port(run, iface, desired, result, texts, boot)
    result["changed"] = bool(result["changes"])
    result["boot_script"] = boot_script(boot)
    result["changes"] = jsonable(result["changes"])
    result["missing"] = jsonable(result["missing"])
    if diff_mode:
        result["diff"] = {"before": "".join(texts[0]), "after": "".join(texts[1])}
    result["msg"] = _summary(len(ports), result, check_mode)
    return result


def _read_nccl_conf(path):
    """(nccl_env, warnings) of an nccl.conf, read as NCCL reads it (nccl/env.py parse_conf)."""
    text = read_text(path, "render it first (role nccl_env) or drop nccl_conf.", "; run as a user who can read it.")
    nccl_env, problems = parse_conf(text)
    return nccl_env, ["%s %s" % (path, p["message"]) for p in problems]


def _read_host_state(host, executable, netdev):
    """trust, pfc and dscp2prio of a port, as mlnx_qos prints them."""
    if "/" not in executable:
        executable = host.get_bin_path(executable) or executable
    rc, out, err = host.run_command([executable, "-i", netdev])
    if rc != 0:
        raise ModuleError(
            "%s -i %s failed (rc %d): %s; pass host_state instead or install mlnx-tools."
            % (executable, netdev, rc, (err or out).strip()[:300])
        )
    try:
        parsed = parse_mlnx_qos(out)
    except MlnxQosParseError as exc:
        raise ModuleError("cannot read %s -i %s: %s" % (executable, netdev, exc))
    return {
        "trust": parsed["trust"],
        "pfc": parsed["pfc"],
        "dscp2prio": {str(k): v for k, v in parsed["dscp2prio"].items()},
    }


def _check_summary(report, qos_warnings):
    errors = report["errors"]
    if errors:
        return errors[0] if len(errors) == 1 else ("%d QoS errors; first: %s" % (len(errors), errors[0]))
    return "QoS layers agree (%s)%s" % (report["mode"], ", %d warning(s)" % len(qos_warnings) if qos_warnings else "")


def run_qos_check(params, host):
    """The qos_check result (see the module's RETURN); ``failed`` when the layers disagree and fail_on_error."""
    host_state = params["host_state"]
    nccl_env, conf_warnings = params["nccl_env"], []
    if params["nccl_conf"]:
        if params["nccl_env"]:
            raise ModuleError("qos_check got both nccl_env and nccl_conf: pass one of them.")
        nccl_env, conf_warnings = _read_nccl_conf(params["nccl_conf"])
    if params["netdev"]:
        host_state = _read_host_state(host, params["executable"], params["netdev"])
    try:
        report = check_layers(params["qos"], nccl_env, host_state, params["switch_state"])
    except QosModelError as exc:
        raise ModuleError(str(exc))
    qos_warnings = conf_warnings + report.pop("warnings")
    result = dict(changed=False, qos_warnings=qos_warnings, nccl_env=nccl_env, **report)
    if host_state is not None:
        result["host_state"] = host_state
    result["msg"] = _check_summary(report, qos_warnings)
    result["failed"] = bool(report["errors"] and params["fail_on_error"])
    # Ansible shows a result's "warnings" (module.warn did so before)
    result["warnings"] = list(qos_warnings)
    return result
