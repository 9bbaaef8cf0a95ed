#!/usr/bin/env python3
"""nccl-tests simulator for the ibtune.fabric lab (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
alltoall_perf, ...: the program name, argv[0], picks the collective).

Lab code only: installed on lab and Slurm-scenario nodes as /opt/ibtune-lab/bin/<collective>_perf, never shipped
in plugins/ or roles/. Python 3 standard library only.

What is real: nccl-tests' arguments (-b -e -f -g -n -w -a -c ...; -J is accepted and ignored: no JSON file),
its table and header exactly as nccl-tests
2.19.6 prints them (src/util.cu: writeDeviceReport, writeResultHeader, writeBenchmarkLine*, writeResultFooter),
and NCCL's INFO lines as NCCL 2.28.9 prints them (host:pid:tid [dev] NCCL INFO ...). It runs as one rank of an
MPI build: the rank comes from the launcher (srun --mpi=pmix: PMIX_RANK; --mpi=pmi2: PMI_RANK/PMI_SIZE; Open MPI:
OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK). Under srun without a PMI (no PMIX_RANK, PMI_RANK or PMI_FD) every task is
a singleton rank 0 of 1, as a real MPI program is: each prints its own one-rank table.

Each rank decides on its own node, as NCCL does: it reads the NCCL variables from its environment, then
~/.nccl.conf, then /etc/nccl.conf (NCCL_DEBUG, NCCL_IB_HCA with its = ^ and prefix rules, NCCL_IB_DISABLE), its
ACTIVE RDMA ports from the node's fixture sysfs tree (IBTUNE_LAB_SYSFS, default /var/lib/ibtune-lab/sys), and
the lab fabric map (IBTUNE_LAB_FABRIC, default /etc/ibtune-lab/fabric.json), section "nccl":

    "nccl": {
      "nic_efficiency": 0.95,           # busbw per NIC = port rate / 8 x this (400G: 47.5 GB/s)
      "nvlink_busbw_gbs": 360.0,        # one node: every GPU over NVLink
      "socket_busbw_gbs": 2.0,          # every rank on NET/Socket
      "slow_nodes": {"node3": 0.5},     # a node's NICs carry this fraction
      "slow_rails": {"node2/mlx5_1": 0.4},
      "socket_fallback": ["node4"],     # NET/IB : No device found there (driver not loaded)
      "no_gdr": ["node2"],              # its NET channels without GDRDMA
      "connect_fail_after_s": 3.0,      # a group mixing IB and Socket ranks fails this long after it starts
      "gpu": "NVIDIA H100 80GB HBM3", "nccl_version": "2.28.9+cuda13.0"
    }

Rank 0 prints the table: the ring's busbw is the slowest NIC's (every channel moves in step), times the NICs the
ranks drive (min(ranks per node, NICs chosen)); one node is NVLink; any rank on Socket makes it Socket; a group
mixing IB and Socket ranks cannot connect (a real NCCL mixing them fails): every rank prints NCCL's WARN and rank
0 nccl-tests' failure line, exit code 3. A rank's host is IBTUNE_LAB_NODE, else /etc/ibtune-lab/node, else the
host name; rank 0 learns every rank's host from IBTUNE_LAB_RANK_HOSTS (the lab's mpirun sets it) or Slurm's
SLURM_STEP_NODELIST and SLURM_STEP_TASKS_PER_NODE. No randomness: the same map gives the same table.
"""

import argparse
import json
import math
import os
import re
import socket
import sys
import time

NCCL_VERSION = "2.28.9+cuda13.0"
TESTS_VERSION = "2.19.6"
FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
REDOP = {"all_reduce": "sum", "reduce_scatter": "sum", "reduce": "sum"}
ELEMENT = 4  # float
# A group mixing IB and Socket ranks fails this long after it starts (the fabric map's "connect_fail_after_s").
CONNECT_FAIL_AFTER_S = 3.0
FAILURE = (
    "%s: Test NCCL failure common.cu:1119 'remote process exited or there was a network error / '\n"
    " .. %s pid %d: Test failure common.cu:1017\n"
)
HEADER = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s "


