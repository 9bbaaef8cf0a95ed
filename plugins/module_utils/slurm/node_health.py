# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check that slurmd runs (HealthCheckProgram, prolog): fast, passive, no Ansible.

The node_health role installs this file with the collection's sysfs, counters, nccl_env, nccl_schema and slurm
module_utils as a package next to the executable (one source of truth), and writes the JSON config it reads.

Checks, in this order, stopping at nothing (all are read, the first failure is the one printed):
  1. every expected RDMA port ACTIVE/LinkUp at the expected rate and width (lanes);
  2. the PCIe link of every expected device not trained below its maximum;
  3. no physical-layer error counter risen since the last run (snapshot kept in the state directory);
  4. the GPUDirect RDMA kernel module loaded (<sysfs>/module/<name>) when one is configured;
  5. nccl.conf present and clean under the collection's NCCL lint, when one is configured.
Only sysfs and one small file are read; nothing here can take long (the check budget is 10 s).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess
import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters as _counters
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as _nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import health as _phy_health
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as _slurm
from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs as _sysfs

DEFAULT_CONFIG_PATH = "/etc/ibtune-node-health.json"
DEFAULTS = {
    "sysfs_root": "/sys",
    "ports": [],
    "rate_gbps": 0,
    "width": 0,
    "pcie": True,
    "counters": True,
    "counter_thresholds": {},
    "state_dir": "/var/lib/ibtune-node-health",
    "gpudirect_module": "",
    "nccl_conf": "",
    "nccl_version": "",
    "link_layer": "",
    "scontrol": "/usr/bin/scontrol",
    "node_name": "",
    "drain": False,
    "phy": {},  # the PHY part (phy/health.py): effective-BER sentinel and module alarms, off unless enabled
}
SCONTROL_TIMEOUT_S = 4


class ConfigError(ValueError):
    pass


def normalise_config(raw):
    """Defaults merged in, ports as [{device, port, rate_gbps, width}]; ConfigError names the bad key."""
    if not isinstance(raw, dict):
        raise ConfigError("the config must be a JSON object")
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ConfigError("unknown config keys %s" % ", ".join(unknown))
    config = dict(DEFAULTS)
    config.update(raw)
    ports = []
    for item in config["ports"] or []:
        if isinstance(item, str) and ":" in item:  # "mlx5_0:1", as ib_facts' active_ports lists them
            device, _sep, port = item.rpartition(":")
            item = {"device": device, "port": port}
        if not isinstance(item, dict) or not item.get("device"):
            raise ConfigError("ports entry %r needs a device (and a port, default 1)" % (item,))
        try:
            ports.append(
                {
                    "device": str(item["device"]),
                    "port": int(item.get("port", 1)),
                    "rate_gbps": float(item.get("rate_gbps", config["rate_gbps"]) or 0),
                    "width": int(item.get("width", config["width"]) or 0),
                }
            )
        except (TypeError, ValueError):
            raise ConfigError("ports entry %r: port, rate_gbps and width must be numbers" % (item,))
    if not ports:
        raise ConfigError("no ports to check: list the node's RDMA ports under ports")
    config["ports"] = ports
    try:
        config["phy"] = _phy_health.config(config["phy"])
    except ValueError as exc:
        raise ConfigError(str(exc))
    return config


def load_config(path):
    try:
        with open(path) as handle:
            raw = json.load(handle)
    except (IOError, OSError) as exc:
        raise ConfigError("cannot read %s (%s)" % (path, exc.strerror or exc))
    except ValueError as exc:
        raise ConfigError("%s is not JSON (%s)" % (path, exc))
    return normalise_config(raw)


# --- the checks: each returns a list of one-line problems ------------------------------------------


def check_ports(sysfs_root, ports):
    problems = []
    for spec in ports:
        label = "%s port %d" % (spec["device"], spec["port"])
        if not os.path.isdir(_sysfs.port_dir(sysfs_root, spec["device"], spec["port"])):
            problems.append("%s is missing (no such RDMA port)" % label)
            continue
        port = _sysfs.read_port(sysfs_root, spec["device"], spec["port"])
        if port["state"] != "ACTIVE" or port["phys_state"] != "LinkUp":
            problems.append("%s is %s/%s, expected ACTIVE/LinkUp" % (label, port["state"], port["phys_state"]))
            continue
        if spec["rate_gbps"] and (port["rate_gbps"] or 0) < spec["rate_gbps"]:
            problems.append("%s rate %s Gb/s < %s" % (label, _num(port["rate_gbps"]), _num(spec["rate_gbps"])))
        elif spec["width"] and port["lanes"] is not None and port["lanes"] < spec["width"]:
            problems.append("%s width %dX < %dX" % (label, port["lanes"], spec["width"]))
    return problems


def _num(value):
    if value is None:
        return "unknown"
    return ("%d" % value) if float(value) == int(value) else ("%s" % value)


def check_pcie(sysfs_root, devices):
    problems = []
    for device in devices:
        pci_dir = os.path.join(_sysfs.infiniband_class_dir(sysfs_root), device, "device")
        if not os.path.isdir(pci_dir):
            continue  # reported by check_ports
        link = _sysfs.read_pcie(pci_dir)
        if link["degraded"]:
            problems.append(
                "%s PCIe link degraded: %s GT/s x%s of %s GT/s x%s"
                % (device, _num(link["speed_gts"]), link["width"], _num(link["max_speed_gts"]), link["max_width"])
            )
    return problems


