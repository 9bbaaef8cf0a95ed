# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ib_phy module does, as one function over its parameters (the module is glue).

run(params, check_mode) -> result dict; PhyModuleError carries the one sentence the module fails with.
Host ports come from ``devices`` (``mlx5_0`` or ``mlx5_0:2``; default every port of every RDMA device under
sysfs_root), switch ports from ``switch_ports`` ([{lid, port, switch, guid}], read in-band from this host),
and any port from a saved ``net_dump_ext`` or ``db_csv`` (ibdiagnet --get_phy_info); ``ibdiagnet_log`` adds
ibdiagnet's own BER check lines (``ber_check``). Counters are cleared only with
``clear: true``: after the read, never in check mode, and the result says so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs as _sysfs
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import dbcsv as _dbcsv
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import ibdiag as _ibdiag
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import ibdiaglog as _ibdiaglog
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import mlxlink as _mlxlink
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import read as _read


class PhyModuleError(Exception):
    """The module fails with this one sentence."""


def host_ends(sysfs_root, devices, host=None):
    """[{"kind": "host", "host", "device", "port"}] for ``devices`` or every port under sysfs_root."""
    if not devices:
        found = []
        for device in _sysfs.list_devices(sysfs_root):
            found += ["%s:%s" % (device, port) for port in _sysfs.list_ports(sysfs_root, device)]
        devices = found
    ends = []
    for item in devices:
        device, _sep, port = str(item).partition(":")
        if not device or (port and not port.isdigit()):
            raise PhyModuleError("devices entry %r is not 'mlx5_0' or 'mlx5_0:1': fix the devices option" % (item,))
        ends.append({"kind": "host", "host": host, "device": device, "port": int(port or 1)})
    return ends


def switch_ends(items):
    ends = []
    for index, item in enumerate(items or []):
        try:
            lid, port = int(item["lid"]), int(item["port"])
        except (KeyError, TypeError, ValueError):
            raise PhyModuleError("switch_ports[%d] %r needs a lid and a port (integers)" % (index, item))
        if lid < 1 or port < 1:
            raise PhyModuleError("switch_ports[%d]: lid and port must be >= 1, got %r" % (index, item))
        end = {"kind": "switch", "lid": lid, "port": port}
        for key in ("switch", "guid"):
            if item.get(key):
                end[key] = str(item[key])
        ends.append(end)
    return ends


def _read_text(path, what, parse):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return parse(handle.read())
    except (IOError, OSError) as exc:
        raise PhyModuleError("cannot read %s %s: %s" % (what, path, exc))
    except _mlxlink.PhyFormatError as exc:
        raise PhyModuleError("%s: %s" % (path, exc))


def _end_of(guid, port, node):
    """A read_ends() end for a fabric port known by GUID (NODES says switch or host)."""
    desc = (node or {}).get("desc")
    end = {"kind": "switch" if (node or {}).get("switch") else "host", "guid": guid, "port": port, "node_desc": desc}
    if end["kind"] == "switch":
        end["switch"] = desc
    else:
        parts = (desc or "").split()
        end.update(host=parts[0] if parts else guid, device=parts[1] if len(parts) > 1 else None)
    return end


def db_csv_ports(path, now):
    """Ports of a saved ibdiagnet2.db_csv, as read_ends() entries, and the PHY tables not read by name."""
    parsed = _read_text(path, "db_csv", _dbcsv.parse_db_csv)
    out = []
    for entry in parsed["ports"]:
        end = _end_of(entry["guid"], entry["port"], parsed["nodes"].get(entry["guid"]))
        reading = _dbcsv.reading_of_port(entry)
        out.append({"end": end, "reading": reading, "error": None, "read_at": now, "cmd": None})
    return out, parsed["unread"]


def ber_check(path):
    """ibdiagnet2.log's BER checks: {"checks": [...], "findings": [...]} (ibdiaglog.parse_log)."""
    return _read_text(path, "ibdiagnet log", _ibdiaglog.parse_log)


def net_dump_ports(path, now):
    """Ports of a saved ibdiagnet2.net_dump_ext, as read_ends() entries."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            rows = _ibdiag.parse_net_dump_ext(handle.read())
    except (IOError, OSError) as exc:
        raise PhyModuleError("cannot read net_dump_ext %s: %s" % (path, exc))
    except _mlxlink.PhyFormatError as exc:
        raise PhyModuleError("%s: %s" % (path, exc))
    out = []
    for row in rows:
        kind = "switch" if (row.get("type") or "").upper().startswith("SW") else "host"
        end = {"kind": kind, "guid": row["guid"], "port": row["port"], "node_desc": row.get("node_desc")}
        if kind == "switch":
            end["switch"] = row.get("node_desc")
        else:
            parts = (row.get("node_desc") or "").split()
            end.update(host=parts[0] if parts else row["guid"], device=parts[1] if len(parts) > 1 else None)
        out.append({"end": end, "reading": _ibdiag.reading_of_row(row), "error": None, "read_at": now, "cmd": None})
    return out


def _executable(params):
    found = _read.find_executable(params.get("executable"))
    if not found:
        raise PhyModuleError(
            "%s not found: install NVIDIA MFT (mlxlink) or mstflint (mstlink), or set executable to its path"
            % (params.get("executable") or "neither mlxlink nor mstlink")
        )
    return found


def _summary(ports, cleared, clear_asked, check_mode):
    bad = [p for p in ports if p["error"]]
    text = "%d port%s read" % (len(ports), "" if len(ports) == 1 else "s")
    if bad:
        text += ", %d unreadable (%s)" % (len(bad), bad[0]["error"])
    if cleared:
        text += "; PHY counters and FEC histograms CLEARED after the read (clear: true)"
    elif clear_asked and check_mode:
        text += "; check mode: the counters would be cleared (clear: true), they were not"
    else:
        text += "; no counter was cleared"
    return text


def run(params, check_mode=False, now=None, runner=None):
    """The ib_phy result: {changed, ports, cleared, clear_errors, executable, msg}."""
    now = time.time() if now is None else now
    ends = []
    if params.get("host_ports", True):
        if not os.path.isdir(params.get("sysfs_root") or "/sys"):
            raise PhyModuleError(
                "sysfs_root %s is not a directory: point it at /sys or a fixture tree" % params["sysfs_root"]
            )
        ends += host_ends(params.get("sysfs_root") or "/sys", params.get("devices"), params.get("host"))
    ends += switch_ends(params.get("switch_ports"))
    ports, executable = [], None
    kwargs = dict(timeout=params.get("timeout", 30), parallel=params.get("parallel", 8))
    if runner is not None:
        kwargs["runner"] = runner
    if ends:
        executable = _executable(params)
        ports = _read.read_ends(ends, executable, histogram=params.get("histogram", True), **kwargs)
    if params.get("net_dump_ext"):
        ports += net_dump_ports(params["net_dump_ext"], now)
    db_csv_unread = None
    if params.get("db_csv"):
        found, db_csv_unread = db_csv_ports(params["db_csv"], now)
        ports += found
    log = ber_check(params["ibdiagnet_log"]) if params.get("ibdiagnet_log") else None
    clear_errors, cleared = [], False
    if params.get("clear") and ends and not check_mode:
        clear_errors = _read.clear_ends(ends, executable, **kwargs)
        cleared = True
    return {
        "changed": bool(params.get("clear") and ends),
        "ports": ports,
        "cleared": cleared,
        "clear_errors": clear_errors,
        "executable": executable,
        "db_csv_unread": db_csv_unread,
        "ber_check": log,
        "msg": _summary(ports, cleared, params.get("clear"), check_mode),
    }
