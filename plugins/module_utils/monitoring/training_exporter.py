# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training exporter: a small service next to node_exporter that watches training itself.

Every ``interval`` seconds it writes two files into node_exporter's textfile directory (atomically):
- ``ibtune_nccl_inspector.prom``: the NCCL Inspector files under ``dump_dir`` (``<host>-pid<pid>.log``, also one
  directory level down, e.g. ``<dump_dir>/<slurm job id>/``) turned into per-job metrics (inspector.py);
- ``ibtune_pcie.prom``: PCIe saturation per GPU (NVML samples every ``sample_interval`` seconds) and per RDMA NIC
  (sysfs data counters), pcie.py.
Files are read incrementally (complete lines only); a file whose process ended is read to its end, and once its
job expired it is removed (``remove_files``). A live file larger than ``punch_bytes`` gets the part already read
punched out (fallocate PUNCH_HOLE: the writer's offsets stay valid, the disk space is freed), so a long job's log
cannot fill the disk. The role fabric_monitoring installs this module with inspector.py, pcie.py and the host
sysfs helpers beside it and writes the JSON config it reads. This file is the I/O; the decisions are in those.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import json
import os
import socket
import sys
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs as _sysfs
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring import inspector as _inspector
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring import pcie as _pcie

DEFAULT_CONFIG_PATH = "/etc/ibtune/training-exporter.json"
DEFAULTS = {
    "textfile_dir": "/var/lib/prometheus/node-exporter",
    "interval": 15.0,
    "inspector": True,
    "dump_dir": "/var/lib/ibtune/nccl-inspector",
    "max_jobs": _inspector.DEFAULTS["max_jobs"],
    "max_shapes": _inspector.DEFAULTS["max_shapes"],
    "expire_seconds": _inspector.DEFAULTS["expire_seconds"],
    "remove_files": True,
    "punch_bytes": 64 << 20,
    "max_read_bytes": 256 << 20,
    "gpu_source": "nvml",
    "sample_interval": 1.0,
    "nics": True,
    "sysfs_root": "/sys",
}
INSPECTOR_FILE = "ibtune_nccl_inspector.prom"
PCIE_FILE = "ibtune_pcie.prom"
GPU_SOURCES = ("nvml", "dcgm", "none")
_FALLOC_PUNCH = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
_PAGE = 4096


class ConfigError(ValueError):
    pass


def normalise_config(raw, source="the config"):
    """``raw`` merged over DEFAULTS and checked; ConfigError names the bad key, its value and the fix."""
    if not isinstance(raw, dict):
        raise ConfigError("%s must be a JSON object" % source)
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ConfigError(
            "%s: unknown key(s) %s (known: %s)" % (source, ", ".join(unknown), ", ".join(sorted(DEFAULTS)))
        )
    config = dict(DEFAULTS, **raw)
    if config["gpu_source"] not in GPU_SOURCES:
        raise ConfigError("%s: gpu_source=%r is not one of %s" % (source, config["gpu_source"], ", ".join(GPU_SOURCES)))
    _check_value_types(config, source)
    if config["sample_interval"] > config["interval"]:
        raise ConfigError(
            "%s: sample_interval=%r is longer than interval=%r: sample at least once per window"
            % (source, config["sample_interval"], config["interval"])
        )
    return config


def _check_value_types(config, source):
    """Seconds positive, counts positive integers, paths absolute; ConfigError names the first key that is not."""
    for key in ("interval", "sample_interval", "expire_seconds"):
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError("%s: %s=%r must be a positive number of seconds" % (source, key, value))
    for key in ("max_jobs", "max_shapes", "punch_bytes", "max_read_bytes"):
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError("%s: %s=%r must be a positive integer" % (source, key, value))
    for key in ("textfile_dir", "dump_dir", "sysfs_root"):
        if not isinstance(config[key], str) or not config[key].startswith("/"):
            raise ConfigError("%s: %s=%r must be an absolute path" % (source, key, config[key]))


def load_config(path):
    """The JSON config file at ``path``, normalised (normalise_config)."""
    try:
        with open(path) as handle:
            raw = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ConfigError("cannot read %s: %s" % (path, exc))
    return normalise_config(raw, path)


def write_atomic(directory, name, text):
    """Write a textfile through a temporary file and rename: node_exporter never reads half of it."""
    _files.write_text(os.path.join(directory, name), text, mode=0o644, dir_mode=None)


def punch_hole(path, length):
    """Free the first ``length`` bytes (rounded down to a page) of a file a writer still appends to; True when
    the filesystem did it (ext4, xfs, tmpfs do; others return EOPNOTSUPP)."""
    length -= length % _PAGE
    if length <= 0:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_WRONLY)
    try:
        return libc.fallocate(fd, _FALLOC_PUNCH, ctypes.c_longlong(0), ctypes.c_longlong(length)) == 0
    finally:
        os.close(fd)


