# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read NCCL debug logs (NCCL_DEBUG=INFO/WARN): which network NCCL used, whether it fell back from
IB to sockets and why, GPUDirect RDMA, versions, environment pickups and WARN lines.

Lines look like ``host:pid:tid [dev] NCCL INFO <msg>`` (WARN lines may carry ``file.cc:line`` before
``NCCL`` and, since 2.26, a ``[YYYY-MM-DD HH:MM:SS]`` prefix). Versions appear bare
(``NCCL version 2.19.3+cuda12.3``, older releases) or as ``NCCL INFO NCCL version ...``. Anything
else (nccl-tests tables, torchrun chatter) is ignored, so whole job logs can be fed in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_LINE_RE = re.compile(
    r"^(?:\[(?P<ts>[^\]]*)\]\s+)?"
    r"(?P<host>[^\s:]+(?:\s+)?):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>[^\]]*)\]\s+"
    r"(?:(?P<src>\S+:\d+)\s+)?NCCL\s+(?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$"
)
_VERSION_RE = re.compile(r"\bNCCL version (?P<version>\d+\.\d+\.\d+(?:[+.\-]\S*)?)")
_NETWORK_RE = re.compile(r"^Using network (?P<net>.+?)\s*$")
_IB_USING_RE = re.compile(r"^NET/IB\s*:\s*Using\s+(?P<devs>.*?)(?:\s*;\s*OOB\s+(?P<oob>.*))?$")
_IB_DEV_RE = re.compile(r"\[(?P<idx>\d+)\](?P<dev>[^:\s\[]+):(?P<port>\d+)/(?P<kind>[A-Za-z]+)")
_SOCKET_USING_RE = re.compile(r"^NET/Socket\s*:\s*Using\s+(?P<ifs>.*)$")
_SOCKET_IF_RE = re.compile(r"\[\d+\](?P<if>[^:\s]+):(?P<addr>\S+?)(?:<\d+>)?(?=\s|$)")
_ENV_RE = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*) set by environment to (?P<value>.*?)\.?\s*$")
_CHANNEL_VIA_RE = re.compile(
    r"\bvia (?P<path>NET/[^\s/]+(?:/\d+)?(?:/GDRDMA)?|P2P(?:/[A-Za-z]+)?(?:/read)?|SHM(?:/[A-Za-z]+)?|COLLNET\S*)"
)

IB_DISABLED = "NCCL_IB_DISABLE=1"
IB_NO_DEVICE = "no IB device"


def family(network):
    """Transport family of a network name: IBext, IBext_v8 and 'IB' are IB; Socket is Socket."""
    if network is None:
        return None
    upper = network.upper()
    if upper.startswith("IB"):
        return "IB"
    if upper.startswith("SOCKET"):
        return "Socket"
    return network


def _version_key(version):
    parts = re.findall(r"\d+", version.split("+", 1)[0])
    return tuple(int(p) for p in parts)


def _empty_result():
    """What parse() returns for an empty log; parse_many() merges into the same shape."""
    return {
        "transports": [],
        "networks": [],
        "ib_devices": [],
        "socket_interfaces": [],
        "ib_no_device": [],
        "ib_disabled": [],
        "gdr": False,
        "channel_paths": {},
        "env": {},
        "nccl_versions": [],
        "warnings": [],
        "hosts": [],
        "per_host": {},
        "lines": 0,
    }


def parse(text, path=None):
    """Parse one log. Returns a dict (see parse_many for the merged form); ``per_host`` holds, for each host
    that logged, what its ranks chose (transports, ib_devices, gdr, net_channels, ib_no_device, ib_disabled)."""
    result = _empty_result()
    for lineno, raw in enumerate(text.splitlines(), 1):
        _parse_line(result, raw.rstrip("\r"), lineno, path)
    _infer_transports(result)
    for entry in result["per_host"].values():
        _infer_transports(entry)
    result["nccl_versions"].sort(key=_version_key)
    result["fallback"] = bool(result["ib_no_device"]) and "Socket" in result["transports"]
    return result