def check_counters(sysfs_root, devices, previous, thresholds=None):
    """(problems, snapshot): physical-layer counters risen since ``previous`` (None on the first run)."""
    current = _counters.snapshot(sysfs_root, devices=devices)
    if not previous:
        return [], current
    found = _counters.violations(previous, current, thresholds)
    problems = [
        "%s port %s %s rose by %d (%d -> %d)"
        % (v["device"], v["port"], v["counter"], v["delta"], v["before"], v["after"])
        for v in found
    ]
    return problems, current


def check_gpudirect(sysfs_root, name):
    if name and not os.path.isdir(os.path.join(sysfs_root, "module", name)):
        return ["GPUDirect RDMA module %s is not loaded" % name]
    return []


def check_nccl_conf(path, nccl_version=None, link_layer=None):
    if not path:
        return []
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError):
        return ["%s is missing" % path]
    _env, errors, _warnings = _nccl_env.lint_conf(
        text, nccl_version=nccl_version or None, link_layer=link_layer or None
    )
    return ["%s: %s" % (path, issue["message"]) for issue in errors]


def _state_file(config):
    return os.path.join(config["state_dir"], "counters.json")


def _read_state(path):
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_state(path, data):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "w") as handle:
        json.dump(data, handle, sort_keys=True)
    os.rename(tmp, path)


def run_checks(config):
    """Every problem of the node, in check order; [] when healthy. Updates the counter snapshot."""
    root = config["sysfs_root"]
    devices = sorted(set(p["device"] for p in config["ports"]))
    problems = check_ports(root, config["ports"])
    if config["pcie"]:
        problems += check_pcie(root, devices)
    if config["counters"]:
        state = _state_file(config)
        found, snap = check_counters(root, devices, _read_state(state), config["counter_thresholds"])
        problems += found
        _write_state(state, snap)
    problems += check_gpudirect(root, config["gpudirect_module"])
    problems += check_nccl_conf(config["nccl_conf"], config["nccl_version"], config["link_layer"])
    problems += _phy_health.node_problems(config["phy"], config["ports"])
    return problems


# --- draining the own node ---------------------------------------------------------------------


def node_name(config):
    return config["node_name"] or socket.gethostname().split(".")[0]


def drain_own_node(config, problem, today, run=None):
    """Drain this node with our reason unless Slurm already holds it; returns a note for the output line.

    A node already drained, down or reserved is left alone whatever its reason (ours stays; a foreign one
    is never overwritten), as slurm_remediate does.
    """
    run = run or _run
    name = node_name(config)
    rc, out = run([config["scontrol"], "show", "node", name, "--oneliner"])
    if rc != 0:
        return "cannot read node %s from slurmctld (%s)" % (name, out.strip() or "rc=%d" % rc)
    nodes = [n for n in _slurm.parse_show_node(out) if n["name"] == name]
    if nodes and _slurm.is_held(nodes[0]):
        return "node %s already %s (%s), left as it is" % (name, nodes[0]["state_text"], nodes[0]["reason"] or "")
    reason = _slurm.drain_reason("node-health: " + problem, today)
    rc, out = run(_slurm.drain_argv(name, reason, config["scontrol"]))
    if rc != 0:
        return "drain of %s failed (%s)" % (name, out.strip() or "rc=%d" % rc)
    return "drained %s" % name


def _run(argv):
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, str(exc)
    try:
        out = proc.communicate(timeout=SCONTROL_TIMEOUT_S)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return 124, "%s timed out after %d s" % (argv[0], SCONTROL_TIMEOUT_S)
    return proc.returncode, out.decode("utf-8", "replace")


USAGE = "usage: ibtune-node-health [--config PATH] [--drain | --no-drain] [--all]"


def main(argv=None, run=None, stdout=None):
    """Exit status 0 and 'OK' when healthy; 1 and the first problem when not; 2 on a bad config or usage."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = stdout or sys.stdout
    path, drain, show_all = DEFAULT_CONFIG_PATH, None, False
    while argv:
        arg = argv.pop(0)
        if arg == "--drain":
            drain = True
        elif arg == "--no-drain":
            drain = False
        elif arg == "--all":
            show_all = True
        elif arg == "--config" and argv:
            path = argv.pop(0)
        else:
            stdout.write(USAGE + "\n")
            return 2
    try:
        config = load_config(path)
    except ConfigError as exc:
        stdout.write("ibtune-node-health: %s: fix the config (the node_health role writes it)\n" % exc)
        return 2
    if drain is None:  # HealthCheckProgram takes no arguments: the config can ask for the drain
        drain = bool(config["drain"])
    problems = run_checks(config)
    if not problems:
        stdout.write("OK\n")
        return 0
    line = problems[0]
    if len(problems) > 1:
        line += " (+%d more)" % (len(problems) - 1)
    if drain:
        line += "; " + drain_own_node(config, problems[0], time.strftime("%Y-%m-%d", time.gmtime()), run)
    stdout.write(line + "\n")
    if show_all:
        for item in problems[1:]:
            stdout.write(item + "\n")
    return 1
