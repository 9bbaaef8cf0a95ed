#!/usr/bin/env python3
"""perftest simulator for the ibtune.fabric lab (ib_write_bw / ib_read_bw / ib_send_bw and the latency
tools ib_write_lat / ib_read_lat / ib_send_lat, chosen by the program name, argv[0]).

Lab code only: installed in lab containers as /opt/ibtune-lab/bin/ib_write_bw (plus ib_read_bw,
ib_send_bw, ib_write_lat, ib_read_lat and ib_send_lat links), never shipped in plugins/ or roles/.
Python 3 standard library only.

Only the NIC is simulated. Everything else is real:
- perftest's arguments are parsed (unknown ones tolerated, as the real tools mostly do);
- server mode (no host argument) binds the -p TCP port, prints perftest's banner, accepts ONE client and
  exits; a busy port prints "Couldn't listen to port N" and exits 1;
- client mode tries connect() ONCE, like perftest: "Couldn't connect to host:port" and exit 1 when no
  server listens, so a wrapper has to retry;
- the two processes exchange a handshake over that real TCP connection (node names, devices, port
  rates), both sleep -D seconds, and both print perftest's text report (Gb/sec with --report_gbits,
  MB/sec without) and, with --out_json, write the --out_json_file document.

The bandwidth of a run comes from the lab fabric map (default /etc/ibtune-lab/fabric.json), decided by
the server and sent to the client, so both ends print the same figure:

    {
      "default_fraction": 0.98,                 # of the slower end's port rate (sysfs ports/<n>/rate)
      "links": {"node2/mlx5_0<->node3/mlx5_0": 180.0,   # per link (either order), Gb/s one way
                "node1<->node4": 300.0},                # every rail between two nodes
      "ports": {"node2/mlx5_1": 200.0},         # a degraded port caps every link through it
      "counter_bumps": {"node4": {"mlx5_1:1": {"symbol_error": 5}}},  # raised during each run on that port
      "dead_servers": ["node3"],                # server mode never listens there (sleeps until killed)
      "server_start_delay": {"node2": 1.5},     # seconds before the server listens
      "unit": "MB/sec",                         # console unit without --report_gbits (or "MiB/sec")
      "default_latency_us": 1.9,                # typical latency of a 2-byte message (the *_lat tools)
      "latency_us": {"node2/mlx5_0<->node3/mlx5_0": 9.0},   # per link (either order) or "nodeA<->nodeB"
      "slow_latency": {"node4/mlx5_1": 9.0},    # a port (or a whole "node"): its links are this slow
      "cables": {"lab-leaf1/7": 0.45},          # switch side (the lab subnet): every path through that
                                                # cable (either end's "switch/port") gets that fraction
      "switch_counter_bumps": {"lab-leaf2/1": {"SymbolErrorCounter": 7}}  # per flow through that port
    }

The lab subnet (tests/lab/subnet/): when a lab fabric agent is configured (IBTUNE_LAB_AGENT, else the
file /etc/ibtune-lab/agent, "host:port"), the server of a bandwidth run sends it both ends' node GUIDs
(the client's comes in the handshake) and gets back the path(s) OpenSM routed the data on and the
lowest `cables` fraction along them; half-way through the run it reports the bytes the run moves, and
the agent raises the switch ports' data counters along those paths (and the `switch_counter_bumps`).
No agent configured or reachable is not an error unless the map has `cables` or
`switch_counter_bumps`: then the run fails.

Latency tools print perftest's newest table (t_min ... 99.9% percentile, or with -D the t_avg / tps
average table); the typical latency of a size is the link's latency plus the size's serialisation
time at the link's bandwidth, the same for write, read and send. ib_read_lat's server prints no table,
as the real one (only its client posts reads). Bidirectional runs (-b) report twice the one-way
figure. No randomness: the same map gives the same numbers. The node's own name is IBTUNE_LAB_NODE,
else /etc/ibtune-lab/node, else the host name; its fixture sysfs tree is IBTUNE_LAB_SYSFS (default
/var/lib/ibtune-lab/sys); the map is IBTUNE_LAB_FABRIC.
"""

import hashlib
import json
import os
import socket
import sys
import time