def _parse_line(result, line, lineno, path):
    match = _LINE_RE.match(line)
    if not match:
        version = _VERSION_RE.search(line)
        if version and line.lstrip().startswith("NCCL version"):
            _add(result["nccl_versions"], version.group("version"))
        return
    result["lines"] += 1
    host = match.group("host").strip()
    _add(result["hosts"], host)
    entry = _host_entry(result, host)
    entry["lines"] += 1
    msg = match.group("msg").strip()
    where = {"path": path, "line": lineno, "host": host}
    if match.group("level") == "WARN":
        result["warnings"].append(dict(where, message=msg, source=match.group("src"), text=line))
        return
    for handler in _HANDLERS:
        if handler(result, entry, msg, where):
            return
    _channel(result, entry, msg)


def _host_entry(result, host):
    if host not in result["per_host"]:
        result["per_host"][host] = {
            "transports": [],
            "networks": [],
            "ib_devices": [],
            "socket_interfaces": [],
            "gdr": False,
            "net_channels": 0,
            "gdr_channels": 0,
            "channel_kinds": {},
            "ib_no_device": False,
            "ib_disabled": False,
            "lines": 0,
        }
    return result["per_host"][host]


def _version(result, entry, msg, where):
    version = _VERSION_RE.search(msg)
    if version and msg.startswith("NCCL version"):
        _add(result["nccl_versions"], version.group("version"))
        return True
    return False


def _network(result, entry, msg, where):
    network = _NETWORK_RE.match(msg)
    if not network:
        return False
    name = network.group("net")
    for target in (result, entry):
        _add(target["networks"], name)
        _add(target["transports"], family(name))
    return True


def _no_device(result, entry, msg, where):
    if not re.match(r"^NET/IB\s*:\s*No device found", msg):
        return False
    result["ib_no_device"].append(dict(where, text=msg))
    entry["ib_no_device"] = True
    return True


def _ib_using(result, entry, msg, where):
    ib_using = _IB_USING_RE.match(msg)
    if not ib_using:
        return False
    for dev in _IB_DEV_RE.finditer(ib_using.group("devs")):
        name = "%s:%s/%s" % (dev.group("dev"), dev.group("port"), dev.group("kind"))
        _add(result["ib_devices"], name)
        _add(entry["ib_devices"], name)
    return True


def _socket_using(result, entry, msg, where):
    sock = _SOCKET_USING_RE.match(msg)
    if not sock:
        return False
    for iface in _SOCKET_IF_RE.finditer(sock.group("ifs")):
        _add(result["socket_interfaces"], iface.group("if"))
        _add(entry["socket_interfaces"], iface.group("if"))
    return True


def _env(result, entry, msg, where):
    env = _ENV_RE.match(msg)
    if not env:
        return False
    name, value = env.group("name"), env.group("value")
    result["env"][name] = value
    if name == "NCCL_IB_DISABLE" and value.strip() not in ("0", ""):
        result["ib_disabled"].append(dict(where, text=msg))
        entry["ib_disabled"] = True
    return True


_HANDLERS = (_version, _network, _no_device, _ib_using, _socket_using, _env)


def _channel(result, entry, msg):
    """Channel lines ('... via NET/IB/0/GDRDMA', 'via P2P/CUMEM') and GPUDirect RDMA mentions."""
    if "GDRDMA" in msg or re.search(r"GPU Direct RDMA Enabled", msg):
        result["gdr"] = True
        entry["gdr"] = True
    for via in _CHANNEL_VIA_RE.finditer(msg):
        key = via.group("path")
        result["channel_paths"][key] = result["channel_paths"].get(key, 0) + 1
        kind = key.split("/", 1)[0]
        entry["channel_kinds"][kind] = entry["channel_kinds"].get(kind, 0) + 1
        if key.startswith("NET/"):
            entry["net_channels"] += 1
            if key.endswith("/GDRDMA"):
                entry["gdr_channels"] += 1


def _infer_transports(result):
    """Old NCCL (before ~2.6) never logs 'Using network X': fall back on which NET said 'Using'."""
    if result["transports"]:
        return
    if result["ib_devices"]:
        result["transports"].append("IB")
        result["networks"].append("IB (inferred from NET/IB : Using)")
    elif result["socket_interfaces"]:
        result["transports"].append("Socket")
        result["networks"].append("Socket (inferred from NET/Socket : Using)")


def _add(items, value):
    if value not in items:
        items.append(value)


