"""The lab subnet's fabric agent: its parsers on real outputs captured from the lab subnet
(tests/fixtures/lab/), the cables/bump logic, and, end to end on the controller, the real ibsim + OpenSM
+ infiniband-diags (scripts/bootstrap.sh installs them) with the agent and two perftest simulator
processes on loopback: the route OpenSM programmed decides the bandwidth and carries the counters.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest

LAB = Path(__file__).resolve().parents[2] / "lab"
SUBNET = LAB / "subnet"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lab"
SIM = LAB / "perftest_sim.py"
AGENT = SUBNET / "fabric_agent.py"
NODE_SPEC = LAB / "fabric" / "nodes" / "default.json"

sys.path.insert(0, str(LAB))
sys.path.insert(0, str(SUBNET))
import fabric_agent as fa  # noqa: E402
import perftest_sim  # noqa: E402
import sysfs_tree  # noqa: E402

NODE2_0, NODE3_0 = "0002:c903:0010:0020", "0002:c903:0010:0030"


def fixture(name):
    return (FIXTURES / name).read_text()


# --- parsers, on real outputs of the lab subnet


def test_net_files_describe_the_lab_fat_tree():
    net = fa.parse_net((SUBNET / "net.healthy").read_text())
    assert sorted(e["desc"] for e in net["switches"].values()) == [
        "lab-leaf1",
        "lab-leaf2",
        "lab-leaf3",
        "lab-leaf4",
        "lab-leaf5",
        "lab-leaf6",
        "lab-spine1",
        "lab-spine2",
    ]
    assert len(net["cas"]) == 8
    assert net["switches"][0x0002C90300A00001]["id"] == "S-0002c90300a00001"
    assert net["by_desc"]["ibt-lab-node3 mlx5_0"] == 0x0002C90300100030
    hosts = fa.node_guids(net)
    assert sorted(hosts) == ["ibt-lab-node1", "ibt-lab-node2", "ibt-lab-node3", "ibt-lab-node4"]
    assert hosts["ibt-lab-node3"]["mlx5_0"] == {"node_guid": NODE3_0, "node_desc": "ibt-lab-node3 mlx5_0"}
    assert hosts["ibt-lab-node1"]["mlx5_1"]["node_guid"] == "0002:c903:0010:0011"
    # the swapped net swaps exactly node2's mlx5_0 and node3's mlx5_1 cables (leaves of different rails); the GUIDs
    # stay
    healthy = [line for line in (SUBNET / "net.healthy").read_text().splitlines() if not line.startswith("#")]
    swapped = [line for line in (SUBNET / "net.swapped").read_text().splitlines() if not line.startswith("#")]
    changed = [(a, b) for a, b in zip(healthy, swapped) if a != b]
    assert (
        '[2]\t"H-0002c90300100020"[1]\t\t# "ibt-lab-node2 mlx5_0"',
        '[2]\t"H-0002c90300100031"[1]\t\t# "ibt-lab-node3 mlx5_1"',
    ) in changed
    assert len(changed) == 4
    assert fa.node_guids(fa.parse_net("\n".join(swapped))) == hosts


def test_net_record_without_a_guid_line_is_refused():
    with pytest.raises(fa.AgentError, match="no switchguid=/caguid= line"):
        fa.parse_net('Switch\t8 "S-1"\t\t# "lab-leaf1"\n')


def test_ibnetdiscover_lids():
    lids = fa.parse_ibnetdiscover_lids(fixture("ibnetdiscover.healthy"))
    assert len(lids) == 14  # 6 switches + 8 HCAs
    assert lids[0x0002C90300A00001] == 1  # lab-leaf1, where OpenSM sits
    assert lids[fa.guid_int(NODE2_0)] == 9 and lids[fa.guid_int(NODE3_0)] == 11
    assert lids[0x0002C90300100010] == 7


def test_ibtracert_cross_leaf_same_leaf_and_rerouted():
    hops = fa.parse_ibtracert(fixture("ibtracert.node2-node3.mlx5_0"))
    assert [(h["switch"], h["in_port"], h["out_port"]) for h in hops] == [
        ("lab-leaf1", 2, 7),
        ("lab-spine1", 1, 2),
        ("lab-leaf2", 7, 1),
    ]
    assert hops[1] == {"switch": "lab-spine1", "guid": "0x0002c90300b00001", "lid": 2, "in_port": 1, "out_port": 2}
    same = fa.parse_ibtracert(fixture("ibtracert.node1-node2.mlx5_0"))
    assert [(h["switch"], h["in_port"], h["out_port"]) for h in same] == [("lab-leaf1", 1, 2)]
    # lab-leaf1 port 7 unlinked: OpenSM moved the route to lab-spine2
    moved = fa.parse_ibtracert(fixture("ibtracert.node2-node3.mlx5_0.leaf1-7-unlinked"))
    assert [(h["switch"], h["in_port"], h["out_port"]) for h in moved] == [
        ("lab-leaf1", 2, 8),
        ("lab-spine2", 1, 2),
        ("lab-leaf2", 8, 1),
    ]
    with pytest.raises(fa.AgentError, match="no route"):
        fa.parse_ibtracert(fixture("ibtracert.no-such-lid"))


def test_ibqueryerrors_data_counters_of_every_switch_port():
    ports = fa.parse_ibqueryerrors_counters(fixture("ibqueryerrors-counters-switch.after-2-healthy-validations"))
    assert len(ports) == 40  # 4 leaves x 8 ports + 2 spines x 4 ports, as its summary says
    leaf4_1 = ports[("0x0002c90300a00004", 1)]
    assert leaf4_1["PortXmitData"] == 97999983896 and leaf4_1["PortRcvPkts"] == 95703149
    assert set(leaf4_1) >= {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
    # two healthy all_pairs validations since ibsim started: every ISL port moved one 98 GB flow each
    # way per validation (PortXmitData counts 4-octet units)
    for (guid, port), fields in ports.items():
        if guid.startswith("0x0002c90300b") or port in (7, 8):
            assert fields["PortXmitData"] * 4 == pytest.approx(2 * 98e9, rel=1e-3), (guid, port)
            assert fields["PortRcvData"] * 4 == pytest.approx(2 * 98e9, rel=1e-3), (guid, port)


def test_perfquery_and_sminfo():
    ext = fa.parse_perfquery(fixture("perfquery-x.lab-leaf1.7"))
    # captured after `PerformanceSet ... PortCountersExtended.PortXmitData=25000000000` (+ ibsim's own MADs)
    assert ext["PortXmitData"] == 25000001152 and ext["CounterSelect"] == 0 and ext["PortRcvPkts"] > 0
    basic = fa.parse_perfquery(fixture("perfquery.lab-leaf1.2"))
    assert basic["SymbolErrorCounter"] == 0 and basic["PortXmitData"] == 3456 and len(basic) >= 20
    assert fa.parse_sminfo(fixture("sminfo")) == {"lid": 1, "guid": "0x0002c90300a00001", "state": "SMINFO_MASTER"}
    with pytest.raises(fa.AgentError, match="no SM"):
        fa.parse_sminfo("")


# --- the fabric map's switch-side keys


def _path(text):
    return {"from": "x", "to": "y", "hops": fa.parse_ibtracert(fixture(text))}


def test_cable_fraction_by_either_end_lowest_wins():
    paths = [_path("ibtracert.node2-node3.mlx5_0")]
    assert fa.path_cables(paths) == [
        "lab-leaf1/2",
        "lab-leaf1/7",
        "lab-leaf2/1",
        "lab-leaf2/7",
        "lab-spine1/1",
        "lab-spine1/2",
    ]
    assert fa.path_fraction({}, paths) is None
    assert fa.path_fraction({"cables": {"lab-leaf1/8": 0.1}}, paths) is None  # another ISL
    assert fa.path_fraction({"cables": {"lab-spine1/1": 0.45}}, paths) == 0.45  # leaf1/7 by its spine end
    assert fa.path_fraction({"cables": {"lab-leaf1/7": 0.6, "lab-leaf2/1": 0.3}}, paths) == 0.3


def test_directions_of_the_data():
    assert fa.directions("write", False) == [("client", "server")]
    assert fa.directions("send", False) == [("client", "server")]
    assert fa.directions("read", False) == [("server", "client")]
    assert fa.directions("read", True) == [("client", "server"), ("server", "client")]


def test_counter_deltas_data_on_every_hop_and_bumps_once_per_flow():
    paths = [_path("ibtracert.node2-node3.mlx5_0")]
    fabric = {
        "switch_counter_bumps": {"lab-leaf2/1": {"SymbolErrorCounter": 7}, "lab-leaf4/1": {"SymbolErrorCounter": 9}}
    }
    deltas = fa.counter_deltas(fabric, paths, 4096 * 1000 + 1)
    leaf1, spine1, leaf2 = "0x0002c90300a00001", "0x0002c90300b00001", "0x0002c90300a00002"
    assert deltas[(leaf1, 7)] == {
        "PortCountersExtended.PortXmitData": 1024000,
        "PortCountersExtended.PortXmitPkts": 1001,
    }
    assert deltas[(leaf1, 2)] == {"PortCountersExtended.PortRcvData": 1024000, "PortCountersExtended.PortRcvPkts": 1001}
    assert deltas[(spine1, 1)]["PortCountersExtended.PortRcvData"] == 1024000
    assert deltas[(leaf2, 1)] == {
        "PortCountersExtended.PortXmitData": 1024000,
        "PortCountersExtended.PortXmitPkts": 1001,
        "PortCounters.SymbolErrorCounter": 7,
    }
    assert len(deltas) == 6  # in and out port of 3 switches; lab-leaf4 is not on the path
    assert fa.new_value("PortCounters.SymbolErrorCounter", 65530, 7) == 65535  # 16 bits saturate
    assert fa.new_value("PortCounters.LinkDownedCounter", 250, 7) == 255
    assert fa.new_value("PortCountersExtended.PortXmitData", 2**40, 5) == 2**40 + 5


def test_simulator_bytes_of_a_run():
    opts = perftest_sim.parse_args(["-D", "2", "--report_gbits"])
    rows = perftest_sim.result_rows(opts, 392.0, "Gb/sec")
    assert perftest_sim.flow_bytes(rows, False) == pytest.approx(98e9, rel=1e-4)
    opts = perftest_sim.parse_args(["-b"])
    rows = perftest_sim.result_rows(opts, 784.0, "Gb/sec")
    assert perftest_sim.flow_bytes(rows, True) == 5000 * 65536 // 2


# --- end to end: the real subnet on the controller, the agent, two simulator processes


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def subnet(tmp_path_factory):
    """ibsim (net.healthy, console on a FIFO) + OpenSM under libumad2sim + the agent on loopback."""
    for tool in ("ibsim", "opensm", "ibtracert", "perfquery", "ibnetdiscover"):
        assert shutil.which(tool) or os.path.exists("/usr/sbin/" + tool), (
            "%s is missing: run scripts/bootstrap.sh (it installs ibsim-utils, opensm, infiniband-diags)" % tool
        )
    tmp = tmp_path_factory.mktemp("subnet")
    env = dict(os.environ, IBSIM_SOCKNAME="ibtune-ut-%d" % os.getpid(), OSM_CACHE_DIR=str(tmp), OSM_TMP_DIR=str(tmp))
    fifo = tmp / "sim.fifo"
    os.mkfifo(fifo)
    procs = []
    writer = os.open(fifo, os.O_RDWR)  # a writer, so ibsim never reads EOF on its console
    procs.append(subprocess.Popen(["sleep", "infinity"], stdout=writer))
    os.close(writer)
    with open(fifo) as console, open(tmp / "ibsim.log", "w") as log:
        procs.append(
            subprocess.Popen(
                ["ibsim", "-s", str(SUBNET / "net.healthy")], stdin=console, stdout=log, stderr=log, env=env
            )
        )
    time.sleep(0.5)
    sm_env = dict(env, LD_PRELOAD=fa.UMAD2SIM)
    procs.append(
        subprocess.Popen(
            ["opensm", "-d2", "-e", "-f", str(tmp / "opensm.log")],
            env=sm_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )
    deadline = time.monotonic() + 20
    while "SUBNET UP" not in ((tmp / "opensm.log").read_text() if (tmp / "opensm.log").exists() else ""):
        assert time.monotonic() < deadline, "OpenSM did not reach SUBNET UP on ibsim in 20 s"
        time.sleep(0.1)
    fabric = tmp / "fabric.json"
    fabric.write_text("{}")
    port = _free_port()
    agent = subprocess.Popen(
        [
            sys.executable,
            str(AGENT),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--net",
            str(SUBNET / "net.healthy"),
            "--fifo",
            str(fifo),
            "--fabric",
            str(fabric),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    procs.append(agent)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the agent did not listen"
            time.sleep(0.1)

    class Subnet:
        def __init__(self):
            self.tmp, self.fabric, self.env, self.address = tmp, fabric, env, "127.0.0.1:%d" % port
            self.fifo, self.ibsim = fifo, procs[1]

        def tool(self, *argv):
            return subprocess.run(list(argv), env=sm_env, capture_output=True, text=True, check=True, timeout=20).stdout

        def counter(self, lid, port, name, extended=True):
            argv = ["perfquery"] + (["-x"] if extended else []) + [str(lid), str(port)]
            return fa.parse_perfquery(self.tool(*argv))[name]

        def call(self, request):
            return perftest_sim.agent_call(("127.0.0.1", port), request)

    yield Subnet()
    for proc in reversed(procs):  # only what this fixture started, by its own handle
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def _pair(subnet, tmp_path, fabric, args, agent=True, server_guid=NODE3_0, client_guid=NODE2_0):
    """A simulator server (node3 mlx5_0) and client (node2 mlx5_0), both fixture trees with the net's GUIDs."""
    subnet.fabric.write_text(json.dumps(fabric))
    envs = {}
    for name, guid in (("server", server_guid), ("client", client_guid)):
        spec = json.loads(NODE_SPEC.read_text())
        spec["devices"]["mlx5_0"]["node_guid"] = guid
        root = tmp_path / name / "sys"
        sysfs_tree.build_tree(str(root), spec)
        envs[name] = dict(
            os.environ,
            IBTUNE_LAB_NODE=name,
            IBTUNE_LAB_SYSFS=str(root),
            IBTUNE_LAB_FABRIC=str(subnet.fabric),
            IBTUNE_LAB_AGENT=subnet.address if agent else "127.0.0.1:%d" % _free_port(),
        )
    port = str(_free_port())
    server = subprocess.Popen(
        [sys.executable, str(SIM), "-d", "mlx5_0", "-p", port, *args],
        env=envs["server"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 10
    while True:
        client = subprocess.run(
            [sys.executable, str(SIM), "-d", "mlx5_0", "-p", port, *args, "127.0.0.1"],
            env=envs["client"],
            capture_output=True,
            check=False,
            text=True,
            timeout=60,
        )
        if client.returncode == 0 or time.monotonic() > deadline or "Couldn't connect" not in client.stderr:
            break
        time.sleep(0.1)
    sout, serr = server.communicate(timeout=60)
    return (server.returncode, sout, serr), (client.returncode, client.stdout, client.stderr)


def _route(subnet, test="write", bidirectional=False):
    reply = subnet.call(
        {"op": "route", "server_guid": NODE3_0, "client_guid": NODE2_0, "test": test, "bidirectional": bidirectional}
    )
    assert reply["ok"], reply
    return reply


def test_agent_routes_on_opensm_tables(subnet):
    reply = _route(subnet)
    (path,) = reply["paths"]
    assert (path["slid"], path["dlid"]) == (11, 13)  # node2 mlx5_0 -> node3 mlx5_0, the LIDs OpenSM gave
    hops = path["hops"]
    assert [h["switch"] for h in hops][::2] == ["lab-leaf1", "lab-leaf2"] and hops[1]["switch"].startswith("lab-spine")
    assert hops[0]["in_port"] == 2 and hops[-1]["out_port"] == 1  # the HCAs' leaf ports
    assert hops[0]["out_port"] == hops[-1]["in_port"] == {"lab-spine1": 7, "lab-spine2": 8}[hops[1]["switch"]]
    # read: the data flows server -> client; -b: both ways
    (back,) = _route(subnet, test="read")["paths"]
    assert (back["slid"], back["dlid"]) == (13, 11)
    assert len(_route(subnet, bidirectional=True)["paths"]) == 2
    # the agent knows which ibsim run it counts for: the process reading the console FIFO
    assert fa.Subnet(None, str(subnet.fifo)).epoch().split(":")[0] == str(subnet.ibsim.pid)
    assert fa.Subnet(None, str(subnet.tmp / "no.fifo")).epoch() is None
    bad = subnet.call({"op": "route", "server_guid": "0x0002c90300100099", "client_guid": NODE2_0})
    assert not bad["ok"] and "0x0002c90300100099 is not on the lab subnet" in bad["error"]
    assert "unknown op" in subnet.call({"op": "nope"})["error"]


def test_healthy_run_raises_switch_data_counters_along_the_route(subnet, tmp_path):
    hops = _route(subnet)["paths"][0]["hops"]
    before = [
        (subnet.counter(h["lid"], h["out_port"], "PortXmitData"), subnet.counter(h["lid"], h["in_port"], "PortRcvData"))
        for h in hops
    ]
    off_path = (hops[0]["lid"], 15 - hops[0]["out_port"])  # the other uplink of lab-leaf1 (7 <-> 8)
    off_before = subnet.counter(off_path[0], off_path[1], "PortXmitData")
    (src, sout, serr), (crc, cout, cerr) = _pair(subnet, tmp_path, {}, ["-D", "1", "--report_gbits"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert perftest.parse_text(cout)["headline"]["bw_avg_gbps"] == pytest.approx(392.0)
    moved = 392e9 / 8 / 4  # 1 s at 392 Gb/s, in PortXmitData's 4-octet units
    time.sleep(0.5)  # ibsim applies the console's PerformanceSet lines
    for hop, (xmit, rcv) in zip(hops, before):
        assert subnet.counter(hop["lid"], hop["out_port"], "PortXmitData") - xmit == pytest.approx(moved, rel=1e-3)
        assert subnet.counter(hop["lid"], hop["in_port"], "PortRcvData") - rcv == pytest.approx(moved, rel=1e-3)
    assert subnet.counter(off_path[0], off_path[1], "PortXmitData") - off_before < 1e6  # MADs only
    flows = subnet.call({"op": "flows"})["flows"]
    assert flows[-1]["bytes"] == pytest.approx(49e9, rel=1e-3) and flows[-1]["paths"][0]["hops"] == hops


def test_degraded_cable_on_the_route_slows_the_pair_and_bumps_climb(subnet, tmp_path):
    hops = _route(subnet)["paths"][0]["hops"]
    isl = "%s/%d" % (hops[1]["switch"], hops[1]["in_port"])  # the uplink's spine end names the cable
    leaf2 = hops[-1]
    errors = subnet.counter(leaf2["lid"], 1, "SymbolErrorCounter", extended=False)
    fabric = {
        "cables": {isl: 0.45, "lab-leaf3/7": 0.1},
        "switch_counter_bumps": {"lab-leaf2/1": {"SymbolErrorCounter": 7}},
    }
    (src, sout, serr), (crc, cout, cerr) = _pair(subnet, tmp_path, fabric, ["--report_gbits"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert perftest.parse_text(sout)["headline"]["bw_avg_gbps"] == pytest.approx(180.0)  # 0.45 x 400
    assert perftest.parse_text(cout)["headline"]["bw_avg_gbps"] == pytest.approx(180.0)
    time.sleep(0.5)
    assert subnet.counter(leaf2["lid"], 1, "SymbolErrorCounter", extended=False) == errors + 7
    # -b: both directions cross the cable, the figure doubles from the degraded one
    (src, _s, _e), (crc, cout, _c) = _pair(subnet, tmp_path, {"cables": {isl: 0.45}}, ["-b", "--report_gbits"])
    assert perftest.parse_text(cout)["headline"]["bw_avg_gbps"] == pytest.approx(360.0)


def test_unreachable_agent_fails_loudly_only_when_the_map_needs_it(subnet, tmp_path):
    (src, _s, serr), (crc, _c, cerr) = _pair(
        subnet, tmp_path, {"cables": {"lab-leaf1/7": 0.45}}, ["--report_gbits"], agent=False
    )
    assert src == 1 and crc == 1
    assert "cannot be reached" in serr and "the fabric map uses cables" in serr
    assert "the fabric map uses cables" in cerr  # the client is told why
    (src, _s, serr), (crc, cout, cerr) = _pair(subnet, tmp_path, {}, ["--report_gbits"], agent=False)
    assert (src, crc) == (0, 0), (serr, cerr)
    assert perftest.parse_text(cout)["headline"]["bw_avg_gbps"] == pytest.approx(392.0)