def parse_size(text):
    match = re.match(r"^(\d+)([KMGT]?)$", str(text).upper())
    if not match:
        raise SystemExit("invalid size specified for '%s'" % text)
    return int(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match.group(2)]


def parse_args(argv):
    parser = argparse.ArgumentParser(add_help=False)
    for flag, name, default in (
        ("-b", "minbytes", "32M"),
        ("-e", "maxbytes", "32M"),
        ("-f", "stepfactor", "1"),
        ("-i", "stepbytes", "1M"),
        ("-g", "ngpus", "1"),
        ("-t", "nthreads", "1"),
        ("-n", "iters", "20"),
        ("-w", "warmup", "1"),
        ("-c", "check", "1"),
        ("-a", "average", "1"),
        ("-J", "json", None),
        ("-d", "datatype", "float"),
        ("-o", "op", "sum"),
        ("-G", "graph", "0"),
        ("-m", "agg", "1"),
    ):
        parser.add_argument(flag, dest=name, default=default)
    args, _unknown = parser.parse_known_args(argv)
    return args


def expand_nodelist(text):
    """Slurm's compressed host list ('n[1-3,5],login') as names."""
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text or ""):
        match = re.match(r"^(.*?)\[([^\]]*)\](.*)$", part)
        if not match:
            out.append(part)
            continue
        prefix, ranges, suffix = match.groups()
        for item in ranges.split(","):
            low, _sep, high = item.partition("-")
            for number in range(int(low), int(high or low) + 1):
                out.append("%s%0*d%s" % (prefix, len(low), number, suffix))
    return out


def expand_tasks(text, count):
    """SLURM_STEP_TASKS_PER_NODE ('2(x3),1') as one number per node."""
    out = []
    for item in (text or "").split(","):
        match = re.match(r"^(\d+)(?:\(x(\d+)\))?$", item.strip())
        if match:
            out += [int(match.group(1))] * int(match.group(2) or 1)
    return out or [1] * count


def pmi_of(env):
    """Which launcher interface handed this process its rank."""
    if "OMPI_COMM_WORLD_RANK" in env:
        return "Open MPI"
    if "PMIX_RANK" in env:
        return "PMIx"
    if "PMI_RANK" in env or "PMI_FD" in env:
        return "PMI-2"
    return "no PMI (singleton)"


