# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge a node_exporter scrape: does its infiniband collector export anything?

node_exporter before 1.10 (procfs before 0.16.1; Debian 12 ships 1.5.0) exports NO InfiniBand metric at all when
any device under /sys/class/infiniband lacks a ``counters/`` directory (some drivers, VFs): the whole collector
fails, ``node_scrape_collector_success{collector="infiniband"}`` is 0, and the error is logged only at debug
level. ``infiniband_verdict()`` turns a scrape and the devices without counters/ into one sentence. Pure functions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{[^}]*\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
FIXED_VERSION = "1.10.0"


def scrape_url(listen_address):
    """node_exporter's --web.listen-address -> the URL of its /metrics on this host."""
    host, port = listen_address.rpartition(":")[::2]
    if host in ("", "0.0.0.0", "*"):
        host = "127.0.0.1"
    elif host in ("[::]",):
        host = "[::1]"
    return "http://%s:%s/metrics" % (host, port)


def samples(text):
    """[(name, {label: value}, value)] of a Prometheus text exposition (comments skipped)."""
    out = []
    for line in (text or "").splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match:
            labels = dict(_LABEL.findall(match.group("labels") or ""))
            out.append((match.group("name"), labels, match.group("value")))
    return out


def rdma_devices(class_root, dirs):
    """The RDMA devices (with at least one port) among the directory paths found under <sysfs>/class/infiniband."""
    class_root = class_root.rstrip("/")
    out = set()
    for path in dirs:
        rel = posixpath.relpath(path, class_root).split("/")
        if len(rel) == 3 and rel[1] == "ports":
            out.add(rel[0])
    return sorted(out)


def devices_without_counters(class_root, dirs):
    """RDMA devices with a port but no ports/<n>/counters directory, from the directory paths found under
    <sysfs>/class/infiniband (device, device/ports/<n>, device/ports/<n>/counters)."""
    class_root = class_root.rstrip("/")
    ports, counters = set(), set()
    for path in dirs:
        rel = posixpath.relpath(path, class_root).split("/")
        if len(rel) == 3 and rel[1] == "ports":
            ports.add((rel[0], rel[2]))
        elif len(rel) == 4 and rel[1] == "ports" and rel[3] == "counters":
            counters.add((rel[0], rel[2]))
    return sorted({dev for dev, port in ports - counters})


def infiniband_verdict(metrics_text, missing_counters=(), host="this host", devices=None):
    """{ok, version, collector_success, infiniband_samples, msg}: ok when the infiniband collector succeeded, or when
    the host has no RDMA device (devices == [], then node_exporter reports the collector failed with no data)."""
    found = samples(metrics_text)
    success = [
        v for n, lab, v in found if n == "node_scrape_collector_success" and lab.get("collector") == "infiniband"
    ]
    version = next((lab.get("version") for n, lab, v in found if n == "node_exporter_build_info"), None) or "unknown"
    count = sum(1 for n, lab, v in found if n.startswith("node_infiniband_"))
    result = {"version": version, "collector_success": success[0] if success else None, "infiniband_samples": count}
    if devices is not None and not devices:
        result.update(ok=True, msg="%s has no RDMA device: nothing for node_exporter's infiniband collector" % host)
        return result
    if not success:
        result.update(
            ok=False,
            msg="node_exporter %s on %s runs no infiniband collector (no node_scrape_collector_success"
            '{collector="infiniband"}): enable it with --collector.infiniband.' % (version, host),
        )
        return result
    if success[0] in ("1", "1.0"):
        result.update(ok=True, msg="node_exporter %s on %s exports %d InfiniBand samples" % (version, host, count))
        return result
    if missing_counters:
        cause = "%s %s no counters/ directory, and node_exporter before %s (procfs before 0.16.1) then gives up on" % (
            ", ".join(missing_counters),
            "has" if len(missing_counters) == 1 else "have",
            FIXED_VERSION,
        )
        cause += " every device"
    else:
        cause = "its infiniband collector fails (the reason is logged only with --log.level=debug)"
    result.update(
        ok=False,
        msg="node_exporter %s on %s exports no InfiniBand metrics at all (node_scrape_collector_success"
        '{collector="infiniband"} 0): %s. Install node_exporter %s or newer: fabric_monitoring_install_method=archive'
        " with fabric_monitoring_archive_version and fabric_monitoring_archive_sha256 (or set"
        " fabric_monitoring_infiniband_check=warn to go on blind)." % (version, host, cause, FIXED_VERSION),
    )
    return result


UPSTREAM_RELEASE = (
    "https://github.com/prometheus/node_exporter/releases/download/v{v}/node_exporter-{v}.linux-{a}.tar.gz"
)
# Ansible's architecture fact -> the name node_exporter's release archives use.
ARCHIVE_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armv7", "ppc64le": "ppc64le", "s390x": "s390x"}


def archive_url(url, version, architecture):
    """The release archive to install: the mirror URL when given, else the upstream release of ``version`` for
    this architecture, else "" (preflight then names both variables)."""
    if url:
        return url
    if not version:
        return ""
    return UPSTREAM_RELEASE.format(v=version, a=ARCHIVE_ARCH.get(architecture, architecture))


def exporter_args(listen_address, sysfs_root, textfile_dir, extra_args=()):
    """node_exporter's command line (after the binary): the collectors this collection relies on, then extras."""
    return [
        "--web.listen-address=" + listen_address,
        "--path.sysfs=" + sysfs_root,
        "--collector.infiniband",
        "--collector.textfile",
        "--collector.textfile.directory=" + textfile_dir,
    ] + list(extra_args or [])


_RATE_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def rate_problems(rate_gbps, overrides):
    """Sentences for an expected rate or override that is not a number of Gb/s ([] when all are)."""
    problems = []
    if not _RATE_RE.match(str(rate_gbps).strip()):
        problems.append("fabric_monitoring_expected_rate_gbps=%r is not a rate in Gb/s" % (rate_gbps,))
    for device, value in sorted((overrides or {}).items()):
        if not _RATE_RE.match(str(value).strip()):
            problems.append("fabric_monitoring_expected_rate_overrides.%s=%r is not a rate in Gb/s" % (device, value))
    return problems


def expected_rates(device_paths, rate_gbps, overrides=None):
    """{device: Gb/s} published as ibtune_port_expected_rate_gbps: every device found (paths under
    <sysfs>/class/infiniband) at ``rate_gbps`` when it is above 0, then the per-device overrides."""
    out = {}
    rate = float(rate_gbps or 0)
    if rate > 0:
        out = {posixpath.basename(path.rstrip("/")): rate for path in device_paths or []}
    for device, value in (overrides or {}).items():
        out[device] = float(value)
    return out
