"""The lab's perftest simulator, run for real: two processes on loopback, real TCP, real sleeps.

What it prints must be what the collection's perftest parser accepts (the same parser that reads the
corpus of real perftest output), and its faults must look like the real failures to that parser.
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters as counters_utils
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import latency as perftest_lat
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds

LAB = Path(__file__).resolve().parents[2] / "lab"
SIM = LAB / "perftest_sim.py"
NODE_SPEC = LAB / "fabric" / "nodes" / "default.json"

sys.path.insert(0, str(LAB))
import perftest_sim  # noqa: E402
import sysfs_tree  # noqa: E402


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """Two simulated nodes (a, b) with their own fixture trees, one fabric map."""
    nodes = {}
    for name in ("a", "b"):
        root = tmp_path / name / "sys"
        sysfs_tree.build_tree(str(root), json.loads(NODE_SPEC.read_text()))
        nodes[name] = root
    fabric = tmp_path / "fabric.json"
    fabric.write_text("{}")

    class Lab:
        def __init__(self):
            self.nodes = nodes
            self.fabric = fabric
            self.tmp = tmp_path

        def set_fabric(self, doc):
            fabric.write_text(json.dumps(doc))

        def env(self, node):
            env = dict(os.environ)
            env.update(IBTUNE_LAB_NODE=node, IBTUNE_LAB_SYSFS=str(nodes[node]), IBTUNE_LAB_FABRIC=str(fabric))
            return env

        def start(self, node, args, exe="ib_write_bw"):
            link = self.tmp / exe
            if not link.exists():
                link.symlink_to(SIM)
            return subprocess.Popen(
                [sys.executable, str(link), *args],
                env=self.env(node),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )

        def pair(self, args, server_args=None, client_args=None, exe="ib_write_bw", server_node="a", client_node="b"):
            """Run a server on one node and a client on the other, retrying the client like perftest_bw."""
            port = str(free_port())
            server = self.start(server_node, [*args, *(server_args or []), "-p", port], exe)
            deadline = time.monotonic() + 10
            while True:
                client = self.start(client_node, [*args, *(client_args or []), "-p", port, "127.0.0.1"], exe)
                cout, cerr = client.communicate(timeout=30)
                if client.returncode == 0 or time.monotonic() > deadline or "Couldn't connect" not in cerr:
                    break
                time.sleep(0.1)
            sout, serr = server.communicate(timeout=30)
            return (server.returncode, sout, serr), (client.returncode, cout, cerr)

    return Lab()


def test_healthy_pair_prints_what_the_parser_reads(lab):
    (src, sout, serr), (crc, cout, cerr) = lab.pair(
        ["-d", "mlx5_0", "-i", "1", "-q", "2", "-s", "65536", "--report_gbits", "-F"]
    )
    assert (src, crc) == (0, 0), (serr, cerr)
    server, client = perftest.parse_text(sout), perftest.parse_text(cout)
    assert server["server_banner"] and not client["server_banner"]
    # 0.98 x 400 Gb/s NDR port rate read from the fixture tree
    assert server["headline"]["bw_avg_gbps"] == pytest.approx(392.0)
    assert client["headline"]["bw_avg_gbps"] == pytest.approx(392.0)
    assert client["headline"]["msg_size"] == 65536
    assert client["headline"]["iterations"] == 5000
    assert client["unit"] == "Gb/sec" and client["link_type"] == "IB" and client["qps"] == 2
    assert client["remote_seen"] and server["remote_seen"]
    assert "RDMA_Write BW Test" in cout


def test_degraded_link_bidirectional_and_mb_units(lab):
    lab.set_fabric({"links": {"b/mlx5_0<->a/mlx5_0": 180.0}})
    (src, sout, _e), (crc, cout, _c) = lab.pair(["-d", "mlx5_0", "-b", "-F"])
    assert (src, crc) == (0, 0)
    client = perftest.parse_text(cout)
    assert client["unit"] == "MB/sec"  # perftest 4.5 without --report_gbits
    assert client["bidirectional"] is True
    # the override applies in either order, bidirectional doubles it, MB/sec is 2^20 bytes
    assert client["headline"]["bw_avg_gbps"] == pytest.approx(360.0, rel=1e-4)
    assert perftest.parse_text(sout)["headline"]["bw_avg_gbps"] == pytest.approx(360.0, rel=1e-4)
    # another rail of the same nodes keeps its full speed
    (src, _s, _e), (crc, cout, _c) = lab.pair(["-d", "mlx5_1", "--report_gbits"])
    assert perftest.parse_text(cout)["headline"]["bw_avg_gbps"] == pytest.approx(392.0)


def test_duration_is_honoured_and_peak_not_measured(lab):
    start = time.monotonic()
    (src, _s, _e), (crc, cout, _c) = lab.pair(["-d", "mlx5_1", "-D", "2", "--report_gbits"])
    elapsed = time.monotonic() - start
    assert (src, crc) == (0, 0)
    assert 2.0 <= elapsed < 6.0
    parsed = perftest.parse_text(cout)
    assert parsed["peak_measured"] is False
    assert parsed["headline"]["bw_peak_gbps"] == 0.0
    # iterations over 2 s at 392 Gb/s with 64 KiB messages
    assert parsed["headline"]["iterations"] == pytest.approx(392e9 / 8 / 65536 * 2, rel=1e-3)


def test_out_json_and_all_sizes(lab):
    out = lab.tmp / "out.json"
    (src, _s, _e), (crc, cout, _c) = lab.pair(
        ["-d", "mlx5_0", "-a", "--report_gbits"], client_args=["--out_json", "--out_json_file=%s" % out]
    )
    assert (src, crc) == (0, 0)
    parsed = perftest.parse_text(cout)
    assert [r["msg_size"] for r in parsed["rows"]] == [2**k for k in range(1, 24)]
    assert parsed["headline"]["msg_size"] == 2**23
    assert parsed["rows"][0]["bw_avg_gbps"] < parsed["rows"][-1]["bw_avg_gbps"]
    doc = perftest.parse_json(out.read_text(), unit="Gb/sec")
    assert doc["headline"]["msg_size"] == 2**23  # like perftest, only the last size survives in the file
    assert doc["headline"]["bw_avg_gbps"] == pytest.approx(392.0)


def test_read_and_send_variants(lab):
    for exe, title in (("ib_read_bw", "RDMA_Read BW Test"), ("ib_send_bw", "Send BW Test")):
        (src, _s, _e), (crc, cout, _c) = lab.pair(["-d", "mlx5_0", "--report_gbits"], exe=exe)
        assert (src, crc) == (0, 0)
        assert perftest.parse_text(cout)["test_title"] == title


def test_client_tries_once_like_perftest(lab):
    start = time.monotonic()
    proc = lab.start("b", ["-d", "mlx5_0", "-p", str(free_port()), "127.0.0.1"])
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert time.monotonic() - start < 5
    failure = perftest.classify_failure(out, err, 1)
    assert failure["kind"] == "connect"
    assert "127.0.0.1" in failure["message"]


def test_busy_port(lab):
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("0.0.0.0", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        proc = lab.start("a", ["-d", "mlx5_0", "-p", str(port)])
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert "Couldn't listen to port %d" % port in err
    assert perftest.classify_failure(out, err, 1)["kind"] == "port_busy"


def test_missing_device_is_a_no_device_failure(lab):
    proc = lab.start("a", ["-d", "mlx5_7", "-p", str(free_port())])
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert perftest.classify_failure(out, err, 1)["kind"] == "no_device"


def test_counter_bump_on_the_faulty_port_only(lab):
    lab.set_fabric({"counter_bumps": {"b": {"mlx5_1:1": {"symbol_error": 5, "link_downed": 300}}}})
    before = {n: counters_utils.snapshot(str(root)) for n, root in lab.nodes.items()}
    for dev in ("mlx5_0", "mlx5_1"):
        (src, _s, _e), (crc, _c, _ce) = lab.pair(["-d", dev])
        assert (src, crc) == (0, 0)
    after = {n: counters_utils.snapshot(str(root)) for n, root in lab.nodes.items()}
    assert counters_utils.violations(before["a"], after["a"]) == []
    found = counters_utils.violations(before["b"], after["b"])
    assert [(v["device"], v["port"], v["counter"], v["delta"]) for v in found] == [
        ("mlx5_1", 1, "link_downed", 255),  # 8-bit counter: saturates at 255
        ("mlx5_1", 1, "symbol_error", 5),
    ]
    assert counters_utils.saturated(after["b"])[0]["counter"] == "link_downed"


def test_dead_server_never_listens_until_killed(lab):
    lab.set_fabric({"dead_servers": ["a"]})
    port = free_port()
    server = lab.start("a", ["-d", "mlx5_0", "-p", str(port)])
    try:
        time.sleep(0.5)
        client = lab.start("b", ["-d", "mlx5_0", "-p", str(port), "127.0.0.1"])
        out, err = client.communicate(timeout=10)
        assert client.returncode == 1
        assert perftest.classify_failure(out, err, 1)["kind"] == "connect"
        assert server.poll() is None  # still there, waiting for nothing
    finally:
        server.kill()
        server.communicate()


def test_server_start_delay_and_option_mismatch(lab):
    lab.set_fabric({"server_start_delay": {"a": 1.0}})
    start = time.monotonic()
    (src, _s, _e), (crc, _c, _ce) = lab.pair(["-d", "mlx5_0"])
    assert (src, crc) == (0, 0)
    assert time.monotonic() - start >= 1.0
    lab.set_fabric({})
    args = ["-d", "mlx5_0"]
    (src, _s, serr), (crc, _c, cerr) = lab.pair(args, server_args=["-s", "4096"], client_args=["-s", "8192"])
    assert src == 1 and crc == 1
    assert "size" in serr and "size" in cerr


def test_argument_parsing_tolerates_unknown_options():
    opts = perftest_sim.parse_args(
        ["-d", "mlx5_3", "-i2", "-x", "3", "-q", "4", "-s", "1048576", "-D", "5", "-b", "--use_cuda=1", "-p", "18600"]
        + ["--report_gbits", "-F", "--out_json", "--out_json_file=/tmp/x.json", "--tclass=106", "--mystery", "node9"]
    )
    assert opts["device"] == "mlx5_3" and opts["ib_port"] == 2 and opts["gid_index"] == 3
    assert opts["qps"] == 4 and opts["size"] == 1048576 and opts["duration"] == 5
    assert opts["bidirectional"] and opts["report_gbits"] and opts["out_json"]
    assert opts["use_cuda"] == "1" and opts["tcp_port"] == 18600
    assert opts["out_json_file"] == "/tmp/x.json" and opts["server"] == "node9"
    assert opts["unknown"] == ["--mystery"]
    # the exact argv perftest_bw builds is understood, option for option
    argv = testkinds.build_argv(
        "write",
        {"role": "client", "server": "n2", "device": "mlx5_1", "ib_port": 1, "qps": 2, "size": 65536, "duration": 2}
        | {"tcp_port": 18516, "bidirectional": True, "executable": "/opt/ibtune-lab/bin/ib_write_bw"},
    )
    opts = perftest_sim.parse_args(argv[1:])
    seen = (opts["device"], opts["qps"], opts["duration"], opts["tcp_port"], opts["server"])
    assert seen == ("mlx5_1", 2, 2, 18516, "n2")
    assert opts["unknown"] == []


def test_link_bandwidth_model():
    end = {"node": "n1", "device": "mlx5_0", "rate_gbps": 400.0}
    other = {"node": "n2", "device": "mlx5_0", "rate_gbps": 200.0}
    assert perftest_sim.link_gbps({}, end, other, False) == pytest.approx(196.0)  # the slower end decides
    assert perftest_sim.link_gbps({"default_fraction": 0.9}, end, dict(other, rate_gbps=400.0), True) == 720.0
    assert perftest_sim.link_gbps({"links": {"n2<->n1": 100}}, end, other, False) == 100.0
    assert perftest_sim.link_gbps({"ports": {"n1/mlx5_0": 50}}, end, other, False) == 50.0
    assert perftest_sim.link_gbps({"ports": {"n1/mlx5_1": 50}}, end, other, False) == pytest.approx(196.0)


# ---------------------------------------------------------------------------------------------
# the latency tools (ib_write_lat, ib_read_lat, ib_send_lat)


def _lat_pair(lab, exe, args, **kw):
    (src, sout, serr), (crc, cout, cerr) = lab.pair(args, exe=exe, **kw)
    return (src, sout, serr), (crc, cout, cerr)


@pytest.mark.parametrize("exe", ["ib_write_lat", "ib_send_lat"])
def test_healthy_latency_pair_prints_the_newest_table(lab, exe):
    test = exe[3:]
    (src, sout, serr), (crc, cout, cerr) = _lat_pair(lab, exe, testkinds.build_argv(test, {"device": "mlx5_0"})[1:])
    assert (src, crc) == (0, 0), (serr, cerr)
    for text in (sout, cout):  # both ends of a ping-pong test print the same table
        parsed = perftest_lat.parse_lat_text(text)
        assert parsed["format"] == "iterations"  # the 9-column layout of current perftest
        assert parsed["test_title"] == testkinds.TEST_KINDS[test]["title"]
        got = testkinds.measurement(test, parsed)
        assert got["msg_size"] == 2 and got["iterations"] == 1000  # perftest's latency defaults
        assert got["t_typical_us"] == pytest.approx(1.9, abs=0.005)
        assert got["t_min_us"] < got["t_typical_us"] < got["p99_us"] < got["p999_us"] <= got["t_max_us"]
        assert testkinds.classify_failure(test, text, "", 0) is None
    assert perftest_lat.parse_lat_text(sout)["server_banner"] is True


def test_slow_link_and_slow_port_latency(lab):
    lab.set_fabric({"latency_us": {"b/mlx5_0<->a/mlx5_0": 9.0}, "slow_latency": {"a/mlx5_1": 5.5}})
    typical = {}
    for dev in ("mlx5_0", "mlx5_1"):
        (src, _s, _e), (crc, cout, _c) = _lat_pair(lab, "ib_write_lat", ["-d", dev, "-n", "5000"])
        assert (src, crc) == (0, 0)
        got = testkinds.measurement("write_lat", perftest_lat.parse_lat_text(cout))
        assert got["iterations"] == 5000
        typical[dev] = got["t_typical_us"]
    assert typical == pytest.approx({"mlx5_0": 9.0, "mlx5_1": 5.5}, abs=0.005)
    assert (
        perftest_sim.link_latency_us(
            {"default_latency_us": 1.2}, {"node": "x", "device": "d"}, {"node": "y", "device": "d"}
        )
        == 1.2
    )


def test_read_lat_server_prints_no_table_like_the_real_one(lab):
    (src, sout, serr), (crc, cout, _c) = _lat_pair(lab, "ib_read_lat", ["-d", "mlx5_0"])
    assert (src, crc) == (0, 0), serr
    assert "#bytes" not in sout and "Waiting for client to connect" in sout
    assert testkinds.classify_failure("read_lat", sout, serr, 0, role="server") is None
    assert perftest_lat.parse_lat_text(cout)["headline"]["t_typical_us"] == pytest.approx(1.9, abs=0.005)


def test_latency_duration_and_all_sizes(lab):
    start = time.monotonic()
    (src, _s, _e), (crc, cout, _c) = _lat_pair(lab, "ib_send_lat", ["-d", "mlx5_0", "-D", "2"])
    assert (src, crc) == (0, 0) and time.monotonic() - start >= 2.0
    parsed = perftest_lat.parse_lat_text(cout)
    assert parsed["format"] == "duration"
    row = parsed["headline"]
    assert row["t_typical_us"] is None and row["t_avg_us"] == pytest.approx(1.92, abs=0.01)
    assert row["tps_avg"] == pytest.approx(row["iterations"] / 2.0, rel=1e-3)
    assert "BW peak" not in cout  # that warning belongs to the bandwidth tools

    (src, _s, _e), (crc, cout, _c) = _lat_pair(lab, "ib_write_lat", ["-d", "mlx5_0", "-a"])
    rows = perftest_lat.parse_lat_text(cout)["rows"]
    assert [r["msg_size"] for r in rows] == [2**k for k in range(1, 24)]
    typical = [r["t_typical_us"] for r in rows]
    assert typical == sorted(typical) and typical[-1] > 100  # 8 MiB at 392 Gb/s: ~171 us on the wire


def test_latency_options_must_agree_and_duration_rejects_all_sizes(lab):
    (src, _s, serr), (crc, _c, cerr) = _lat_pair(
        lab, "ib_write_lat", ["-d", "mlx5_0"], server_args=["-n", "1000"], client_args=["-n", "2000"]
    )
    assert src == 1 and crc == 1 and "iters" in serr and "iters" in cerr
    proc = lab.start("a", ["-d", "mlx5_0", "-a", "-D", "2", "-p", str(free_port())], exe="ib_write_lat")
    _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1 and "doesn't support running on all sizes" in err


def test_latency_argv_of_the_registry_is_understood():
    params = {"role": "client", "server": "n2", "device": "mlx5_1", "gid_index": 3, "tcp_port": 18600}
    opts = perftest_sim.parse_args(testkinds.build_argv("read_lat", dict(params, iterations=20000))[1:], latency=True)
    assert (opts["device"], opts["gid_index"], opts["iters"], opts["tcp_port"], opts["server"]) == (
        "mlx5_1",
        3,
        20000,
        18600,
        "n2",
    )
    assert opts["size"] == 2 and opts["unknown"] == []
    assert perftest_sim.is_latency_tool("/opt/ibtune-lab/bin/ib_send_lat")
    assert not perftest_sim.is_latency_tool("/opt/ibtune-lab/bin/ib_send_bw")
