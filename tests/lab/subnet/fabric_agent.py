"""Lab fabric agent: the perftest simulator's window on the lab's simulated subnet (ibsim + OpenSM).

Lab code only (tests/lab/subnet/), Python 3 standard library only. It runs on the lab's SM host as the
systemd unit ibtune-lab-fabric-agent.service and answers JSON lines on TCP (default port 7090): one
request line, one reply line, one connection per request.

  {"op": "route", "server_guid": "0x0002c90300100030", "client_guid": "0x0002c90300100020",
   "test": "write", "bidirectional": false}
  -> {"ok": true, "paths": [PATH, ...], "fraction": 0.45 | null, "cables": ["lab-leaf1/2", ...]}
     PATH = {"from": GUID, "to": GUID, "slid": 9, "dlid": 11,
             "hops": [{"switch": "lab-leaf1", "guid": GUID, "lid": 1, "in_port": 2, "out_port": 7}, ...]}
     The data direction(s): client -> server for write and send, server -> client for read, both with
     bidirectional. Each is traced with the real `ibtracert SLID DLID` on OpenSM's tables (LIDs from the
     real `ibnetdiscover`). `fraction` is the lowest `cables` entry of the fabric map that a path crosses
     (a cable is named by either end's "switch-description/port"), null when none.
  {"op": "traffic", "paths": [PATH, ...], "bytes": 98000000000}
  -> {"ok": true, "ports": N}
     Raises PortCountersExtended PortXmitData/PortXmitPkts on every hop's out port and PortRcvData/
     PortRcvPkts on its in port (data in units of 4 octets, packets of 4096 bytes) by `bytes` per path,
     and the fabric map's `switch_counter_bumps` {"switch/port": {"SymbolErrorCounter": n}} once per flow
     through that port, through ibsim's console (PerformanceSet sets a value: the current one is read
     with the real perfquery first; the data counters once per ibsim run with the real
     `ibqueryerrors --counters --switch`, then the agent counts).
  {"op": "flows"} -> {"ok": true, "flows": [...]}  every traffic request since the agent started.
  Errors: {"ok": false, "error": "one sentence"}.

Other commands (used by tests/lab/tasks/subnet.yml on the controller or the SM host):
  guids --net FILE            -> {host: {device: {"node_guid": "0002:c903:0010:0010", "node_desc": ...}}}
  lids [--net FILE]           -> {host: {device: {"ports": {"1": {"lid": "0x9", "sm_lid": "0x1"}}}}} (real
                                 ibnetdiscover + sminfo), merged into the nodes' fixture trees
  console --net FILE --fifo F --unlink SWITCH/PORT   writes `Unlink "S-guid"[port]` to ibsim's console
"""

import argparse
import json
import math
import os
import re
import socketserver
import subprocess
import sys
import threading
import time

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
DEFAULT_PORT = 7090
DEFAULT_NET = "/etc/ibtune-lab/subnet/net.active"
DEFAULT_FIFO = "/run/ibtune-lab-subnet/sim.fifo"
DEFAULT_FABRIC = "/etc/ibtune-lab/fabric.json"
MTU_BYTES = 4096
TOOL_TIMEOUT_S = 20

# PortCounters widths (IBA 16.1.3.5), for saturation when a bump raises one: host/counters.py COUNTER_WIDTHS under
# the IBA names (switch_counters.PMA_TO_SYSFS), kept equal to it by tests/unit/lab/test_lab_tables.py.
COUNTER_WIDTHS = {
    "SymbolErrorCounter": 16,
    "LinkErrorRecoveryCounter": 8,
    "LinkDownedCounter": 8,
    "PortRcvErrors": 16,
    "PortRcvRemotePhysicalErrors": 16,
    "PortRcvSwitchRelayErrors": 16,
    "PortXmitDiscards": 16,
    "PortXmitConstraintErrors": 8,
    "PortRcvConstraintErrors": 8,
    "LocalLinkIntegrityErrors": 4,
    "ExcessiveBufferOverrunErrors": 4,
    "VL15Dropped": 16,
    "PortXmitWait": 32,
}


class AgentError(Exception):
    """A request the agent cannot serve; the message is the one sentence sent back."""