DEFAULT_FABRIC = "/etc/ibtune-lab/fabric.json"
DEFAULT_SYSFS = "/var/lib/ibtune-lab/sys"
DEFAULT_NODE_FILE = "/etc/ibtune-lab/node"
DEFAULT_AGENT_FILE = "/etc/ibtune-lab/agent"
AGENT_TIMEOUT_S = 30.0
SWITCH_KEYS = ("cables", "switch_counter_bumps")
DEFAULT_TCP_PORT = 18515
DEFAULT_SIZE = 65536
DEFAULT_ITERS = 5000
QUICK_RUN_S = 0.3  # an iteration-count run (no -D) of 5000 x 64 KiB takes well under a second
HANDSHAKE_TIMEOUT_S = 30.0
SEPARATOR = "-" * 87
BANNER = (
    "************************************\n* Waiting for client to connect... *\n************************************"
)

# Counter bit widths (for saturation when a fault bumps one), as in the kernel's PMA counters: a copy of
# plugins/module_utils/host/counters.py COUNTER_WIDTHS (the simulator runs alone in the lab image), kept equal to
# it by tests/unit/lab/test_lab_tables.py.
COUNTER_WIDTHS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    "port_xmit_wait": 32,
}

DEFAULT_LAT_SIZE = 2  # perftest's DEF_SIZE_LAT
DEFAULT_LAT_ITERS = 1000  # DEF_ITERS
DEFAULT_LATENCY_US = 1.9
# perftest's latency table, src/perftest_parameters.h RESULT_FMT_LAT / REPORT_FMT_LAT (tabs included)
LAT_HEADER = (
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
    "99% percentile[usec]   99.9% percentile[usec] "
)
LAT_ROW = " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
LAT_DUR_HEADER = " #bytes        #iterations       t_avg[usec]    tps average"  # RESULT_FMT_LAT_DUR
LAT_DUR_ROW = " %-7d       %d            %-7.2f        %-7.2f"  # REPORT_FMT_LAT_DUR

TITLES = {"write": "RDMA_Write", "read": "RDMA_Read", "send": "Send"}
JSON_TITLES = {"write": "RDMA_Write_BW_Test", "read": "RDMA_Read_BW_Test", "send": "Send_BW_Test"}

# Options that take a value (short and long spellings), and what we keep of them.
_VALUE_OPTS = {
    "-d": "device",
    "--ib-dev": "device",
    "-i": "ib_port",
    "--ib-port": "ib_port",
    "-x": "gid_index",
    "--gid-index": "gid_index",
    "-q": "qps",
    "--qp": "qps",
    "-s": "size",
    "--size": "size",
    "-D": "duration",
    "--duration": "duration",
    "-p": "tcp_port",
    "--port": "tcp_port",
    "-n": "iters",
    "--iters": "iters",
    "-m": "mtu",
    "--mtu": "mtu",
    "-t": "tx_depth",
    "--tx-depth": "tx_depth",
    "-c": "connection",
    "--connection": "connection",
    "-S": "sl",
    "--sl": "sl",
    "-I": "inline",
    "--inline_size": "inline",
    "-Q": "cq_mod",
    "--cq-mod": "cq_mod",
    "-w": "limit_bw",
    "--limit_bw": "limit_bw",
    "-u": "qp_timeout",
    "--qp-timeout": "qp_timeout",
    "-o": "outs",
    "--outs": "outs",
    "-f": "margin",
    "--margin": "margin",
    "--use_cuda": "use_cuda",
    "--out_json_file": "out_json_file",
    "--tclass": "tclass",
}
_FLAG_OPTS = {
    "-a": "all_sizes",
    "--all": "all_sizes",
    "-b": "bidirectional",
    "--bidirectional": "bidirectional",
    "-F": "cpu_freq",
    "--CPU-freq": "cpu_freq",
    "--report_gbits": "report_gbits",
    "--out_json": "out_json",
    "-R": "rdma_cm",
    "--rdma_cm": "rdma_cm",
    "-h": "help",
    "--help": "help",
    "-V": "version",
    "--version": "version",
}
_INT_KEYS = ("ib_port", "gid_index", "qps", "size", "duration", "tcp_port", "iters", "mtu", "tx_depth")


class SimError(Exception):
    """A failure printed like perftest prints it (stderr lines), exit status 1."""

    def __init__(self, *lines):
        Exception.__init__(self, lines[0] if lines else "")
        self.lines = lines


