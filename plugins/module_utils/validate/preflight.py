# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's rails and its preflight findings, from ib_facts (pure).

Rails have an identity (a name), never a position: ``fabric_validate_rails`` is either empty (every
ACTIVE LinkUp port, named ``dev:port``), a list of ``dev[:port]`` (named ``dev:port``), or a dict
``{rail name: dev[:port]}`` for fleets whose device names differ between host types. Rail ``r`` of
one host is paired with rail ``r`` of its peer, by name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.common import role_vars

_NATURAL_RE = re.compile(r"(\d+)")


def natural_key(text):
    """Sort key that puts mlx5_2 before mlx5_10."""
    return [int(part) if part.isdigit() else part for part in _NATURAL_RE.split(str(text))]


def _split(spec, what):
    text = str(spec).strip()
    if not text:
        raise ValueError("%s: an empty rail name; use dev or dev:port, e.g. mlx5_0:1" % what)
    device, _sep, port = text.partition(":")
    try:
        port = int(port) if port else 1
    except ValueError:
        raise ValueError("%s=%r: the port after ':' must be a number, e.g. mlx5_0:1" % (what, spec))
    if port < 1:
        raise ValueError("%s=%r: ports count from 1" % (what, spec))
    return device, port


def rail_specs(rails_option):
    """[(rail name, device, port)] from fabric_validate_rails; [] means 'every ACTIVE port'."""
    if rails_option in (None, "", [], {}):
        return []
    if isinstance(rails_option, dict):
        out = []
        for name in sorted(rails_option, key=natural_key):
            device, port = _split(rails_option[name], "fabric_validate_rails[%s]" % name)
            out.append((str(name), device, port))
        return out
    if isinstance(rails_option, (list, tuple)):
        out = []
        for index, spec in enumerate(rails_option):
            device, port = _split(spec, "fabric_validate_rails[%d]" % index)
            out.append(("%s:%d" % (device, port), device, port))
        return out
    raise ValueError(
        "fabric_validate_rails=%r must be a list of dev[:port] or a dict of rail name -> dev[:port]" % (rails_option,)
    )


def _port_facts(devices, device, port):
    dev = devices.get(device) or {}
    return dev, (dev.get("ports") or {}).get(str(port))


def _is_up(port):
    return bool(port) and port.get("state") == "ACTIVE" and port.get("phys_state") == "LinkUp"


def host_rails(facts, rails_option=None, link_layer=None):
    """The rails this host will test: [{rail, device, port, rate_gbps, lanes, lane_speed, link_layer,
    gid_index}] (only ports that are ACTIVE/LinkUp), sorted by rail name."""
    devices = (facts or {}).get("devices") or {}
    specs = rail_specs(rails_option)
    if not specs:
        for device in sorted(devices, key=natural_key):
            for port in sorted((devices[device].get("ports") or {}), key=natural_key):
                facts_port = devices[device]["ports"][port]
                if _is_up(facts_port) and (link_layer is None or facts_port.get("link_layer") == link_layer):
                    specs.append(("%s:%s" % (device, port), device, int(port)))
    rails = []
    for name, device, port in specs:
        _dev, facts_port = _port_facts(devices, device, port)
        if not _is_up(facts_port):
            continue
        rails.append(
            {
                "rail": name,
                "device": device,
                "port": port,
                "rate_gbps": facts_port.get("rate_gbps"),
                "lanes": facts_port.get("lanes"),
                "lane_speed": facts_port.get("lane_speed"),
                "link_layer": facts_port.get("link_layer"),
                "gid_index": facts_port.get("roce_v2_ipv4_gid_index"),
            }
        )
    rails.sort(key=lambda r: natural_key(r["rail"]))
    return rails


def _down_ports(devices, link_layer=None):
    out = []
    for device in sorted(devices, key=natural_key):
        for port in sorted((devices[device].get("ports") or {}), key=natural_key):
            facts_port = devices[device]["ports"][port]
            if link_layer is not None and facts_port.get("link_layer") not in (None, link_layer):
                continue
            if not _is_up(facts_port):
                out.append(
                    "%s:%s is %s/%s"
                    % (device, port, facts_port.get("state") or "?", facts_port.get("phys_state") or "?")
                )
    return out


