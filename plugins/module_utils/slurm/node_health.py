# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check that slurmd runs (HealthCheckProgram, prolog): fast, passive, no Ansible.

The node_health role installs this file with the collection's sysfs, counters, nccl_env, nccl_schema and slurm
module_utils as a package next to the executable (one source of truth), and writes the JSON config it reads.

Checks, in this order, stopping at nothing (all are read, the first failure is the one printed):
  1. every expected RDMA port ACTIVE/LinkUp at the expected rate and width (lanes);
  2. the PCIe link of every expected device not trained below its maximum;
  3. no physical-layer error counter risen since the last run (snapshot kept in the state directory), and none
     of a gated class stuck at its maximum (it could not show a rise);
  4. the GPUDirect RDMA kernel module loaded (<sysfs>/module/<name>) when one is configured;
  5. nccl.conf present and clean under the collection's NCCL lint, when one is configured.
Only sysfs and small files are read; nothing here can take long (the check budget is 10 s).

Draining is guarded, because a fleet-wide quirk must not drain every node in one HealthCheckInterval: a
transient state (the RDMA class missing during a driver reload, an unreadable rate file, a port still training)
drains only after `consecutive` checks in a row or `grace_s`; nothing is checked while rdma_stack's maintenance
flag is up; and before draining itself the check asks slurmctld how many nodes already carry ibtune reasons and
refuses past the fleet limit, saying so in its one line. A corrupt state file is rebuilt with a warning. A node
it drained is resumed by the first healthy check after (only while Slurm still holds it with the health check's
own reason: each source resumes only what it drained; a validation never resumes it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess
import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
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
    # the fleet guard: never drain this node when the nodes already held with ibtune reasons reach the limit
    "fleet_max_drain_fraction": 0.1,
    "fleet_max_drain": -1,
    # after its drain, a node waits this long before it reads the fleet again, so that every node that checked at
    # the same moment has drained by then and they all rank the same set: without it two nodes racing each saw
    # only themselves and both stayed drained past the limit (molecule slurm, 3 nodes at 0.5)
    "fleet_settle_s": 2.0,
    # a transient state (RDMA class missing, an unreadable rate, a port INIT/ARMED) drains only when it is seen this
    # many checks in a row, or has lasted grace_s
    "consecutive": 3,
    "grace_s": 300,
    # rdma_stack writes this file while it reloads the driver stack: no check, no drain meanwhile (a flag older
    # than maintenance_max_age_s is stale and ignored)
    "maintenance_flag": "/run/ibtune-maintenance",
    "maintenance_max_age_s": 7200,
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


class Problem(str):
    """One problem's sentence; ``transient`` when a driver reload or a port still training can show it for a while
    (then it drains only when it lasts)."""

    transient = False


def transient(text):
    problem = Problem(text)
    problem.transient = True
    return problem


TRAINING_STATES = ("INIT", "ARMED")


def _port_problem(label, spec, port):
    if port["state"] in TRAINING_STATES or port["state"] is None:
        return transient("%s is %s/%s, expected ACTIVE/LinkUp" % (label, port["state"], port["phys_state"]))
    if port["state"] != "ACTIVE" or port["phys_state"] != "LinkUp":
        return Problem("%s is %s/%s, expected ACTIVE/LinkUp" % (label, port["state"], port["phys_state"]))
    if spec["rate_gbps"] and port["rate_gbps"] is None:
        return transient("%s rate is unreadable (an empty or missing rate file)" % label)
    if spec["rate_gbps"] and port["rate_gbps"] < spec["rate_gbps"]:
        return Problem("%s rate %s Gb/s < %s" % (label, _num(port["rate_gbps"]), _num(spec["rate_gbps"])))
    if spec["width"] and port["lanes"] is not None and port["lanes"] < spec["width"]:
        return Problem("%s width %dX < %dX" % (label, port["lanes"], spec["width"]))
    return None


def check_ports(sysfs_root, ports):
    problems = []
    if not os.path.isdir(_sysfs.infiniband_class_dir(sysfs_root)):
        return [
            transient(
                "no RDMA device at all (%s is missing: the driver is not loaded)"
                % _sysfs.infiniband_class_dir(sysfs_root)
            )
        ]
    for spec in ports:
        label = "%s port %d" % (spec["device"], spec["port"])
        if not os.path.isdir(_sysfs.port_dir(sysfs_root, spec["device"], spec["port"])):
            problems.append(transient("%s is missing (no such RDMA port)" % label))
            continue
        problem = _port_problem(label, spec, _sysfs.read_port(sysfs_root, spec["device"], spec["port"]))
        if problem:
            problems.append(problem)
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
    """(problems, snapshot): physical-layer counters risen since ``previous`` (None on the first run), and counters
    of a gated class stuck at their maximum (they could not show a rise: the port cannot pass)."""
    current = _counters.snapshot(sysfs_root, devices=devices)
    problems = [
        Problem("%s port %s %s saturated at %d (%d bits): reset it (perfquery -R) or read the extended counters"
                % (s["device"], s["port"], s["counter"], s["value"], s["width"]))
        for s in _counters.saturated(current, thresholds) if s["gated"]
    ]  # fmt: skip
    if previous:
        problems += [
            Problem("%s port %s %s rose by %d (%d -> %d)"
                    % (v["device"], v["port"], v["counter"], v["delta"], v["before"], v["after"]))
            for v in _counters.violations(previous, current, thresholds)
        ]  # fmt: skip
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


def _state_file(config, name="counters.json"):
    return os.path.join(config["state_dir"], name)


def _valid_snapshot(data):
    return isinstance(data, dict) and all(
        isinstance(v, dict) and all(isinstance(n, int) and not isinstance(n, bool) for n in v.values())
        for v in data.values()
    )


def _valid_streaks(data):
    return isinstance(data, dict) and all(
        isinstance(v, dict) and isinstance(v.get("count"), int) and isinstance(v.get("since"), (int, float))
        for v in data.values()
    )


def _read_state(path, valid=_valid_snapshot, warnings=None):
    """The state file's content, None when there is none; a corrupt one is read as none and named in ``warnings``
    (it is rebuilt by the next write), never a traceback."""
    if not os.path.exists(path):
        return None
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        data, why = None, str(exc)
    else:
        why = "not the structure the check writes"
    if data is not None and valid(data):
        return data
    if warnings is not None:
        warnings.append("state file %s was corrupt (%s): rebuilt" % (path, why))
    return None


def _write_state(path, data):
    """Atomically, in a state directory made 0700 when missing; the file's mode is what open() would give."""
    _files.write_json(path, data, mode=None, dir_mode=0o700, sort_keys=True)


def run_checks(config, warnings=None):
    """Every problem of the node, in check order; [] when healthy. Updates the counter snapshot."""
    root = config["sysfs_root"]
    devices = sorted(set(p["device"] for p in config["ports"]))
    problems = check_ports(root, config["ports"])
    if config["pcie"]:
        problems += check_pcie(root, devices)
    if config["counters"]:
        state = _state_file(config)
        found, snap = check_counters(root, devices, _read_state(state, warnings=warnings), config["counter_thresholds"])
        problems += found
        _write_state(state, snap)
    problems += check_gpudirect(root, config["gpudirect_module"])
    problems += check_nccl_conf(config["nccl_conf"], config["nccl_version"], config["link_layer"])
    problems += _phy_health.node_problems(config["phy"], config["ports"])
    return problems


def update_streaks(config, problems, now, warnings=None):
    """{problem: {count, since}} of the transient problems seen in a row (kept in the state directory); a problem
    no longer seen is forgotten."""
    path = _state_file(config, "streaks.json")
    old = _read_state(path, _valid_streaks, warnings) or {}
    streaks = {}
    for problem in problems:
        if getattr(problem, "transient", False):
            before = old.get(str(problem))
            streaks[str(problem)] = {"count": before["count"] + 1, "since": before["since"]} if before else {
                "count": 1, "since": now}  # fmt: skip
    _write_state(path, streaks)
    return streaks


def lasting(problem, streaks, config, now):
    """Whether a problem may drain the node: a lasting one always; a transient one after `consecutive` checks in a
    row or `grace_s` seconds."""
    if not getattr(problem, "transient", False):
        return True
    streak = streaks.get(str(problem)) or {"count": 1, "since": now}
    return streak["count"] >= config["consecutive"] or now - streak["since"] >= config["grace_s"]


def maintenance(config, now):
    """The maintenance flag's sentence while rdma_stack reloads the driver stack, else None (no flag, or a stale
    one older than maintenance_max_age_s)."""
    path = config["maintenance_flag"]
    if not path or not os.path.isfile(path):
        return None
    try:
        age = now - os.path.getmtime(path)
        with open(path) as handle:
            note = " ".join(handle.read().split())[:120]
    except (IOError, OSError):
        return None
    if age > config["maintenance_max_age_s"]:
        return None
    return "maintenance in progress (%s for %ds%s): not checked, not drained" % (
        path,
        age,
        (": " + note) if note else "",
    )


# --- draining the own node ---------------------------------------------------------------------


def node_name(config):
    return config["node_name"] or socket.gethostname().split(".")[0]


def _fleet_limit(config, nodes):
    max_drain = config["fleet_max_drain"] if config["fleet_max_drain"] >= 0 else None
    return _slurm.guard_limit(len(nodes), config["fleet_max_drain_fraction"], max_drain)


def fleet_refusal(config, nodes, name):
    """The sentence that refuses to drain this node when the nodes already held with ibtune reasons (any source)
    reach the fleet limit, else None."""
    held = [n for n in _slurm.held_by_us(nodes) if n != name]
    limit = _fleet_limit(config, nodes)
    if len(held) + 1 <= limit:
        return None
    return "not drained: %d of %d nodes already carry ibtune reasons, the fleet limit is %d" % (
        len(held), len(nodes), limit
    ) + " (fleet_max_drain_fraction %s)" % config["fleet_max_drain_fraction"]  # fmt: skip


def _over_the_limit(config, nodes, name):
    """Whether this node, just drained, is past the fleet limit because others drained at the same moment: the
    held nodes ranked by when their reason was set, then by name, so every racing node agrees who stays."""
    held = [n for n in nodes if _slurm.is_held(n) and _slurm.is_ours(n["reason"])]
    held.sort(key=lambda n: (str(n.get("reason_time") or ""), n["name"]))
    names = [n["name"] for n in held]
    return name in names and names.index(name) >= _fleet_limit(config, nodes)


def _undo_if_raced(config, name, run):
    """After its drain, read the fleet again: a node past the limit (a fleet-wide quirk checked everywhere at once)
    resumes itself. Returns the note, or None when it stays drained."""
    rc, out = run([config["scontrol"], "show", "node", "--oneliner"])
    if rc != 0 or not _over_the_limit(config, _slurm.parse_show_node(out), name):
        return None
    run(_slurm.resume_argv(name, config["scontrol"]))
    return "drained and resumed %s: other nodes reached the fleet limit at the same moment" % name


def drain_own_node(config, problem, today, run=None):
    """Drain this node with our reason unless Slurm already holds it or the fleet limit is reached; returns a note
    for the output line.

    A node already drained, down or reserved is left alone whatever its reason (ours stays; a foreign one
    is never overwritten), as slurm_remediate does.
    """
    run = run or _run
    name = node_name(config)
    rc, out = run([config["scontrol"], "show", "node", "--oneliner"])
    if rc != 0:
        return "cannot read node %s from slurmctld (%s)" % (name, out.strip() or "rc=%d" % rc)
    nodes = _slurm.parse_show_node(out)
    mine = [n for n in nodes if n["name"] == name]
    if mine and _slurm.is_held(mine[0]):
        return "node %s already %s (%s), left as it is" % (name, mine[0]["state_text"], mine[0]["reason"] or "")
    refused = fleet_refusal(config, nodes, name)
    if refused:
        return refused
    reason = _slurm.drain_reason("node-health: " + problem, today)
    rc, out = run(_slurm.drain_argv(name, reason, config["scontrol"]))
    if rc != 0:
        return "drain of %s failed (%s)" % (name, out.strip() or "rc=%d" % rc)
    time.sleep(config["fleet_settle_s"])
    undone = _undo_if_raced(config, name, run)
    if undone:
        return undone
    _write_state(_state_file(config, "drained.json"), {"node": name, "reason": reason})
    return "drained %s" % name


def resume_own_drain(config, run=None):
    """On a healthy check after this check drained the node (its marker in the state directory): resume the node
    if Slurm still holds it with the health check's reason, never one drained by another source. Returns the note
    for the OK line, or None when there is nothing to resume (a healthy node asks slurmctld nothing)."""
    marker = _state_file(config, "drained.json")
    if not os.path.exists(marker):
        return None
    run = run or _run
    name = node_name(config)
    os.remove(marker)
    rc, out = run([config["scontrol"], "show", "node", name, "--oneliner"])
    mine = [n for n in _slurm.parse_show_node(out) if n["name"] == name] if rc == 0 else []
    if not mine or not _slurm.is_held(mine[0]) or _slurm.reason_source(mine[0]["reason"]) != "health":
        return None
    rc, out = run(_slurm.resume_argv(name, config["scontrol"]))
    return "resumed %s (its health-check drain: healthy again)" % name if rc == 0 else None


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


def parse_args(argv):
    """(path, drain, show_all) or None for a bad usage."""
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
            return None
    return path, drain, show_all


def _verdict_line(config, problems, drain, run, now):
    """The one output line for a node with problems: the first, how many more, and what was done about it."""
    line = problems[0]
    if len(problems) > 1:
        line += " (+%d more)" % (len(problems) - 1)
    if not drain:
        return line
    warnings = []
    streaks = update_streaks(config, problems, now, warnings)
    drainable = [p for p in problems if lasting(p, streaks, config, now)]
    if drainable:
        line += "; " + drain_own_node(config, drainable[0], time.strftime("%Y-%m-%d", time.gmtime(now)), run)
    else:
        streak = streaks.get(str(problems[0])) or {"count": 1}
        line += "; not drained yet: a transient state, %d of %d checks in a row (or %ds)" % (
            streak["count"], config["consecutive"], config["grace_s"])  # fmt: skip
    return line + "".join(" [warning: %s]" % w for w in warnings)


def main(argv=None, run=None, stdout=None, now=None):
    """Exit status 0 and 'OK' when healthy (or under maintenance); 1 and the first problem when not; 2 on a bad
    config or usage."""
    stdout = stdout or sys.stdout
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if args is None:
        stdout.write(USAGE + "\n")
        return 2
    path, drain, show_all = args
    try:
        config = load_config(path)
    except ConfigError as exc:
        stdout.write("ibtune-node-health: %s: fix the config (the node_health role writes it)\n" % exc)
        return 2
    now = time.time() if now is None else now
    paused = maintenance(config, now)
    if paused:
        stdout.write("OK: %s\n" % paused)
        return 0
    if drain is None:  # HealthCheckProgram takes no arguments: the config can ask for the drain
        drain = bool(config["drain"])
    warnings = []
    problems = run_checks(config, warnings)
    if not problems:
        note = None
        if drain:
            update_streaks(config, [], now, warnings)
            note = resume_own_drain(config, run)
        stdout.write("OK%s%s\n" % ("; " + note if note else "", "".join(" [warning: %s]" % w for w in warnings)))
        return 0
    line = _verdict_line(config, problems, drain, run, now)
    stdout.write(line + "".join(" [warning: %s]" % w for w in warnings) + "\n")
    if show_all:
        for item in problems[1:]:
            stdout.write(item + "\n")
    return 1