def parse_args(argv, latency=False):
    """perftest's command line -> dict. Unknown options are tolerated (skipped).

    latency: the defaults of the *_lat tools (2-byte messages, 1000 iterations).
    """
    opts = {
        "device": None,
        "ib_port": 1,
        "gid_index": None,
        "qps": 1,
        "size": DEFAULT_LAT_SIZE if latency else DEFAULT_SIZE,
        "duration": None,
        "tcp_port": DEFAULT_TCP_PORT,
        "iters": DEFAULT_LAT_ITERS if latency else DEFAULT_ITERS,
        "mtu": None,
        "tx_depth": 128,
        "server": None,
        "use_cuda": None,
        "out_json_file": None,
        "unknown": [],
    }
    for flag in set(_FLAG_OPTS.values()):
        opts[flag] = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline_value = arg.partition("=")
        if name in _FLAG_OPTS and not eq:
            opts[_FLAG_OPTS[name]] = True
        elif name in _VALUE_OPTS:
            if eq:
                value = inline_value
            elif name == "--use_cuda":
                value = "0"
            else:
                i += 1
                if i >= len(argv):
                    raise SimError(" option %s requires an argument" % name)
                value = argv[i]
            opts[_VALUE_OPTS[name]] = value
        elif len(name) > 2 and name[0] == "-" and name[1] != "-" and name[:2] in _VALUE_OPTS:
            opts[_VALUE_OPTS[name[:2]]] = arg[2:]  # -d mlx5_0 written as -dmlx5_0
        elif arg.startswith("-"):
            opts["unknown"].append(arg)
        elif opts["server"] is None:
            opts["server"] = arg
        else:
            opts["unknown"].append(arg)
        i += 1
    for key in _INT_KEYS:
        if opts[key] is not None:
            try:
                opts[key] = int(opts[key])
            except (TypeError, ValueError):
                raise SimError(" Invalid value for %s: %s" % (key, opts[key]))
    return opts


def test_of(prog):
    base = os.path.basename(prog)
    for test in ("read", "send", "write"):
        if "_%s_" % test in base:
            return test
    return "write"


def is_latency_tool(prog):
    """ib_write_lat, ib_read_lat, ib_send_lat (any directory, any .py suffix)."""
    base = os.path.basename(prog)
    if base.endswith(".py"):
        base = base[:-3]
    return base.endswith("_lat")


# ---------------------------------------------------------------------------------------------
# the node: name, fabric map, fixture sysfs


def node_name():
    name = os.environ.get("IBTUNE_LAB_NODE")
    if name:
        return name
    try:
        with open(os.environ.get("IBTUNE_LAB_NODE_FILE", DEFAULT_NODE_FILE), encoding="utf-8") as handle:
            name = handle.read().strip()
    except OSError:
        name = ""
    return name or socket.gethostname()


def load_fabric():
    path = os.environ.get("IBTUNE_LAB_FABRIC", DEFAULT_FABRIC)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise SimError(" lab fabric map %s is not valid JSON: %s" % (path, exc))


def sysfs_root():
    return os.environ.get("IBTUNE_LAB_SYSFS", DEFAULT_SYSFS)


def _read(path, default=None):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return default


def port_dir(device, port):
    return os.path.join(sysfs_root(), "class", "infiniband", device, "ports", str(port))


def list_devices():
    try:
        return sorted(os.listdir(os.path.join(sysfs_root(), "class", "infiniband")))
    except OSError:
        return []


def port_info(device, port):
    """What the simulated HCA knows about its port, from the fixture tree; SimError as perftest fails."""
    devices = list_devices()
    if not devices:
        raise SimError(
            " Did not detect devices ",
            " If device exists, check if driver is up",
            " Unable to find the Infiniband/RoCE device",
        )
    if device is None:
        device = devices[0]  # perftest's default: the first device found
    if device not in devices:
        raise SimError(" IB device %s not found" % device, " Unable to find the Infiniband/RoCE device")
    pdir = port_dir(device, port)
    if not os.path.isdir(pdir):
        raise SimError(" Invalid IB port %s for device %s" % (port, device), " Couldn't get context for the device")
    rate_text = _read(os.path.join(pdir, "rate"), "0")
    try:
        rate = float(rate_text.split()[0])
    except (ValueError, IndexError):
        rate = 0.0
    state = _read(os.path.join(pdir, "state"), "")
    lid_text = _read(os.path.join(pdir, "lid"), "0x0")
    try:
        lid = int(lid_text, 16) if lid_text.lower().startswith("0x") else int(lid_text)
    except ValueError:
        lid = 0
    return {
        "device": device,
        "port": int(port),
        "rate_gbps": rate,
        "state": state,
        "link_layer": _read(os.path.join(pdir, "link_layer"), "InfiniBand"),
        "lid": lid,
        "node_guid": _read(os.path.join(sysfs_root(), "class", "infiniband", device, "node_guid"), ""),
    }