def problems(facts, rails_option=None, expect=None, sysfs_root="/sys"):
    """Preflight findings for one host: [{rail, failure_kind, reason}] (reason: one sentence).

    ``expect``: {ports, rate_gbps, link_layer, fw_versions, check_pcie} (None/[] = not checked).
    """
    expect = expect or {}
    devices = (facts or {}).get("devices") or {}
    link_layer = expect.get("link_layer")
    specs = rail_specs(rails_option)
    rails = host_rails(facts, rails_option, link_layer if not specs else None)
    found = []

    def add(rail, kind, reason):
        found.append({"rail": rail, "failure_kind": kind, "reason": reason})

    if not devices:
        add(None, "no_device", "no RDMA device under %s/class/infiniband: check the driver and ibstat" % sysfs_root)
        return found
    for name, device, port in specs:
        dev, facts_port = _port_facts(devices, device, port)
        if not dev:
            add(
                name,
                "missing_rail",
                "rail %s: device %s not found (fabric_validate_rails lists it; found %s)"
                % (name, device, ", ".join(sorted(devices, key=natural_key))),
            )
        elif not facts_port:
            add(name, "missing_rail", "rail %s: port %s not found on %s" % (name, port, device))
        elif not _is_up(facts_port):
            add(
                name,
                "port_down",
                "rail %s: %s port %s is %s/%s, expected ACTIVE/LinkUp: check the cable and the subnet manager"
                % (name, device, port, facts_port.get("state"), facts_port.get("phys_state")),
            )
    expected_ports = expect.get("ports")
    if expected_ports is not None and len(rails) != int(expected_ports):
        down = _down_ports(devices, link_layer)
        add(
            None,
            "missing_rail",
            "expected %s rails (fabric_validate_expect_ports), found %d ACTIVE/LinkUp%s"
            % (expected_ports, len(rails), (": " + "; ".join(down)) if down else " and no port down"),
        )
    if not rails and not specs and expected_ports is None:
        down = _down_ports(devices, link_layer)
        add(
            None,
            "port_down",
            "no ACTIVE LinkUp RDMA port%s%s: check cabling, the subnet manager and ibstat"
            % (
                " with link layer %s" % link_layer if link_layer else "",
                (" (" + "; ".join(down) + ")") if down else "",
            ),
        )
    for rail in rails:
        dev = devices.get(rail["device"]) or {}
        rate = expect.get("rate_gbps")
        if rate is not None and rail["rate_gbps"] is not None and float(rail["rate_gbps"]) != float(rate):
            add(
                rail["rail"],
                "rate",
                "rail %s: expected rate %s Gb/s, found %s Gb/s (%sX %s): reseat or replace the cable/transceiver"
                % (
                    rail["rail"],
                    _fmt(rate),
                    _fmt(rail["rate_gbps"]),
                    rail.get("lanes") or "?",
                    rail.get("lane_speed") or "?",
                ),
            )
        if link_layer and rail["link_layer"] != link_layer:
            add(
                rail["rail"],
                "link_layer",
                "rail %s: expected link layer %s, found %s" % (rail["rail"], link_layer, rail["link_layer"]),
            )
        fw = expect.get("fw_versions") or []
        if fw and dev.get("fw_ver") not in fw:
            add(
                rail["rail"],
                "firmware",
                "rail %s: expected firmware %s, found %s" % (rail["rail"], " or ".join(fw), dev.get("fw_ver")),
            )
        pcie = dev.get("pcie") or {}
        if expect.get("check_pcie", True) and pcie.get("degraded"):
            add(
                rail["rail"],
                "pcie",
                "rail %s: expected PCIe %s GT/s x%s, found %s GT/s x%s (degraded; reseat the card or check the slot)"
                % (
                    rail["rail"],
                    pcie.get("max_speed_gts"),
                    pcie.get("max_width"),
                    pcie.get("speed_gts"),
                    pcie.get("width"),
                ),
            )
    return found


def summary(host, rails, found):
    """One line for the play's output: the rails a host will be tested on, or why it will not be tested."""
    if not found:
        return "%s: %d rail(s) %s as expected" % (host, len(rails or []), ", ".join(r["rail"] for r in rails or []))
    return "%s: FAILED preflight, not tested: %s" % (host, "; ".join(item["reason"] for item in found))