# ---------------------------------------------------------------------------------------------
# parsers (pure, tested on real outputs in tests/fixtures/lab/)


def guid_int(text):
    """'0x0002c90300100010', '2c90300100010', '0002:c903:0010:0010' -> int."""
    text = str(text).strip().lower().replace(":", "")
    return int(text[2:] if text.startswith("0x") else text, 16)


def guid_hex(value):
    return "0x%016x" % (value if isinstance(value, int) else guid_int(value))


_NET_GUID = re.compile(r"^(switchguid|caguid)\s*=\s*(0x[0-9a-fA-F]+)")
_NET_NODE = re.compile(r'^(Switch|Ca|Hca)\s+(\d+)\s+"([^"]+)"[^#]*(?:#\s*"([^"]*)")?')


def parse_net(text):
    """ibsim net file -> {"switches": {guid: {"id", "desc"}}, "cas": {guid: {"id", "desc"}}, "by_desc": {desc: guid}}.

    The GUID of a record is the `switchguid=`/`caguid=` line before it; its description is the quoted
    comment on the record line (as ibnetdiscover writes it).
    """
    net = {"switches": {}, "cas": {}, "by_desc": {}}
    pending = None
    for line in text.splitlines():
        line = line.strip()
        match = _NET_GUID.match(line)
        if match:
            pending = int(match.group(2), 16)
            continue
        match = _NET_NODE.match(line)
        if not match:
            continue
        kind, _ports, node_id, desc = match.groups()
        if pending is None:
            raise AgentError("net file record %s has no switchguid=/caguid= line before it: add one" % node_id)
        entry = {"id": node_id, "desc": desc or node_id}
        net["switches" if kind == "Switch" else "cas"][pending] = entry
        net["by_desc"][entry["desc"]] = pending
        pending = None
    return net


def node_guids(net):
    """Lab node specs from a parsed net file: {host: {device: {node_guid, node_desc}}} for every CA whose
    description is "host device" (the way real mlx5 HCAs describe themselves)."""
    hosts = {}
    for guid, entry in net["cas"].items():
        parts = entry["desc"].split()
        if len(parts) != 2:
            continue
        text = "%016x" % guid
        hosts.setdefault(parts[0], {})[parts[1]] = {
            "node_guid": ":".join(text[i : i + 4] for i in range(0, 16, 4)),
            "node_desc": entry["desc"],
        }
    return hosts


_DISC_GUID = re.compile(r"^(?:switchguid|caguid)=(0x[0-9a-fA-F]+)")
_DISC_SWITCH = re.compile(r"^Switch\s+\d+\s+.*\blid (\d+)\b")
_DISC_CA_PORT = re.compile(r"^\[\d+\]\([0-9a-fA-F]+\)\s+\"[^\"]+\"\[\d+\]\s+#\s+lid (\d+)\b")


def parse_ibnetdiscover_lids(text):
    """Real `ibnetdiscover` output -> {node guid (int): lid}: a switch's base LID from its record line,
    a CA's from its port line ("[1](portguid) "S-..."[2] # lid 9 lmc 0 ...")."""
    lids = {}
    current = None
    for line in text.splitlines():
        match = _DISC_GUID.match(line)
        if match:
            current = int(match.group(1), 16)
            continue
        if current is None:
            continue
        match = _DISC_SWITCH.match(line) or _DISC_CA_PORT.match(line)
        if match and current not in lids:
            lids[current] = int(match.group(1))
    return lids


_TRACE_FROM = re.compile(r"^From ca \{(0x[0-9a-fA-F]+)\} portnum (\d+) lid (\d+)")
_TRACE_HOP = re.compile(r'^\[(\d+)\] -> (switch|ca) port \{(0x[0-9a-fA-F]+)\}\[(\d+)\] lid (\d+)-\d+ "([^"]*)"')