def bump_counters(fabric, node, device, port):
    """Apply this node's counter_bumps for device:port once (the fault 'errors climb during a run')."""
    bumps = ((fabric.get("counter_bumps") or {}).get(node) or {}).get("%s:%s" % (device, port)) or {}
    pdir = port_dir(device, port)
    for counter, amount in sorted(bumps.items()):
        for sub in ("counters", "hw_counters"):
            path = os.path.join(pdir, sub, counter)
            if os.path.exists(path):
                break
        else:
            path = os.path.join(pdir, "counters", counter)
        _locked_add(path, int(amount), COUNTER_WIDTHS.get(counter))


def _locked_add(path, amount, width):
    import fcntl

    lock_path = os.path.join("/tmp", "ibtune-lab-counters.lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            value = int(_read(path, "0") or 0)
        except ValueError:
            value = 0
        value += amount
        if width:
            value = min(value, (1 << width) - 1)
        tmp = path + ".sim-tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(str(value))  # as the fixture: no trailing newline
        os.replace(tmp, path)


def link_gbps(fabric, server, client, bidirectional):
    """One run's bandwidth in Gb/s: fraction x slower rate, lowered by link and port overrides."""
    fraction = float(fabric.get("default_fraction", 0.98))
    gbps = fraction * min(server["rate_gbps"], client["rate_gbps"])
    links = fabric.get("links") or {}
    ends = ("%s/%s" % (server["node"], server["device"]), "%s/%s" % (client["node"], client["device"]))
    for key in (
        "%s<->%s" % ends,
        "%s<->%s" % ends[::-1],
        "%s<->%s" % (server["node"], client["node"]),
        "%s<->%s" % (client["node"], server["node"]),
    ):
        if key in links:
            gbps = min(gbps, float(links[key]))
    ports = fabric.get("ports") or {}
    for end in ends:
        if end in ports:
            gbps = min(gbps, float(ports[end]))
    return gbps * (2 if bidirectional else 1)


# ---------------------------------------------------------------------------------------------
# the lab subnet's fabric agent (tests/lab/subnet/fabric_agent.py)


def agent_address():
    """(host, port) of the lab fabric agent, or None when none is configured."""
    text = os.environ.get("IBTUNE_LAB_AGENT")
    if text is None:
        text = _read(os.environ.get("IBTUNE_LAB_AGENT_FILE", DEFAULT_AGENT_FILE), "")
    text = (text or "").strip()
    if not text:
        return None
    host, _sep, port = text.rpartition(":")
    return host, int(port)


def agent_call(address, request):
    """One JSON-line request to the agent -> its reply (dict). OSError/ValueError when it cannot answer."""
    with socket.create_connection(address, timeout=AGENT_TIMEOUT_S) as conn:
        conn.sendall((json.dumps(request, sort_keys=True) + "\n").encode())
        line = conn.makefile("rb").readline()
    if not line:
        raise OSError("the agent closed the connection without a reply")
    return json.loads(line.decode())


class Subnet:
    """The server's view of the lab subnet for one run: route + fraction first, traffic after the run."""

    def __init__(self, fabric, address=None):
        self.fabric = fabric
        self.address = address
        self.needed = [key for key in SWITCH_KEYS if fabric.get(key)]
        self.paths = None

    def _call(self, request):
        where = "%s:%d" % self.address if self.address else "none configured"
        if self.address is None:
            reply = None
            problem = "no lab fabric agent is configured (IBTUNE_LAB_AGENT or %s)" % DEFAULT_AGENT_FILE
        else:
            try:
                reply = agent_call(self.address, request)
                problem = None
            except (OSError, ValueError) as exc:
                reply, problem = None, "the lab fabric agent %s cannot be reached (%s)" % (where, exc)
        if reply is None:
            if self.needed:
                raise SimError(
                    " %s but the fabric map uses %s: bring the lab subnet up with tests/lab/lab.yml"
                    % (problem, ", ".join(self.needed))
                )
            return None
        if not reply.get("ok"):
            raise SimError(" lab fabric agent %s: %s" % (where, reply.get("error")))
        return reply

    def route(self, local, remote, test, bidirectional):
        """The fraction of the port rate the cables along the route allow (None: no limit)."""
        if not remote.get("node_guid") or not local.get("node_guid"):
            if self.needed:
                raise SimError(" the handshake carries no node GUID: the fabric map's %s cannot apply" % self.needed)
            return None
        reply = self._call(
            {
                "op": "route",
                "server_guid": local["node_guid"],
                "client_guid": remote["node_guid"],
                "test": test,
                "bidirectional": bool(bidirectional),
            }
        )
        if reply is None:
            return None
        self.paths = reply["paths"]
        return reply.get("fraction")

    def traffic(self, nbytes):
        if self.paths:
            self._call({"op": "traffic", "paths": self.paths, "bytes": int(nbytes)})


def flow_bytes(rows, bidirectional):
    """Bytes one direction of a run moved: every size's iterations x size (halved with -b)."""
    total = sum(size * iterations for size, iterations, _peak, _avg, _rate in rows)
    return total // 2 if bidirectional else total


def _link_keys(server, client):
    ends = ("%s/%s" % (server["node"], server["device"]), "%s/%s" % (client["node"], client["device"]))
    pairs = (
        "%s<->%s" % ends,
        "%s<->%s" % ends[::-1],
        "%s<->%s" % (server["node"], client["node"]),
        "%s<->%s" % (client["node"], server["node"]),
    )
    return ends, pairs


def link_latency_us(fabric, server, client):
    """A link's typical latency in us for a 2-byte message: the default, raised by link and port faults."""
    latency = float(fabric.get("default_latency_us", DEFAULT_LATENCY_US))
    ends, pairs = _link_keys(server, client)
    links = fabric.get("latency_us") or {}
    for key in pairs:
        if key in links:
            latency = max(latency, float(links[key]))
    slow = fabric.get("slow_latency") or {}
    for key in ends + (server["node"], client["node"]):
        if key in slow:
            latency = max(latency, float(slow[key]))
    return latency


def lat_rows(opts, latency_us, gbps):
    """[(size, iterations, t_min, t_max, t_typical, t_avg, t_stdev, p99, p999)] or, with -D,
    [(size, iterations, t_avg, tps)]. Deterministic: the same link gives the same figures."""
    sizes = [2**k for k in range(1, 24)] if opts["all_sizes"] else [opts["size"]]
    rows = []
    for size in sizes:
        serialise = size * 8 / (max(gbps, 1.0) * 1e3)  # us at the link's Gb/s (1e3 bit per us per Gb/s)
        typical = latency_us + serialise
        if opts["duration"]:
            iterations = int(opts["duration"] * 1e6 / (2 * typical))  # ping-pong: two trips per exchange
            rows.append((size, iterations, typical * 1.01, iterations / float(opts["duration"])))
            continue
        rows.append(
            (
                size,
                opts["iters"],
                typical * 0.96,
                typical * 3.2 + 4.0,
                typical,
                typical * 1.02,
                0.05 * latency_us + 0.001 * serialise,
                typical * 1.07,
                typical * 1.9,
            )
        )
    return rows


def lat_table_lines(rows, duration):
    lines = []
    for row in rows:
        lines.append((LAT_DUR_ROW if duration else LAT_ROW) % row)
    lines.append(SEPARATOR)
    return lines


def lat_header_lines(opts, test, local, is_server):
    """The parameter block of perftest's latency tools (as in the corpus' ib_*_lat outputs)."""
    lines = [
        SEPARATOR,
        "                    %s Latency Test" % TITLES[test],
        " Dual-port       : OFF\t\tDevice         : %s" % local["device"],
        " Number of qps   : 1\t\tTransport type : IB",
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: OFF",
        " ibv_wr* API     : ON",
    ]
    if not is_server or test == "read":
        lines.append(" TX depth        : 1")
    lines.append(" Mtu             : %d[B]" % (opts["mtu"] or 4096))
    if local["link_layer"] == "Ethernet":
        lines += [" Link type       : Ethernet", " GID index       : %d" % (opts["gid_index"] or 3)]
    else:
        lines.append(" Link type       : IB")
    if test == "read":
        lines.append(" Outstand reads  : 16")
    else:
        lines.append(" Max inline data : 236[B]")
    lines += [" rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", SEPARATOR]
    return lines


# ---------------------------------------------------------------------------------------------
# output in perftest's formats


def _hex(seed, digits):
    return int(hashlib.sha256(seed.encode()).hexdigest()[:digits], 16)


def address_lines(side, qps, remote=False):
    """perftest's 'local address:' / 'remote address:' lines (one per QP), deterministic per port."""
    word = "remote" if remote else "local"
    lines = []
    for qp in range(qps):
        seed = "%s/%s/%s/%d" % (side["node"], side["device"], side["port"], qp)
        if side["link_layer"] == "Ethernet":
            lid = "LID 0000"
        else:
            lid = "LID %#04x" % side["lid"]
        lines.append(
            " %s address: %s QPN %#06x PSN %#08x RKey %#08x VAddr %#016x"
            % (word, lid, _hex(seed + "q", 4), _hex(seed + "p", 6), _hex(seed + "r", 6), 0x7F0000000000 + _hex(seed, 8))
        )
        if side["link_layer"] == "Ethernet":
            octets = [0] * 10 + [255, 255, 10, 0, _hex(side["node"], 2) % 250 + 1, int(side["port"])]
            lines.append(" GID: " + ":".join("%02d" % o for o in octets))
    return lines


def header_lines(opts, test, local, is_server):
    title = TITLES[test] + (" Bidirectional" if opts["bidirectional"] else "") + " BW Test"
    mtu = opts["mtu"] or 4096
    lines = [
        SEPARATOR,
        "                    %s" % title,
        " Dual-port       : OFF\t\tDevice         : %s" % local["device"],
        " Number of qps   : %d\t\tTransport type : IB" % opts["qps"],
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: ON",
        " ibv_wr* API     : ON",
    ]
    if not is_server or opts["bidirectional"]:
        lines.append(" TX depth        : %d" % opts["tx_depth"])
    if test == "read":
        lines.append(" Outstand reads  : 16")
    lines += [" CQ Moderation   : 1", " Mtu             : %d[B]" % mtu]
    if local["link_layer"] == "Ethernet":
        lines += [" Link type       : Ethernet", " GID index       : %d" % (opts["gid_index"] or 3)]
    else:
        lines.append(" Link type       : IB")
    lines += [" Max inline data : 0[B]", " rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", SEPARATOR]
    return lines


def result_rows(opts, gbps, unit):
    """[(size, iterations, peak, avg, msg_rate)] in the console unit."""
    factor = 1.0 if unit == "Gb/sec" else 1e9 / 8 / 1048576
    sizes = [2**k for k in range(1, 24)] if opts["all_sizes"] else [opts["size"]]
    rows = []
    for size in sizes:
        # small messages are message-rate bound: a smooth curve that reaches the link figure at 64 KiB+
        bw = gbps * size / (size + 512.0) if opts["all_sizes"] else gbps
        if opts["all_sizes"] and size >= 65536:
            bw = gbps
        msg_rate = bw * 1e9 / 8 / size / 1e6
        if opts["duration"]:
            iterations = int(msg_rate * 1e6 * opts["duration"])
            peak = 0.0
        else:
            iterations = opts["iters"]
            peak = bw * 1.002
        rows.append((size, iterations, peak * factor, bw * factor, msg_rate))
    return rows


def table_lines(rows, unit):
    lines = [" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]" % (unit, unit)]
    for size, iterations, peak, avg, rate in rows:
        lines.append(" %-10d %-10d       %-10.2f         %-10.2f           %.6f" % (size, iterations, peak, avg, rate))
    lines.append(SEPARATOR)
    return lines


def write_json(path, opts, test, local, rows):
    size, iterations, peak, avg, rate = rows[-1]  # like perftest: the file holds the last size
    info = {
        "test": JSON_TITLES[test],
        "Dual_port": "OFF",
        "Device": local["device"],
        "Number_of_qps": opts["qps"],
        "Transport_type": "IB",
        "Connection_type": "RC",
        "Using_SRQ": "OFF",
        "PCIe_relax_order": "ON",
        "ibv_wr_API": "ON",
        "TX_depth": opts["tx_depth"],
        "CQ_Moderation": 1,
        "Mtu": opts["mtu"] or 4096,
        "Link_type": "Ethernet" if local["link_layer"] == "Ethernet" else "IB",
        "Max_inline_data": 0,
        "rdma_cm_QPs": "OFF",
        "Data_ex_method": "Ethernet",
    }
    if local["link_layer"] == "Ethernet":
        info["GID_index"] = opts["gid_index"] or 3
    doc = {
        "test_info": info,
        "results": {
            "MsgSize": size,
            "n_iterations": iterations,
            "BW_peak": round(peak, 2),
            "BW_average": round(avg, 2),
            "MsgRate": round(rate, 6),
        },
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, indent=2)
        handle.write("\n")


def out(lines):
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# the two roles


def _send(conn, doc):
    conn.sendall((json.dumps(doc, sort_keys=True) + "\n").encode())


def _recv(reader):
    line = reader.readline()
    if not line:
        raise SimError(" Failed to exchange data between server and clients")
    return json.loads(line.decode())


SYMMETRIC = ("qps", "size", "duration", "bidirectional", "all_sizes")


def _symmetric(opts, latency):
    return SYMMETRIC + (("iters",) if latency and not opts["duration"] else ())


def _hello(opts, test, local, latency=False):
    doc = dict((k, opts[k]) for k in _symmetric(opts, latency))
    doc.update({"test": test + ("_lat" if latency else ""), "end": local})
    return doc


def _run_period(opts, fabric, local, midway=None):
    """Both ends: the 'traffic' period; counter faults of this port (and, on the server, the switch
    counters through the lab fabric agent: midway) are raised inside it, without lengthening it."""
    period = float(opts["duration"]) if opts["duration"] else (1.0 if opts["all_sizes"] else QUICK_RUN_S)
    start = time.monotonic()
    time.sleep(period / 2)
    bump_counters(fabric, local["node"], local["device"], local["port"])
    if midway is not None:
        midway()
    time.sleep(max(0.0, start + period - time.monotonic()))


def run_server(opts, test, fabric, local, latency=False):
    node = local["node"]
    if node in (fabric.get("dead_servers") or []):
        while True:  # the fault "this node's server never starts": never listens, waits to be killed
            time.sleep(3600)
    delay = float((fabric.get("server_start_delay") or {}).get(node, 0))
    if delay > 0:
        time.sleep(delay)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("0.0.0.0", opts["tcp_port"]))
        listener.listen(1)
    except OSError:
        raise SimError(
            "Couldn't listen to port %d" % opts["tcp_port"], " Unable to open file descriptor for socket connection"
        )
    out(["", BANNER])
    conn, _addr = listener.accept()  # like perftest: blocks until a client comes
    listener.close()
    with conn:
        conn.settimeout(HANDSHAKE_TIMEOUT_S)
        reader = conn.makefile("rb")
        hello = _recv(reader)
        remote = hello["end"]
        mismatch = [k for k in _symmetric(opts, latency) if hello.get(k) != opts[k]]
        if hello.get("test") != test + ("_lat" if latency else ""):
            mismatch.append("test")
        if mismatch:
            _send(conn, {"error": "options differ between server and client: %s" % ", ".join(sorted(mismatch))})
            raise SimError(" Failed to exchange data between server and clients", " options differ: %s" % mismatch)
        if latency:
            gbps = link_gbps(fabric, local, remote, opts["bidirectional"])
            lat_us = link_latency_us(fabric, local, remote)
            _send(conn, {"end": local, "gbps": gbps, "latency_us": lat_us})
            out(lat_header_lines(opts, test, local, True) + address_lines(local, 1))
            out(address_lines(remote, 1, remote=True) + [SEPARATOR])
            if test != "read":  # ib_read_lat's server prints no table: only the client posts reads
                out([LAT_DUR_HEADER if opts["duration"] else LAT_HEADER])
            _run_period(opts, fabric, local)
            _send(conn, {"done": True})
            if test != "read":
                out(lat_table_lines(lat_rows(opts, lat_us, gbps), opts["duration"]))
            return None, local
        subnet = Subnet(fabric, agent_address())
        try:
            fraction = subnet.route(local, remote, test, opts["bidirectional"])
        except SimError as exc:
            _send(conn, {"error": exc.lines[0].strip()})
            raise
        gbps = link_gbps(fabric, local, remote, False)
        if fraction is not None:
            gbps = min(gbps, float(fraction) * min(local["rate_gbps"], remote["rate_gbps"]))
        gbps *= 2 if opts["bidirectional"] else 1
        _send(conn, {"end": local, "gbps": gbps})
        out(header_lines(opts, test, local, True) + address_lines(local, opts["qps"]))
        out(address_lines(remote, opts["qps"], remote=True) + [SEPARATOR])
        unit = "Gb/sec" if opts["report_gbits"] else fabric.get("unit", "MB/sec")
        rows = result_rows(opts, gbps, unit)
        out(table_lines(rows, unit)[:1])
        nbytes = flow_bytes(result_rows(opts, gbps, "Gb/sec"), opts["bidirectional"])
        try:
            _run_period(opts, fabric, local, midway=lambda: subnet.traffic(nbytes))
        finally:
            _send(conn, {"done": True})
        out(table_lines(rows, unit)[1:])
        return rows, local