def _fmt(value):
    value = float(value)
    return ("%d" % value) if value.is_integer() else ("%g" % value)


def _num(value):
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


# variable -> (minimum, maximum, allow null): one sentence per bad variable, naming it and its range
_RANGES = {
    "fabric_validate_duration": (1, 3600, False),
    "fabric_validate_qps": (1, 128, False),
    "fabric_validate_base_tcp_port": (1024, 65000, False),
    "fabric_validate_connect_timeout": (1, 3600, False),
    "fabric_validate_run_slack": (0, 3600, False),
    "fabric_validate_poll_interval": (0.1, 600, False),
    "fabric_validate_min_link_fraction": (0, 1, True),
    "fabric_validate_min_peer_fraction": (0, 1, True),
    "fabric_validate_min_gbps": (0, 1e6, True),
    "fabric_validate_expect_rate_gbps": (0.001, 1e6, True),
    "fabric_validate_expect_ports": (1, 64, True),
    "fabric_validate_min_hosts": (1, 1e9, False),
    "fabric_validate_regression_tolerance": (0, 0.999, False),
    "fabric_validate_max_typical_us": (0.001, 1e7, True),
    "fabric_validate_max_p99_us": (0.001, 1e7, True),
}
LINK_LAYERS = ("InfiniBand", "Ethernet")


def check_settings(values):
    """Problems with fabric_validate's variables: [sentence], each naming one variable, its value
    and what is allowed. ``values``: {variable: value} (only the ones to check)."""
    out = []
    for name in sorted(values):
        value = values[name]
        if name in _RANGES:
            low, high, nullable = _RANGES[name]
            if value is None or value == "":
                if not nullable:
                    out.append("%s is unset: give a number from %g to %g" % (name, low, high))
                continue
            number = _num(value)
            if number is None or not low <= number <= high:
                out.append(
                    "%s=%r is out of range: use a number from %g to %g%s"
                    % (name, value, low, high, " or null" if nullable else "")
                )
        elif name == "fabric_validate_expect_link_layer":
            if value not in (None, "") and value not in LINK_LAYERS:
                out.append("%s=%r: use InfiniBand, Ethernet or null" % (name, value))
        elif name == "fabric_validate_rails":
            try:
                rail_specs(value)
            except ValueError as exc:
                out.append(str(exc))
    return out


# ---- the fabric as declared (ibtune_fabric) against what the hosts report -----------------------------------
# Checked once, on the controller, before anything is installed or measured: a wrong declaration would otherwise
# show up as one "reseat or replace the cable" per rail of every host (rate) or "found 0 ACTIVE ports" about ports
# that are up (link layer).

FABRIC_KEYS = ("link_layer", "rate_gbps", "rails")
# Per port, in Gb/s: 1 GbE at the bottom, 1.6 Tb/s (the fastest ports announced) at the top; anything outside is
# a typo (4000 for 400) or a unit mistake (50 GB/s written as 50000).
RATE_RANGE = (1, 1600)
RAILS_RANGE = (1, 64)
# Which variable holds each fact when a role variable departs from ibtune_fabric.
EXPECT_VARIABLES = {"rate_gbps": "fabric_validate_expect_rate_gbps", "link_layer": "fabric_validate_expect_link_layer"}


def _bounded_number(label, value, low, high, integer=False):
    """A sentence when value is no number within [low, high] (an integer where asked), else None."""
    number = None if isinstance(value, bool) else _num(value)
    if number is None or not low <= number <= high or (integer and not number.is_integer()):
        return "%s=%r is not %s from %g to %g" % (label, value, "a whole number" if integer else "a number", low, high)
    return None