def parse_ibtracert(text):
    """Real `ibtracert SLID DLID` output -> [{"switch", "guid", "lid", "in_port", "out_port"}] in path order."""
    hops = []
    started = False
    for line in text.splitlines():
        if _TRACE_FROM.match(line):
            started = True
            continue
        match = _TRACE_HOP.match(line)
        if not match or not started:
            continue
        out_port, kind, guid, in_port, lid, desc = match.groups()
        if hops:
            hops[-1]["out_port"] = int(out_port)
        if kind == "switch":
            hops.append(
                {"switch": desc, "guid": guid_hex(guid), "lid": int(lid), "in_port": int(in_port), "out_port": None}
            )
    if not started:
        raise AgentError(
            "ibtracert printed no route (%s): is OpenSM up on the lab subnet?" % (text.strip()[:200] or "no output")
        )
    if hops and hops[-1]["out_port"] is None:
        raise AgentError("ibtracert's route ends at switch %s without reaching a CA" % hops[-1]["switch"])
    return hops


_SMINFO = re.compile(r"^sminfo: sm lid (\d+) sm guid (0x[0-9a-fA-F]+).*\bstate (\d+) (\w+)")


def parse_sminfo(text):
    """Real `sminfo` output -> {"lid", "guid", "state"} of the master SM."""
    for line in text.splitlines():
        match = _SMINFO.match(line.strip())
        if match:
            return {"lid": int(match.group(1)), "guid": guid_hex(match.group(2)), "state": match.group(4)}
    raise AgentError("sminfo printed no SM (%s): is OpenSM up on the lab subnet?" % (text.strip()[:200] or "no output"))


def ca_lids(lids, sm, hosts):
    """{host: {device: {"lid": "0x9", "sm_lid": "0x1"}}} for the lab nodes' HCAs, as sysfs writes LIDs."""
    specs = {}
    for host, devices in hosts.items():
        for device, entry in devices.items():
            lid = lids.get(guid_int(entry["node_guid"]))
            if lid is not None:
                specs.setdefault(host, {})[device] = {
                    "ports": {"1": {"lid": "0x%x" % lid, "sm_lid": "0x%x" % sm["lid"]}}
                }
    return specs


_QE_NODE = re.compile(r'^Data Counters for (0x[0-9a-fA-F]+) "([^"]*)"')
_QE_PORT = re.compile(r"^\s+GUID (0x[0-9a-fA-F]+) port (\d+): (.*)$")
_QE_FIELD = re.compile(r"\[(\w+) == (\d+)")


def parse_ibqueryerrors_counters(text):
    """Real `ibqueryerrors --counters --switch` output -> {(switch guid, port): {data counter: int}}
    (the "Data Counters for" blocks: PortXmitData, PortRcvData, PortXmitPkts ... of every switch port)."""
    ports = {}
    in_data = False
    for line in text.splitlines():
        if _QE_NODE.match(line):
            in_data = True
            continue
        match = _QE_PORT.match(line)
        if match and in_data:
            fields = {name: int(value) for name, value in _QE_FIELD.findall(match.group(3))}
            ports[(guid_hex(match.group(1)), int(match.group(2)))] = fields
        elif not line.startswith(" "):
            in_data = False
    return ports


_PERF_LINE = re.compile(r"^(\w+):\.+(\d+|0x[0-9a-fA-F]+)\s*$")


def parse_perfquery(text):
    """Real `perfquery [-x] LID PORT` output -> {counter name: int}."""
    counters = {}
    for line in text.splitlines():
        match = _PERF_LINE.match(line.strip())
        if match:
            counters[match.group(1)] = int(match.group(2), 0)
    return counters


# ---------------------------------------------------------------------------------------------
# the fabric map's switch-side keys (pure)


def hop_ports(hop):
    return ("%s/%d" % (hop["switch"], hop["in_port"]), "%s/%d" % (hop["switch"], hop["out_port"]))


def path_cables(paths):
    """Every "switch/port" a flow's paths go through (both ends of each hop), sorted."""
    return sorted({name for path in paths for hop in path["hops"] for name in hop_ports(hop)})


def path_fraction(fabric, paths):
    """The lowest `cables` fraction among the cables the paths cross, or None when none applies."""
    cables = fabric.get("cables") or {}
    crossed = [float(cables[name]) for name in path_cables(paths) if name in cables]
    return min(crossed) if crossed else None


def directions(test, bidirectional):
    """Which way data flows: ("client", "server") pairs."""
    if bidirectional:
        return [("client", "server"), ("server", "client")]
    if test == "read":
        return [("server", "client")]
    return [("client", "server")]