def parse_many(sources):
    """Merge parse() over [(path, text), ...]."""
    merged = _empty_result()
    merged.update(
        {
            "files": [],
        }
    )
    for path, text in sources:
        one = parse(text, path=path)
        merged["files"].append({"path": path, "nccl_lines": one["lines"], "transports": one["transports"]})
        for key in ("transports", "networks", "ib_devices", "socket_interfaces", "nccl_versions", "hosts"):
            for value in one[key]:
                _add(merged[key], value)
        for key in ("ib_no_device", "ib_disabled", "warnings"):
            merged[key].extend(one[key])
        for key, count in one["channel_paths"].items():
            merged["channel_paths"][key] = merged["channel_paths"].get(key, 0) + count
        merged["env"].update(one["env"])
        for host, entry in one["per_host"].items():
            _merge_host(_host_entry(merged, host), entry)
        merged["gdr"] = merged["gdr"] or one["gdr"]
        merged["lines"] += one["lines"]
    merged["nccl_versions"].sort(key=_version_key)
    merged["fallback"] = bool(merged["ib_no_device"]) and "Socket" in merged["transports"]
    return merged


def _merge_host(into, entry):
    for key in ("transports", "networks", "ib_devices", "socket_interfaces"):
        for value in entry[key]:
            _add(into[key], value)
    for key in ("net_channels", "gdr_channels", "lines"):
        into[key] += entry[key]
    for kind, count in entry["channel_kinds"].items():
        into["channel_kinds"][kind] = into["channel_kinds"].get(kind, 0) + count
    for key in ("gdr", "ib_no_device", "ib_disabled"):
        into[key] = into[key] or entry[key]


def _where(item):
    if item.get("path"):
        return "%s:%d" % (item["path"], item["line"])
    return "line %d" % item["line"]


def fallback_reason(result):
    """Why NCCL is not on IB, in words; None when nothing in the log says."""
    if result["ib_disabled"]:
        item = result["ib_disabled"][0]
        return "NCCL_IB_DISABLE=1 was set (%s: %r)" % (_where(item), item["text"])
    if result["ib_no_device"]:
        item = result["ib_no_device"][0]
        return "NET/IB found no usable RDMA device (%s: %r)" % (_where(item), item["text"])
    return None


def check_transport(result, expect):
    """None when NCCL used the expected transport family, else one sentence saying what and why."""
    expected = family(expect)
    used = result["transports"]
    if not used:
        return (
            "NCCL did not log which network it used ('Using network ...'): run it with NCCL_DEBUG=INFO "
            "(NCCL_DEBUG_SUBSYS must include INIT or NET) and check these logs again"
        )
    if expected in used:
        others = [t for t in used if t != expected]
        if others:
            return "NCCL used %s but also %s in these logs: some ranks did not get %s" % (
                expected,
                ", ".join(others),
                expected,
            )
        return None
    names = ", ".join(result["networks"]) or ", ".join(used)
    reason = fallback_reason(result)
    hosts = ", ".join(result["hosts"]) or "the node"
    if expected == "IB" and "Socket" in used:
        if result["fallback"]:
            return (
                "NCCL fell back to Socket on %s instead of using IB: %s. Load the RDMA driver and bring the "
                "ports ACTIVE (see ib_facts), and check that NCCL_IB_HCA names existing devices" % (hosts, reason)
            )
        if reason:
            return "NCCL used Socket instead of IB on %s because %s: unset it to use IB" % (hosts, reason)
        return "NCCL used Socket instead of IB on %s: check NCCL_NET, NCCL_IB_HCA and the RDMA devices" % hosts
    return "NCCL used network %s on %s, not %s%s" % (
        names,
        hosts,
        expect,
        (": " + reason) if reason else "",
    )


def hca_names(devices):
    """'mlx5_0:1/IB' -> 'mlx5_0' for each entry, sorted, duplicates dropped."""
    return sorted(set(str(d).split(":", 1)[0].split("/", 1)[0] for d in devices or []))


def check_expectations(result, expect):
    """Problems (one dict per host and kind) where what NCCL logged differs from the run's plan.

    expect: {hosts: [...], transport: IB|Socket|None, hcas: [dev, ...] | None, gdr: True|False|None,
    channels: P2P|SHM|NET|None (every channel a host logged must go that way: P2P for NVLink inside a node)}. Each
    problem is {host, kind (no_log|transport|hca|gdr|channels), message}. A host of the plan that logged nothing
    is a problem (its ranks did not get NCCL_DEBUG, or never started); GPUDirect is judged only where NET channels
    were logged."""
    problems = []
    per_host = result.get("per_host") or {}
    for host in expect.get("hosts") or sorted(per_host):
        entry = per_host.get(host)
        if entry is None:
            problems.append(
                {
                    "host": host,
                    "kind": "no_log",
                    "message": "%s logged no NCCL line: its ranks did not get NCCL_DEBUG=INFO or never started" % host,
                }
            )
            continue
        problems.extend(_host_problems(host, entry, expect))
    return problems