def fabric_problems(fabric, name="ibtune_fabric"):
    """Sentences about the declaration itself: unknown keys (with a did-you-mean), values out of bounds."""
    if fabric in (None, "", {}):
        return []
    if not isinstance(fabric, dict):
        return ["%s=%r must be a dict such as {link_layer: InfiniBand, rate_gbps: 400, rails: 8}" % (name, fabric)]
    out = []
    for key in sorted(fabric, key=str):
        if key not in FABRIC_KEYS:
            near = role_vars.suggest(str(key), FABRIC_KEYS)
            out.append(
                "%s.%s is not a key of %s (%s): %s"
                % (name, key, name, ", ".join(FABRIC_KEYS), "did you mean %s?" % near if near else "remove it")
            )
    layer = fabric.get("link_layer")
    if layer not in (None, "") and layer not in LINK_LAYERS:
        out.append("%s.link_layer=%r: use InfiniBand or Ethernet (RoCE)" % (name, layer))
    checks = (("rate_gbps", RATE_RANGE, False, " Gb/s per port"), ("rails", RAILS_RANGE, True, " ports per host"))
    for key, (low, high), integer, unit in checks:
        if fabric.get(key) not in (None, ""):
            problem = _bounded_number("%s.%s" % (name, key), fabric[key], low, high, integer)
            if problem:
                out.append(problem + unit)
    return out


def _ports(facts_by_host):
    """[(host, device:port, port facts)] of every RDMA port the hosts report."""
    out = []
    for host in sorted(facts_by_host, key=natural_key):
        devices = (facts_by_host[host] or {}).get("devices") or {}
        for device in sorted(devices, key=natural_key):
            for port, facts_port in sorted(
                (devices[device].get("ports") or {}).items(), key=lambda kv: natural_key(kv[0])
            ):
                out.append((host, "%s:%s" % (device, port), facts_port or {}))
    return out


def _declared(declaration, fact):
    """(value, variable name) of one declared fact: the role variable that departs from the fabric, else
    ibtune_fabric's key."""
    variable = EXPECT_VARIABLES[fact]
    value = declaration.get(variable)
    if value not in (None, ""):
        return value, variable
    return (declaration.get("ibtune_fabric") or {}).get(fact), "ibtune_fabric.%s" % fact


def _count_hosts(items):
    return len(set(host for host, _port, _facts in items))


def _link_layer_problem(value, variable, ports):
    """When no port of any host has the declared link layer but some have another: one sentence."""
    layers = {}
    for item in ports:
        layers.setdefault(item[2].get("link_layer"), []).append(item)
    if not ports or value in layers or value in (None, ""):
        return None
    found = sorted((k for k in layers if k), key=lambda k: -len(layers[k]))
    if not found:
        return None
    seen = ", ".join("%s on %d port(s) of %d host(s)" % (k, len(layers[k]), _count_hosts(layers[k])) for k in found)
    return "%s is %s, but no RDMA port of any host has that link layer: they report %s. Set %s: %s%s" % (
        variable,
        value,
        seen,
        variable,
        found[0],
        " (RoCE)" if found[0] == "Ethernet" else "",
    )


def _rate_problem(value, variable, ports, link_layer):
    """When most ACTIVE ports trained at one rate and the declared rate is another: one sentence."""
    declared = _num(value)
    active = [p for p in ports if _is_up(p[2]) and p[2].get("rate_gbps") is not None]
    if link_layer:
        active = [p for p in active if p[2].get("link_layer") in (None, link_layer)] or active
    if declared is None or not active:
        return None
    by_rate = {}
    for item in active:
        by_rate.setdefault(float(item[2]["rate_gbps"]), []).append(item)
    rate, items = max(by_rate.items(), key=lambda kv: (len(kv[1]), kv[0]))
    if rate == declared or len(items) * 2 <= len(active):
        return None
    sample = items[0][2]
    return (
        "%s is %s Gb/s, but %d of %d ACTIVE port(s) on %d host(s) trained at %s Gb/s (%sX %s), none of them a cable "
        "fault: set %s: %s (a port below it is then named by preflight)"
        % (
            variable,
            _fmt(declared),
            len(items),
            len(active),
            _count_hosts(active),
            _fmt(rate),
            sample.get("lanes") or "?",
            sample.get("lane_speed") or "?",
            variable,
            _fmt(rate),
        )
    )