def run_client(opts, test, fabric, local, latency=False):
    try:
        conn = socket.create_connection((opts["server"], opts["tcp_port"]), timeout=5)
    except OSError:
        raise SimError(
            "Couldn't connect to %s:%d" % (opts["server"], opts["tcp_port"]),
            "Unable to open file descriptor for socket connection Unable to init the socket connection",
        )
    with conn:
        conn.settimeout(HANDSHAKE_TIMEOUT_S + (opts["duration"] or 0) + 30)
        reader = conn.makefile("rb")
        _send(conn, _hello(opts, test, local, latency))
        reply = _recv(reader)
        if "error" in reply:
            raise SimError(" Failed to exchange data between server and clients", " %s" % reply["error"])
        remote, gbps = reply["end"], float(reply["gbps"])
        if latency:
            out(lat_header_lines(opts, test, local, False) + address_lines(local, 1))
            out(address_lines(remote, 1, remote=True) + [SEPARATOR])
            out([LAT_DUR_HEADER if opts["duration"] else LAT_HEADER])
            _run_period(opts, fabric, local)
            _recv(reader)
            out(lat_table_lines(lat_rows(opts, float(reply["latency_us"]), gbps), opts["duration"]))
            return None, local
        out(header_lines(opts, test, local, False) + address_lines(local, opts["qps"]))
        out(address_lines(remote, opts["qps"], remote=True) + [SEPARATOR])
        unit = "Gb/sec" if opts["report_gbits"] else fabric.get("unit", "MB/sec")
        rows = result_rows(opts, gbps, unit)
        out(table_lines(rows, unit)[:1])
        _run_period(opts, fabric, local)
        _recv(reader)  # the server's "done": both ends finish together
        out(table_lines(rows, unit)[1:])
        return rows, local