def whoami(env):
    """(rank, nranks, local_rank, rank hosts or None) from the launcher's variables."""
    if "OMPI_COMM_WORLD_RANK" in env:
        rank, size = int(env["OMPI_COMM_WORLD_RANK"]), int(env["OMPI_COMM_WORLD_SIZE"])
        local = int(env.get("OMPI_COMM_WORLD_LOCAL_RANK", 0))
    elif "PMIX_RANK" in env or "PMI_RANK" in env or "PMI_FD" in env:
        rank = int(env.get("PMIX_RANK", env.get("PMI_RANK", env.get("SLURM_PROCID", 0))))
        size = int(env.get("PMI_SIZE", env.get("SLURM_NTASKS", 1)))
        local = int(env.get("SLURM_LOCALID", 0))
    else:
        return 0, 1, 0, None  # an MPI program with no PMI to talk to is a singleton
    hosts = None
    if env.get("IBTUNE_LAB_RANK_HOSTS"):
        hosts = env["IBTUNE_LAB_RANK_HOSTS"].split(",")
    elif env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST"):
        nodes = expand_nodelist(env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST"))
        tasks = expand_tasks(env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE"), len(nodes))
        hosts = [node for node, n in zip(nodes, tasks) for _i in range(n)]
    return rank, size, local, hosts


def my_host():
    if os.environ.get("IBTUNE_LAB_NODE"):
        return os.environ["IBTUNE_LAB_NODE"]
    try:
        with open("/etc/ibtune-lab/node") as handle:
            return handle.read().strip() or socket.gethostname()
    except OSError:
        return socket.gethostname().split(".")[0]


def read_conf(path):
    out = {}
    try:
        with open(path) as handle:
            for line in handle:
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    name, value = line.split("=", 1)
                    out.setdefault(name, value)
    except OSError:
        pass
    return out


def nccl_env(env):
    """The NCCL variables as NCCL sees them: the environment wins over ~/.nccl.conf, which wins over /etc/nccl.conf."""
    found = {}
    for source in (read_conf("/etc/nccl.conf"), read_conf(os.path.expanduser("~/.nccl.conf"))):
        found.update(source)
    found.update(dict((k, v) for k, v in env.items() if k.startswith("NCCL_")))
    return found


def active_ports(sysfs):
    ports = []
    base = os.path.join(sysfs, "class", "infiniband")
    for device in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        port_dir = os.path.join(base, device, "ports")
        for port in sorted(os.listdir(port_dir)) if os.path.isdir(port_dir) else []:
            state = _read(os.path.join(port_dir, port, "state"))
            if "ACTIVE" in state:
                rate = re.match(r"^\s*([\d.]+)", _read(os.path.join(port_dir, port, "rate")) or "0")
                ports.append((device, int(port), float(rate.group(1)) if rate else 0.0))
    return ports


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def hca_filter(ports, spec):
    """NCCL_IB_HCA as NCCL matches it: '=' exact list, '^' exclude, otherwise name prefixes; ':port' optional."""
    if not spec:
        return ports
    exclude, exact = spec.startswith("^"), False
    spec = spec.lstrip("^")
    if spec.startswith("="):
        exact, spec = True, spec[1:]
    wanted = []
    for item in spec.split(","):
        name, _sep, port = item.partition(":")
        wanted.append((name, int(port) if port else None))

    def match(device, port):
        for name, want_port in wanted:
            if (device == name if exact else device.startswith(name)) and want_port in (None, port):
                return True
        return False

    return [p for p in ports if match(p[0], p[1]) != exclude]


class Rank:
    """What this rank decides on its own node."""

    def __init__(self, rank, local, fabric, env):
        self.rank, self.local = rank, local
        self.host = my_host()
        self.pid = os.getpid()
        self.nccl = fabric.get("nccl") or {}
        self.env = nccl_env(env)
        self.debug = self.env.get("NCCL_DEBUG", "WARN").upper() in ("INFO", "TRACE")
        sysfs = env.get("IBTUNE_LAB_SYSFS", "/var/lib/ibtune-lab/sys")
        ports = [] if self.host in self.nccl.get("socket_fallback", []) else active_ports(sysfs)
        self.no_device = not ports
        self.ib_disabled = self.env.get("NCCL_IB_DISABLE", "0") not in ("0", "")
        self.ports = [] if self.ib_disabled else hca_filter(ports, self.env.get("NCCL_IB_HCA"))
        self.transport = "IB" if self.ports else "Socket"
        self.gdr = self.host not in self.nccl.get("no_gdr", [])

    # Each line flushed as it is written, as NCCL's debug log does (src/debug.cc: fprintf, then fflush): a rank
    # that srun --kill-on-bad-exit ends has still said what it did up to then.
    def info(self, text):
        if self.debug:
            sys.stdout.write("%s:%d:%d [%d] NCCL INFO %s\n" % (self.host, self.pid, self.pid, self.local, text))
            sys.stdout.flush()

    def warn(self, text):
        sys.stdout.write("%s:%d:%d [%d] NCCL WARN %s\n" % (self.host, self.pid, self.pid, self.local, text))
        sys.stdout.flush()

    def init_lines(self, nranks, version):
        self.info("Bootstrap: Using eth0:%s<0>" % _address())
        self.info("cudaDriverVersion 13000")
        self.info("NCCL version %s" % version)
        for name in sorted(self.env):
            if name != "NCCL_DEBUG" or self.debug:
                self.info("%s set by environment to %s" % (name, self.env[name]))
        self.info("NET/Plugin: Could not find: libnccl-net.so")
        if self.ib_disabled:
            pass
        elif self.no_device or not self.ports:
            self.info("NET/IB : No device found.")
            self.info("NET/IB : Using [RO]; OOB eth0:%s<0>" % _address())
            self.info("Failed to initialize NET plugin IB")
        else:
            devices = " ".join("[%d]%s:%d/IB" % (i, d, p) for i, (d, p, _r) in enumerate(self.ports))
            self.info("NET/IB : Using %s [RO]; OOB eth0:%s<0>" % (devices, _address()))
        if self.transport == "Socket":
            self.info("NET/Socket : Using [0]eth0:%s<0>" % _address())
        self.info("Using network %s" % self.transport)
        self.info(
            "ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x commId 0x5eed "
            "- Init START"
            % (0x2000000 + self.rank, self.rank, nranks, self.local, self.local, 0x18000 + self.local * 0x1000)
        )

    def channel_lines(self, inter_node, peer):
        if inter_node:
            path = "NET/IB/0" + ("/GDRDMA" if self.gdr else "") if self.transport == "IB" else "NET/Socket/0"
        else:
            path = "P2P/CUMEM/read"
        for channel in range(2):
            self.info(
                "Channel %02d/0 : %d[%d] -> %d[%d] [send] via %s" % (channel, self.rank, self.local, peer, 0, path)
            )
        self.info("Connected all rings, use ring PXN 0 GDR %d" % (1 if self.gdr and self.transport == "IB" else 0))
        self.info("ncclCommInitRankConfig comm 0x%x rank %d - Init COMPLETE" % (0x2000000 + self.rank, self.rank))


def _address():
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def peak_busbw(me, hosts, fabric):
    """(busbw GB/s at large sizes, transport): the slowest NIC of the ring times the NICs each node drives."""
    nccl = fabric.get("nccl") or {}
    nodes = sorted(set(hosts), key=hosts.index)
    if len(nodes) == 1:
        return float(nccl.get("nvlink_busbw_gbs", 360.0)), "NVLink"
    fallback = [h for h in nodes if h in nccl.get("socket_fallback", [])]
    if me.transport == "Socket" and not fallback:
        fallback = nodes
    if fallback:
        return float(nccl.get("socket_busbw_gbs", 2.0)), "Socket" if len(fallback) == len(nodes) else "mixed"
    per_node = min(hosts.count(h) for h in nodes)
    nics = max(1, min(per_node, len(me.ports)))
    efficiency = float(nccl.get("nic_efficiency", 0.95))
    factors = [float(nccl.get("slow_nodes", {}).get(h, 1.0)) for h in nodes]
    factors += [
        float(nccl.get("slow_rails", {}).get("%s/%s" % (h, d), 1.0)) for h in nodes for d, _p, _r in me.ports[:nics]
    ]
    slowest = min(factors)
    gdr = 1.0 if all(h not in nccl.get("no_gdr", []) for h in nodes) else 0.85
    rate = min(r for _d, _p, r in me.ports[:nics]) / 8.0
    return round(rate * efficiency * nics * slowest * gdr, 3), "IB"


def sizes_of(args):
    low, high = parse_size(args.minbytes), parse_size(args.maxbytes)
    factor = int(args.stepfactor)
    size, out = low, []
    while size <= high:
        out.append(size)
        size = size * factor if factor > 1 else size + parse_size(args.stepbytes)
    return out


def fmt(value, width):
    for spec in ("%*.2f", "%*.1f", "%*.0f"):
        text = spec % (width, value)
        if len(text) <= width:
            return text
    return "%*.1e" % (width, value)


def table(collective, args, hosts, busbw_peak, gpu, rank_pid):
    """nccl-tests' stdout for rank 0, as util.cu prints it."""
    n = len(hosts)
    factor = FACTORS[collective](n)
    lines = [
        "# nccl-tests version %s nccl-headers=22809 nccl-library=22809" % TESTS_VERSION,
        "# Collective test starting: %s_perf" % collective,
        "# nThread %s nGpus %s minBytes %d maxBytes %d step: %s(factor) warmup iters: %s iters: %s agg iters: %s "
        "validation: %s graph: %s unalign: 0"
        % (args.nthreads, args.ngpus, parse_size(args.minbytes), parse_size(args.maxbytes), args.stepfactor,
           args.warmup, args.iters, args.agg, args.check, args.graph),
        "#",
        "# Using devices",
    ]  # fmt: skip
    local = {}
    for rank, host in enumerate(hosts):
        device = local.get(host, 0)
        local[host] = device + 1
        lines.append(
            "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
            % (rank, 0, rank_pid + rank, host, device, 0, 0x18 + device * 0x10, 0, gpu)
        )
    lines += [
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
        % ("", "", "", "", ""),
        HEADER % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                  "busbw", "#wrong"),
        HEADER % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""),
    ]  # fmt: skip
    total = 0.0
    rows = 0
    for size in sizes_of(args):
        count = (
            size // ELEMENT if collective not in ("all_gather", "reduce_scatter", "alltoall") else size // ELEMENT // n
        )
        busbw = _busbw(size, busbw_peak, n) if factor > 0 else 0.0
        algbw = busbw / factor if factor > 0 else size / _latency_us(n) / 1e3
        time_us = size / (algbw * 1e3) if algbw > 0 else _latency_us(n)
        in_busbw = busbw * 1.002
        cells = []
        for t, a, b in ((time_us, algbw, busbw), (time_us / 1.002, algbw * 1.002, in_busbw)):
            cells.append("  %7s  %6s  %6s  %6g" % (fmt(t, 7), fmt(a, 6), fmt(b, 6), 0))
        lines.append(
            "%12d  %12d  %8s  %6s  %6s" % (size, count, "float", REDOP.get(collective, "none"), "%6i" % -1)
            + "".join(cells)
        )
        total += busbw + in_busbw
        rows += 2
    lines += [
        "# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
        "# %-20s : %g " % ("Avg bus bandwidth", round(total / rows, 3) if rows else 0),
        "#",
        "# Collective test concluded: %s_perf" % collective,
        "#",
    ]
    return "\n".join(lines) + "\n"