def declaration_problems(declarations, facts_by_host):
    """Sentences, each naming the variable, what the hosts report and the fix, for a fabric declared wrong.

    ``declarations``: {host: {ibtune_fabric, fabric_validate_expect_rate_gbps, fabric_validate_expect_link_layer}}
    (the host's values); ``facts_by_host``: {host: ib_facts' ibtune_rdma}. Hosts that share a declaration are
    judged together (the rate most of their ports trained at), so one wrong value gives one sentence, not one per
    rail of every host.
    """
    groups = {}
    for host in sorted(declarations, key=natural_key):
        declaration = declarations[host] or {}
        key = repr(sorted((k, repr(v)) for k, v in declaration.items()))
        groups.setdefault(key, (declaration, []))[1].append(host)
    out = []
    for declaration, hosts in groups.values():
        found = fabric_problems(declaration.get("ibtune_fabric"))
        if found:
            out.extend(p for p in found if p not in out)
            continue
        ports = _ports(dict((h, facts_by_host.get(h)) for h in hosts if facts_by_host.get(h)))
        layer, layer_variable = _declared(declaration, "link_layer")
        rate, rate_variable = _declared(declaration, "rate_gbps")
        layer_problem = _link_layer_problem(layer, layer_variable, ports)
        checks = [layer_problem, None if layer_problem else _rate_problem(rate, rate_variable, ports, layer)]
        out.extend(p for p in checks if p and p not in out)
    return out


# ---- the install stage's batch size (ibtune_install_serial) -------------------------------------------------
# A play's `serial:` is templated before any inventory variable exists (only extra vars and play vars are
# there), so tune_ib.yml's preflight reads the inventory's value, checks it, and hands it to the install play as
# the name of an (empty of meaning) inventory group, which `serial:` can see: ibtune_install_serial_25pct.
SERIAL_GROUP_PREFIX = "ibtune_install_serial_"
_SERIAL_ITEM_RE = re.compile(r"^([0-9]+)(%?)$")


def _serial_items(value):
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        match = None if isinstance(item, bool) else _SERIAL_ITEM_RE.match(str(item).strip())
        number = int(match.group(1)) if match else 0
        if not match or number < 1 or (match.group(2) and number > 100):
            return None
        out.append("%d%s" % (number, match.group(2)))
    return out or None


def install_serial(values):
    """(serial items, problem) from {host: ibtune_install_serial} ({} or None values: '100%').

    Every GPU node must have the same value (one play batches them all) of the form N, 'N%' (1-100) or a list of
    those (Ansible's serial); problem is one sentence naming the variable, what the hosts have and the fix.
    """
    given = dict((h, v) for h, v in (values or {}).items() if v not in (None, ""))
    distinct = sorted(set(repr(v) for v in given.values()))
    if len(distinct) > 1:
        by_value = {}
        for host in sorted(given, key=natural_key):
            by_value.setdefault(repr(given[host]), []).append(host)
        seen = "; ".join(
            "%s on %s" % (v, ", ".join(h[:3]) + (" ..." if len(h) > 3 else "")) for v, h in sorted(by_value.items())
        )
        return None, (
            "ibtune_install_serial differs between the GPU nodes (%s): the install play batches them all with one "
            "size, so set it once (group_vars/gpu_nodes.yml or all.yml, or -e ibtune_install_serial=...)" % seen
        )
    if not given:
        return ["100%"], None
    value = list(given.values())[0]
    items = _serial_items(value)
    if items is None:
        return None, (
            "ibtune_install_serial=%r is not a batch size: use a number of nodes (2), a percentage ('25%%', 1-100) "
            "or a list of those ([1, '25%%']), as Ansible's serial takes" % (value,)
        )
    return items, None


def serial_group(items):
    """The group name that carries the batch size to the install play: ['1', '25%'] -> ibtune_install_serial_1_25pct."""
    return SERIAL_GROUP_PREFIX + "_".join(i.replace("%", "pct") for i in items)


def serial_from_groups(groups):
    """The install play's serial from the group preflight added (['100%'] when there is none)."""
    for name in sorted(groups or []):
        if name.startswith(SERIAL_GROUP_PREFIX):
            items = name[len(SERIAL_GROUP_PREFIX) :].split("_")
            return [i.replace("pct", "%") if i.endswith("pct") else int(i) for i in items]
    return ["100%"]