def _host_problems(host, entry, expect):
    out = []
    want = family(expect.get("transport")) if expect.get("transport") else None
    if want and entry["transports"] != [want]:
        used = ", ".join(entry["transports"]) or "no network it named"
        why = ""
        if entry["ib_disabled"]:
            why = " (NCCL_IB_DISABLE=1 was set)"
        elif entry["ib_no_device"]:
            why = " (NET/IB : No device found)"
        out.append(
            {"host": host, "kind": "transport", "message": "%s used %s%s, the plan wants %s" % (host, used, why, want)}
        )
    hcas = expect.get("hcas")
    if hcas is not None and want == "IB" and "IB" in entry["transports"]:
        used = hca_names(entry["ib_devices"])
        if used != sorted(set(hcas)):
            out.append(
                {
                    "host": host,
                    "kind": "hca",
                    "message": "%s used NIC(s) %s, the plan wants %s: check NCCL_IB_HCA"
                    % (host, ", ".join(used) or "none", ", ".join(sorted(set(hcas)))),
                }
            )
    out += _channel_problems(host, entry, expect.get("channels"))
    gdr = expect.get("gdr")
    if gdr is not None and entry["net_channels"]:
        has = entry["gdr_channels"] > 0
        if has != bool(gdr):
            out.append(
                {
                    "host": host,
                    "kind": "gdr",
                    "message": "%s %s GPUDirect RDMA on its %d NET channel(s), the plan wants it %s"
                    % (host, "used" if has else "did not use", entry["net_channels"], "on" if gdr else "off"),
                }
            )
    return out


def _channel_problems(host, entry, want):
    if not want:
        return []
    kinds = entry["channel_kinds"]
    others = dict((k, n) for k, n in kinds.items() if k != want)
    if kinds.get(want) and not others:
        return []
    seen = (
        ", ".join("%d via %s" % (n, k) for k, n in sorted(kinds.items())) or "no channel line (NCCL_DEBUG_SUBSYS=INIT)"
    )
    return [
        {
            "host": host,
            "kind": "channels",
            "message": "%s connected %s, the plan wants every channel via %s" % (host, seen, want),
        }
    ]


def prom_metrics(host, result, busbw=None, timestamp=None):
    """ibtune_nccl.prom text (docs/dev/CONTRACTS.md). busbw: {collective: GB/s}."""

    def esc(value):
        return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    out = []
    out.append("# HELP ibtune_nccl_transport_info 1 for each network NCCL said it used.")
    out.append("# TYPE ibtune_nccl_transport_info gauge")
    for transport in result["transports"]:
        out.append('ibtune_nccl_transport_info{host="%s",transport="%s"} 1' % (esc(host), esc(transport)))
    out.append("# HELP ibtune_nccl_fallback 1 when NCCL fell back from IB to sockets.")
    out.append("# TYPE ibtune_nccl_fallback gauge")
    out.append('ibtune_nccl_fallback{host="%s"} %d' % (esc(host), 1 if result["fallback"] else 0))
    out.append("# HELP ibtune_nccl_warnings NCCL WARN lines in the checked logs.")
    out.append("# TYPE ibtune_nccl_warnings gauge")
    out.append('ibtune_nccl_warnings{host="%s"} %d' % (esc(host), len(result["warnings"])))
    if busbw:
        out.append("# HELP ibtune_nccl_busbw_gbytes Bus bandwidth (GB/s) at the largest size measured.")
        out.append("# TYPE ibtune_nccl_busbw_gbytes gauge")
        for collective in sorted(busbw):
            if busbw[collective] is None:
                continue
            out.append(
                'ibtune_nccl_busbw_gbytes{host="%s",collective="%s"} %s'
                % (esc(host), esc(collective), repr(float(busbw[collective])))
            )
    if timestamp is not None:
        out.append("# HELP ibtune_nccl_check_timestamp_seconds When the NCCL check ran.")
        out.append("# TYPE ibtune_nccl_check_timestamp_seconds gauge")
        out.append('ibtune_nccl_check_timestamp_seconds{host="%s"} %d' % (esc(host), int(timestamp)))
    return "\n".join(out) + "\n"