def counter_deltas(fabric, paths, nbytes):
    """{(switch guid, port): {"Attr.Field": delta}} for one flow of nbytes per path, and its bumps."""
    deltas = {}
    units = int(nbytes) // 4
    packets = int(math.ceil(int(nbytes) / float(MTU_BYTES)))

    def add(key, field, amount):
        entry = deltas.setdefault(key, {})
        entry[field] = entry.get(field, 0) + amount

    for path in paths:
        for hop in path["hops"]:
            add((hop["guid"], hop["out_port"]), "PortCountersExtended.PortXmitData", units)
            add((hop["guid"], hop["out_port"]), "PortCountersExtended.PortXmitPkts", packets)
            add((hop["guid"], hop["in_port"]), "PortCountersExtended.PortRcvData", units)
            add((hop["guid"], hop["in_port"]), "PortCountersExtended.PortRcvPkts", packets)
    bumps = fabric.get("switch_counter_bumps") or {}
    ports = {}
    for path in paths:
        for hop in path["hops"]:
            for port, name in zip((hop["in_port"], hop["out_port"]), hop_ports(hop)):
                ports[name] = (hop["guid"], port)
    for name in sorted(bumps):
        if name in ports:
            for counter, amount in sorted(bumps[name].items()):
                field = counter if "." in counter else "PortCounters." + counter
                add(ports[name], field, int(amount))
    return deltas


def new_value(field, current, delta):
    """The value to set: current + delta, saturating at the counter's width (64 bits for extended)."""
    name = field.split(".", 1)[1]
    width = 64 if field.startswith("PortCountersExtended.") else COUNTER_WIDTHS.get(name, 32)
    return min(int(current) + int(delta), (1 << width) - 1)


# ---------------------------------------------------------------------------------------------
# the subnet: real tools under libumad2sim, ibsim's console