def read_environ(pid):
    """A process's environment as a dict; {} when it is gone or not ours to read."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0") if b"=" in item)
    return {name: value for name, _unused, value in pairs}


def pid_alive(pid):
    return os.path.exists("/proc/%d" % pid)


class InspectorTail:
    """Follows the Inspector files under a dump directory and feeds an Aggregator."""

    def __init__(self, config, hostname=None, environ_of=read_environ, alive=pid_alive):
        self.config = config
        self.root = config["dump_dir"]
        self.hostname = hostname or socket.gethostname()
        self.environ_of = environ_of
        self.alive = alive
        self.agg = _inspector.Aggregator(config["max_jobs"], config["max_shapes"], config["expire_seconds"])
        self.files = {}

    def _candidates(self):
        """Relative paths of Inspector files in the dump dir and one level below."""
        found = []
        for top in self._listdir(self.root):
            path = os.path.join(self.root, top)
            if os.path.isdir(path):
                found += [top + "/" + name for name in self._listdir(path)]
            else:
                found.append(top)
        return sorted(p for p in found if _inspector.file_identity(p) and os.path.isfile(os.path.join(self.root, p)))

    @staticmethod
    def _listdir(path):
        try:
            return os.listdir(path)
        except OSError:
            return []

    def _state(self, relpath, stat, now):
        state = self.files.get(relpath)
        if state is None or state["ino"] != stat.st_ino or stat.st_size < state["offset"]:
            host, pid = _inspector.file_identity(relpath)
            local = host == self.hostname
            state = {
                "ino": stat.st_ino,
                "offset": 0,
                "rest": b"",
                "discard": False,
                "pid": pid,
                "local": local,
                "job": _inspector.job_identity(relpath, self.environ_of(pid) if local else None),
                "grown": now,
                "punched": 0,
            }
            self.files[relpath] = state
        return state

    def _running(self, state, now):
        """True/False when this node can tell whether the writer runs; else whether it wrote lately."""
        if state["local"]:
            return self.alive(state["pid"])
        return now - state["grown"] <= self.config["expire_seconds"]

    def _consume(self, relpath, state, data, final):
        lines, rest = _inspector.split_lines(state["rest"] + data, final)
        if state["discard"] and lines:
            lines, state["discard"] = lines[1:], False  # the tail of a line already refused as too long
        for line in lines:
            try:
                record = _inspector.parse_line(line)
            except _inspector.Skip as skip:
                self.agg.skip(skip.reason)
                continue
            self.agg.feed(relpath, state["job"], record, time.time())
        if len(rest) > _inspector.MAX_LINE_BYTES:
            self.agg.skip("too_long")
            rest, state["discard"] = b"", True
        state["rest"] = rest

    def _read(self, relpath, state, size, running):
        path = os.path.join(self.root, relpath)
        with open(path, "rb") as handle:
            offset = state["offset"]
            if offset == 0:
                offset = self._first_data(handle, size)
            handle.seek(offset)
            data = handle.read(min(size - offset, self.config["max_read_bytes"]))
        state["offset"] = offset + len(data)
        self._consume(relpath, state, data, final=not running and state["offset"] >= size)

    @staticmethod
    def _first_data(handle, size):
        """Skip a punched-out start of a file (a hole reads as NUL bytes): the first data, or 0."""
        try:
            return min(os.lseek(handle.fileno(), 0, os.SEEK_DATA), size)
        except (OSError, AttributeError):
            return 0

    def _rotate(self, relpath, state, running):
        due = running and state["offset"] - state["punched"] >= self.config["punch_bytes"]
        if due and punch_hole(os.path.join(self.root, relpath), state["offset"]):
            state["punched"] = state["offset"] - state["offset"] % _PAGE

    def poll(self, now):
        """Read what every file gained; keep jobs alive; expire dead ones; remove their files."""
        alive_jobs = set()
        for relpath in self._candidates():
            try:
                stat = os.stat(os.path.join(self.root, relpath))
                state = self._state(relpath, stat, now)
                if stat.st_size > state["offset"]:
                    state["grown"] = now
                running = self._running(state, now)
                if stat.st_size > state["offset"] or (not running and state["rest"]):
                    self._read(relpath, state, stat.st_size, running)
                self._rotate(relpath, state, running)
            except OSError:
                continue  # removed or unreadable between listing and reading: next pass
            if running:
                alive_jobs.add(state["job"])
                self.agg.touch(state["job"], relpath, now)
        expired = self.agg.expire(now, alive_jobs)
        self._forget(expired)
        return expired

    def _forget(self, expired):
        for relpath, state in list(self.files.items()):
            if state["job"] not in expired:
                continue
            del self.files[relpath]
            if self.config["remove_files"]:
                try:
                    os.unlink(os.path.join(self.root, relpath))
                except OSError:
                    pass

    def render(self):
        return _inspector.render(self.agg)


class Nvml:
    """NVML through nvidia-ml-py (``import pynvml``): static link facts and throughput samples per GPU."""

    def __init__(self, module=None):
        if module is None:
            import pynvml as module  # noqa: PLC0415 - only GPU nodes have it
        self.nvml = module
        self.nvml.nvmlInit()
        count = self.nvml.nvmlDeviceGetCount()
        self.handles = [self.nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]

    @staticmethod
    def _text(value):
        return value.decode() if isinstance(value, bytes) else value

    def static(self):
        out = []
        for index, handle in enumerate(self.handles):
            out.append(
                {
                    "index": index,
                    "uuid": self._text(self.nvml.nvmlDeviceGetUUID(handle)),
                    "name": self._text(self.nvml.nvmlDeviceGetName(handle)),
                    "pci_bus_id": self._text(self.nvml.nvmlDeviceGetPciInfo(handle).busId),
                    "max_gen": self.nvml.nvmlDeviceGetMaxPcieLinkGeneration(handle),
                    "max_width": self.nvml.nvmlDeviceGetMaxPcieLinkWidth(handle),
                }
            )
        return out

    def sample(self):
        out = []
        for handle in self.handles:
            out.append(
                {
                    "t": time.time(),
                    "gen": self.nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle),
                    "width": self.nvml.nvmlDeviceGetCurrPcieLinkWidth(handle),
                    "tx_kbps": self.nvml.nvmlDeviceGetPcieThroughput(handle, self.nvml.NVML_PCIE_UTIL_TX_BYTES),
                    "rx_kbps": self.nvml.nvmlDeviceGetPcieThroughput(handle, self.nvml.NVML_PCIE_UTIL_RX_BYTES),
                }
            )
        return out


def nic_static(sysfs_root):
    """{device: {pcie, pci_address, hca_type, port_rates_gbps}} of every RDMA device."""
    out = {}
    for device in _sysfs.list_devices(sysfs_root):
        dev_dir = os.path.join(_sysfs.infiniband_class_dir(sysfs_root), device)
        ports = _sysfs.list_ports(sysfs_root, device)
        out[device] = {
            "pcie": _sysfs.read_pcie(os.path.join(dev_dir, "device")),
            "pci_address": os.path.basename(os.path.realpath(os.path.join(dev_dir, "device"))),
            "hca_type": _sysfs.read_text(os.path.join(dev_dir, "hca_type")) or "",
            "port_rates_gbps": [_sysfs.read_port_rate_gbps(sysfs_root, device, p) for p in ports],
        }
    return out


def nic_counters(sysfs_root):
    """{device: {port: {port_xmit_data, port_rcv_data}}} (4-byte words; None when unreadable)."""
    out = {}
    for device in _sysfs.list_devices(sysfs_root):
        out[device] = {}
        for port in _sysfs.list_ports(sysfs_root, device):
            counters = os.path.join(_sysfs.port_dir(sysfs_root, device, port), "counters")
            out[device][str(port)] = {
                name: _sysfs.parse_int(_sysfs.read_text(os.path.join(counters, name)))
                for name in ("port_xmit_data", "port_rcv_data")
            }
    return out


class PcieWatch:
    """GPU samples over a window plus NIC counter deltas between windows -> pcie.render()."""

    def __init__(self, config, nvml_factory=Nvml):
        self.config = config
        self.nvml, self.gpu_static, self.samples = None, [], []
        self.sources = {}
        if config["gpu_source"] != "none":
            try:
                self.nvml = nvml_factory()
                self.gpu_static = self.nvml.static()
                self.sources["nvml"] = True
            except Exception as exc:  # noqa: BLE001 - pynvml missing, no driver, no GPU: say so, keep going
                sys.stderr.write("ibtune-training-exporter: NVML unavailable (%s): no GPU PCIe metrics\n" % exc)
                self.sources["nvml"] = False
        self.nics = nic_static(config["sysfs_root"]) if config["nics"] else {}
        if config["nics"]:
            self.sources["sysfs"] = True
        self.before = (time.time(), nic_counters(config["sysfs_root"])) if self.nics else None

    def sample(self):
        if self.nvml is None or self.config["gpu_source"] != "nvml":
            return
        try:
            self.samples.append(self.nvml.sample())
            self.sources["nvml"] = True
        except Exception as exc:  # noqa: BLE001 - a GPU fell off the bus mid-window: report the source down
            sys.stderr.write("ibtune-training-exporter: NVML sample failed: %s\n" % exc)
            self.sources["nvml"] = False

    def _gpu_records(self):
        records = []
        for static in self.gpu_static:
            samples = [round_[static["index"]] for round_ in self.samples if len(round_) > static["index"]]
            records.append(_pcie.gpu_window(static, samples))
        return records

    def _nic_records(self):
        if not self.nics:
            return []
        now, after = time.time(), nic_counters(self.config["sysfs_root"])
        then, before = self.before
        self.before = (now, after)
        return [
            _pcie.nic_window(dev, self.nics[dev], before.get(dev, {}), after.get(dev, {}), now - then)
            for dev in sorted(self.nics)
            if dev in after
        ]

    def render(self):
        records = self._gpu_records() + self._nic_records()
        self.samples = []
        return _pcie.render(records, self.sources)


def run_window(config, tail, watch, seconds):
    """Sample for ``seconds``, then write both textfiles."""
    end = time.time() + seconds
    while True:
        if watch is not None:
            watch.sample()
        left = end - time.time()
        if left <= 0:
            break
        time.sleep(min(config["sample_interval"], left))
    if tail is not None:
        tail.poll(time.time())
        write_atomic(config["textfile_dir"], INSPECTOR_FILE, tail.render())
    if watch is not None:
        write_atomic(config["textfile_dir"], PCIE_FILE, watch.render())


USAGE = "usage: ibtune-training-exporter [--config PATH] [--once] [--window SECONDS]"


def _parse_args(argv):
    args = {"config": DEFAULT_CONFIG_PATH, "once": False, "window": None}
    while argv:
        arg = argv.pop(0)
        if arg == "--once":
            args["once"] = True
        elif arg in ("--config", "--window") and argv:
            args[arg[2:]] = argv.pop(0)
        else:
            raise ConfigError(USAGE)
    return args


def main(argv=None):
    """Run until stopped (systemd), or one window with --once; exit 2 on a bad config."""
    try:
        args = _parse_args(list(sys.argv[1:] if argv is None else argv))
        config = load_config(args["config"])
        window = float(args["window"] or config["interval"])
    except (ConfigError, ValueError) as exc:
        sys.stderr.write("ibtune-training-exporter: %s\n" % exc)
        return 2
    tail = InspectorTail(config) if config["inspector"] else None
    watch = PcieWatch(config) if config["gpu_source"] != "none" or config["nics"] else None
    while True:
        run_window(config, tail, watch, window)
        if args["once"]:
            return 0