USAGE = """Usage:
  %(prog)s            start a server and wait for connection
  %(prog)s <host>     connect to server at <host>

(ibtune.fabric lab simulator of perftest: -d -i -x -q -s -a -D -b -p -n --report_gbits -F --out_json
 --out_json_file --use_cuda are honoured; other options are accepted and ignored)"""


def main(argv=None):
    argv = sys.argv if argv is None else argv
    prog = os.path.basename(argv[0])
    test = test_of(prog)
    latency = is_latency_tool(prog)
    try:
        opts = parse_args(argv[1:], latency)
        if opts["help"]:
            print(USAGE % {"prog": prog})
            return 1  # perftest exits 1 on -h and -V
        if opts["version"]:
            print("Version: 6.10 (ibtune-lab simulator)")
            return 1
        fabric = load_fabric()
        local = port_info(opts["device"], opts["ib_port"])
        local["node"] = node_name()
        if latency and opts["duration"] and opts["all_sizes"]:
            raise SimError("Duration mode currently doesn't support running on all sizes.")
        if opts["duration"] and not latency:
            out(["WARNING: BW peak won't be measured in this run."])
        if opts["server"] is None:
            rows, local = run_server(opts, test, fabric, local, latency)
        else:
            rows, local = run_client(opts, test, fabric, local, latency)
        if rows and opts["out_json"] and opts["out_json_file"]:
            write_json(opts["out_json_file"], opts, test, local, rows)
        return 0
    except SimError as exc:
        sys.stdout.flush()
        sys.stderr.write("\n".join(exc.lines) + "\n")
        sys.stderr.flush()
        return 1
    except (OSError, ValueError) as exc:  # the connection broke mid-run, like a peer that died
        sys.stdout.flush()
        sys.stderr.write(" Failed to exchange data between server and clients (%s)\n" % exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
