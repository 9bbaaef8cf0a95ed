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