def _latency_us(n):
    return 20.0 + 4.0 * math.log2(max(n, 2))


def _busbw(size, peak, n):
    """busbw at one size: the latency term drags small sizes down (time = latency + bytes / peak)."""
    seconds = _latency_us(n) * 1e-6 + size / (peak * 1e9)
    return size / seconds / 1e9


def load_fabric(env):
    try:
        with open(env.get("IBTUNE_LAB_FABRIC", "/etc/ibtune-lab/fabric.json")) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def main(argv=None):
    env = dict(os.environ)
    collective = os.path.basename(sys.argv[0]).replace("_perf", "")
    if collective not in FACTORS:
        sys.stderr.write("nccl-tests simulator: no collective %r (program name %s)\n" % (collective, sys.argv[0]))
        return 2
    args = parse_args(sys.argv[1:] if argv is None else argv)
    fabric = load_fabric(env)
    nccl = fabric.get("nccl") or {}
    rank, nranks, local, hosts = whoami(env)
    me = Rank(rank, local, fabric, env)
    hosts = hosts if hosts and len(hosts) == nranks else [me.host] * nranks
    version = nccl.get("nccl_version", NCCL_VERSION)
    # not an nccl-tests line (parsers skip it): which interface gave the rank, for the lab's own assertions
    sys.stdout.write(
        "ibtune-lab nccl-tests simulator: rank %d of %d via %s on %s\n" % (rank, nranks, pmi_of(env), me.host)
    )
    me.init_lines(nranks, version)
    peak, transport = peak_busbw(me, hosts, fabric)
    inter_node = len(set(hosts)) > 1
    if transport == "mixed" or (inter_node and (me.transport == "Socket") != (transport == "Socket")):
        # A real NCCL fails this in the connection setup, which waits for the peer: no rank ends before its peers
        # have initialised and logged. Without the wait, the rank that ends first made srun --kill-on-bad-exit end
        # a peer that had not yet started, and that peer was named for logging nothing (molecule slurm, 2026-12-04).
        time.sleep(float(nccl.get("connect_fail_after_s", CONNECT_FAIL_AFTER_S)))
        me.warn("NET/Socket : peer %s is not on the same network transport" % hosts[(rank + 1) % nranks])
        if rank == 0:
            sys.stdout.write(FAILURE % (me.host, me.host, me.pid))
        return 3
    me.channel_lines(inter_node, (rank + 1) % nranks)
    if rank == 0:
        sys.stdout.write(table(collective, args, hosts, peak, nccl.get("gpu", "NVIDIA H100 80GB HBM3"), me.pid))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