def run_tool(argv):
    """Run one infiniband-diags tool against the simulated subnet; (rc, stdout, stderr)."""
    env = dict(os.environ, LD_PRELOAD=UMAD2SIM)
    proc = subprocess.run(
        ["timeout", str(TOOL_TIMEOUT_S)] + list(argv), env=env, capture_output=True, text=True, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


class Subnet:
    def __init__(self, net_path, fifo, runner=run_tool):
        self.net_path = net_path
        self.fifo = fifo
        self.runner = runner

    def net(self):
        try:
            with open(self.net_path, encoding="utf-8") as handle:
                return parse_net(handle.read())
        except OSError as exc:
            raise AgentError("cannot read the lab net file %s (%s): run tests/lab/lab.yml" % (self.net_path, exc))

    def lids(self):
        rc, stdout, stderr = self.runner(["ibnetdiscover"])
        if rc != 0:
            raise AgentError(
                "ibnetdiscover failed (rc %d: %s): is ibsim up on the SM host?" % (rc, stderr.strip()[-200:])
            )
        return parse_ibnetdiscover_lids(stdout)

    def sm(self):
        rc, stdout, stderr = self.runner(["sminfo"])
        if rc != 0:
            raise AgentError("sminfo failed (rc %d: %s): is OpenSM up on the SM host?" % (rc, stderr.strip()[-200:]))
        return parse_sminfo(stdout)

    def data_counters(self):
        rc, stdout, stderr = self.runner(["ibqueryerrors", "--counters", "--switch"])
        if rc != 0:
            raise AgentError(
                "ibqueryerrors failed (rc %d: %s): is ibsim up on the SM host?" % (rc, stderr.strip()[-200:])
            )
        return parse_ibqueryerrors_counters(stdout)

    def trace(self, slid, dlid):
        rc, stdout, stderr = self.runner(["ibtracert", str(slid), str(dlid)])
        if rc != 0:
            raise AgentError("ibtracert %d %d failed (rc %d: %s)" % (slid, dlid, rc, stderr.strip().splitlines()[-1:]))
        return parse_ibtracert(stdout)

    def counters(self, lid, port, extended):
        argv = ["perfquery"] + (["-x"] if extended else []) + [str(lid), str(port)]
        rc, stdout, stderr = self.runner(argv)
        if rc != 0:
            raise AgentError("perfquery %s failed (rc %d: %s)" % (" ".join(argv[1:]), rc, stderr.strip()[-200:]))
        return parse_perfquery(stdout)

    def epoch(self):
        """Which ibsim run this is: "pid:start time" of the process reading the console FIFO, or None.

        A restarted ibsim starts with every counter at 0, so what the agent remembers of the last one
        must go (a FIFO's inode number can come back after rm + mkfifo; a process start time does not).
        """
        try:
            fifo = os.path.realpath(self.fifo)
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    if os.readlink("/proc/%s/fd/0" % pid) != fifo:
                        continue
                    with open("/proc/%s/stat" % pid, encoding="utf-8") as handle:
                        return "%s:%s" % (pid, handle.read().rsplit(")", 1)[1].split()[19])
                except (OSError, IndexError):
                    continue
        except (OSError, TypeError):
            return None
        return None

    def console(self, lines):
        text = "".join(line + "\n" for line in lines)
        try:
            with open(self.fifo, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise AgentError("cannot write ibsim's console %s (%s): is ibtune-lab-ibsim running?" % (self.fifo, exc))


class Agent:
    def __init__(self, subnet, fabric_path):
        self.subnet = subnet
        self.fabric_path = fabric_path
        self.lock = threading.Lock()
        self.flows = []
        self.epoch = None
        self.lid_cache = None
        self.data = {}  # (guid, port, "PortCountersExtended.X") -> the value last set, this ibsim run

    def _same_run(self):
        """Forget the LIDs and the data counters of an earlier ibsim run; True when this run is known."""
        epoch = self.subnet.epoch()
        if epoch is None or epoch != self.epoch:
            self.epoch, self.lid_cache, self.data = epoch, None, {}
        return epoch is not None

    def lids(self):
        if not self._same_run() or self.lid_cache is None:
            self.lid_cache = self.subnet.lids()
        return self.lid_cache

    def fabric(self):
        try:
            with open(self.fabric_path, encoding="utf-8") as handle:
                return json.load(handle)
        except FileNotFoundError:
            return {}

    def route(self, req):
        ends = {"server": guid_int(req["server_guid"]), "client": guid_int(req["client_guid"])}
        with self.lock:
            lids = self.lids()
        for side, guid in ends.items():
            if guid not in lids:
                raise AgentError(
                    "the %s's node GUID %s is not on the lab subnet: check its fixture tree's node_guid"
                    % (side, guid_hex(guid))
                )
        paths = []
        for src, dst in directions(req.get("test", "write"), bool(req.get("bidirectional"))):
            slid, dlid = lids[ends[src]], lids[ends[dst]]
            paths.append(
                {
                    "from": guid_hex(ends[src]),
                    "to": guid_hex(ends[dst]),
                    "slid": slid,
                    "dlid": dlid,
                    "hops": self.subnet.trace(slid, dlid),
                }
            )
        return {
            "ok": True,
            "paths": paths,
            "fraction": path_fraction(self.fabric(), paths),
            "cables": path_cables(paths),
        }

    def traffic(self, req):
        paths, nbytes = req["paths"], int(req["bytes"])
        deltas = counter_deltas(self.fabric(), paths, nbytes)
        net = self.subnet.net()
        lids = {hop["guid"]: hop["lid"] for path in paths for hop in path["hops"]}
        lines = []
        known = self._same_run()
        if known and not self.data:  # every switch port's data counters in one call, once per ibsim run
            for (guid, port), fields in self.subnet.data_counters().items():
                for name, value in fields.items():
                    self.data[(guid, port, "PortCountersExtended." + name)] = value
        for (guid, port), fields in sorted(deltas.items()):
            entry = net["switches"].get(guid_int(guid))
            if entry is None:
                raise AgentError("switch %s is not in the net file %s" % (guid, self.subnet.net_path))
            current = {}
            ext = sorted(f for f in fields if f.startswith("PortCountersExtended."))
            # data counters: read once per ibsim run, then counted here (ibsim's own MADs since that
            # read, a few KB, are not worth a perfquery per port per flow)
            if ext and not (known and all((guid, port, f) in self.data for f in ext)):
                current.update(
                    ("PortCountersExtended." + k, v) for k, v in self.subnet.counters(lids[guid], port, True).items()
                )
            current.update((f, self.data[(guid, port, f)]) for f in ext if known and (guid, port, f) in self.data)
            if any(f.startswith("PortCounters.") for f in fields):
                current.update(
                    ("PortCounters." + k, v) for k, v in self.subnet.counters(lids[guid], port, False).items()
                )
            for field, delta in sorted(fields.items()):
                value = new_value(field, current.get(field, 0), delta)
                if field in ext and known:
                    self.data[(guid, port, field)] = value
                lines.append('PerformanceSet "%s"[%d] %s=%d' % (entry["id"], port, field, value))
        self.subnet.console(lines)
        self.flows.append({"time": time.time(), "bytes": nbytes, "paths": paths})
        return {"ok": True, "ports": len(deltas)}

    def handle(self, req):
        try:
            op = req.get("op")
            if op == "route":
                return self.route(req)
            if op == "traffic":
                with self.lock:  # read-then-set of the counters: one flow at a time
                    return self.traffic(req)
            if op == "flows":
                return {"ok": True, "flows": list(self.flows)}
            raise AgentError("unknown op %r: use route, traffic or flows" % op)
        except AgentError as exc:
            return {"ok": False, "error": str(exc)}
        except (KeyError, TypeError, ValueError) as exc:
            return {
                "ok": False,
                "error": "bad request (%s: %s): see fabric_agent.py's docstring" % (type(exc).__name__, exc),
            }


def make_server(agent, host, port):
    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            line = self.rfile.readline()
            try:
                req = json.loads(line.decode())
            except ValueError:
                reply = {"ok": False, "error": "the request is not one JSON line"}
            else:
                start = time.monotonic()
                reply = agent.handle(req)
                sys.stderr.write(
                    "%s %s: %.0f ms%s\n"
                    % (
                        self.client_address[0],
                        req.get("op"),
                        1000 * (time.monotonic() - start),
                        "" if reply.get("ok") else ", " + str(reply.get("error")),
                    )
                )
                sys.stderr.flush()
            self.wfile.write((json.dumps(reply, sort_keys=True) + "\n").encode())

    socketserver.ThreadingTCPServer.allow_reuse_address = True
    server = socketserver.ThreadingTCPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    serve = sub.add_parser("serve", help="answer the simulator's requests")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve.add_argument("--net", default=DEFAULT_NET)
    serve.add_argument("--fifo", default=DEFAULT_FIFO)
    serve.add_argument("--fabric", default=DEFAULT_FABRIC)
    guids = sub.add_parser("guids", help="node GUIDs and descriptions of the lab nodes' HCAs, as JSON")
    guids.add_argument("--net", required=True)
    lids = sub.add_parser("lids", help="the LIDs OpenSM gave the lab nodes' HCAs, as fixture spec parts (JSON)")
    lids.add_argument("--net", default=DEFAULT_NET)
    console = sub.add_parser("console", help="send a fault to ibsim's console")
    console.add_argument("--net", default=DEFAULT_NET)
    console.add_argument("--fifo", default=DEFAULT_FIFO)
    console.add_argument("--unlink", required=True, metavar="SWITCH/PORT")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "guids":
            with open(args.net, encoding="utf-8") as handle:
                print(json.dumps(node_guids(parse_net(handle.read())), indent=1, sort_keys=True))
            return 0
        if args.cmd == "lids":
            subnet = Subnet(args.net, None)
            print(json.dumps(ca_lids(subnet.lids(), subnet.sm(), node_guids(subnet.net())), indent=1, sort_keys=True))
            return 0
        if args.cmd == "console":
            subnet = Subnet(args.net, args.fifo)
            switch, _sep, port = args.unlink.rpartition("/")
            net = subnet.net()
            guid = net["by_desc"].get(switch)
            if guid not in net["switches"] or not port.isdigit():
                raise AgentError(
                    "lab_unlink=%s names no switch port of %s: use SWITCH/PORT, e.g. lab-leaf1/7"
                    % (args.unlink, args.net)
                )
            subnet.console(['Unlink "%s"[%d]' % (net["switches"][guid]["id"], int(port))])
            return 0
    except AgentError as exc:
        sys.stderr.write("%s\n" % exc)
        return 1
    server = make_server(Agent(Subnet(args.net, args.fifo), args.fabric), args.host, args.port)
    print("lab fabric agent on %s:%d (net %s)" % (args.host, args.port, args.net), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
