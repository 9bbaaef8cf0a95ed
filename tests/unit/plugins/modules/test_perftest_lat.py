"""perftest_lat run in-process against real processes.

- The real Debian ib_*_lat (perftest package) on this host without RDMA device: no_device.
- tests/fixtures/perftest/fake_perftest.py for the socket behaviour the real binary never reaches here
  (one connect() try, a server blocked in accept()); it prints real corpus latency outputs.
Expected figures are read from the corpus text by position, not copied from the parser.
"""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from ansible_collections.ibtune.fabric.plugins.modules import perftest_lat
from tests.conftest import CORPUS, FIXTURES, ROOT
from tests.unit.modules_harness import run_module
from tests.unit.plugins.modules.test_perftest_bw import free_port, listening, processes_with, wait_for

FAKE = str(FIXTURES / "perftest" / "fake_perftest.py")
NEW_CLIENT = CORPUS / "ib_write_lat__client-a-all-sizes-20000-iters-mlx4-docker-leading-space-prompt.txt"
NEW_SERVER = CORPUS / "ib_write_lat__server-ib-connectx3-postsend-api-warnings-cpu-freq-in-table-tabs.txt"
OLD_CLIENT = CORPUS / "ib_send_lat__client-old-format-a-all-sizes-azure-hc44rs-sriov-vf-ib.txt"
DURATION = FIXTURES / "perftest" / "ib_write_lat__duration-tps-average-perftest-commit-8e3996d.txt"
KEYS = ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us")


def first_row(path):
    """The 2-byte row of a corpus table, split by whitespace."""
    for line in path.read_text().splitlines():
        tokens = line.split()
        if tokens and tokens[0] == "2" and len(tokens) >= 3 and tokens[1].isdigit():
            return tokens
    raise AssertionError("no 2-byte row in %s" % path)


@pytest.fixture
def fake_server(monkeypatch):
    """A fake perftest server on a free loopback port printing `output` (the client prints it too)."""
    started = []

    def start(output, port=None):
        port = port or free_port()
        monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(output))
        proc = subprocess.Popen([sys.executable, FAKE, "-d", "mlx5_0", "-p", str(port)])
        started.append(proc)
        assert wait_for(lambda: listening(port)), "fake server did not listen"
        return port

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def client_args(port, **kw):
    args = dict(role="client", server="127.0.0.1", device="mlx5_0", tcp_port=port, executable=FAKE, timeout=30)
    args.update(kw)
    return args


# ----------------------------------------------------------------------------------------------
# the real tools, check mode, parameters


@pytest.mark.skipif(shutil.which("ib_write_lat") is None, reason="Debian's perftest is not installed")
@pytest.mark.parametrize("test", ["write_lat", "read_lat", "send_lat"])
def test_real_latency_tools_without_device(test):
    res = run_module(
        perftest_lat,
        dict(role="client", server="127.0.0.1", device="mlx5_0", tcp_port=free_port(), test=test, connect_timeout=5),
    )
    assert res.failed and res["failure"]["kind"] == "no_device"
    assert res["attempts"] == 1  # not retried: only a refused connection is
    assert res["cmd"][0] == shutil.which("ib_%s" % test)
    assert "Did not detect devices" in res["stderr"]
    assert res["passed"] is False and res["t_typical_us"] is None


def test_check_mode_argv():
    res = run_module(
        perftest_lat,
        client_args(18600, executable=None, gid_index=3, iterations=20000, test="read_lat", use_cuda=0),
        check_mode=True,
    )
    assert not res.failed and res["changed"] is False and res["attempts"] == 0
    assert res["cmd"] == [
        "ib_read_lat", "-d", "mlx5_0", "-i", "1", "-x", "3", "-s", "2", "-n", "20000", "--use_cuda=0",
        "-p", "18600", "-F", "127.0.0.1",
    ]  # fmt: skip
    assert res["passed"] is None


@pytest.mark.parametrize(
    "args, words",
    [
        (dict(max_typical_us=-1), "max_typical_us=-1.0"),
        (dict(max_p99_us=float("nan")), "max_p99_us=nan"),
        (dict(duration=5, max_p99_us=4), "max_p99_us cannot be checked with duration"),
        (dict(iterations=3), "at least 5"),
        (dict(duration=5, iterations=100), "cannot be combined"),
        (dict(size="all", duration=5), "cannot be combined"),
    ],
)
def test_bad_parameters_fail_before_running(args, words):
    res = run_module(perftest_lat, client_args(1, **args))
    assert res.failed and words in res["msg"]
    assert res["msg"].startswith("perftest_lat: ")
    assert "attempts" not in res  # nothing ran


def test_missing_executable_is_one_sentence():
    res = run_module(perftest_lat, client_args(1, executable="/nonexistent/ib_write_lat"))
    assert res.failed
    assert res["msg"] == (
        "executable /nonexistent/ib_write_lat is not an executable file: install perftest or fix executable."
    )


# ----------------------------------------------------------------------------------------------
# client: retry, values, gate


def test_client_retry_reaches_a_late_server_and_reads_every_column(fake_server, monkeypatch):
    port = free_port()
    monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(NEW_CLIENT))
    timer = threading.Timer(1.2, fake_server, args=(NEW_CLIENT, port))
    timer.start()
    try:
        res = run_module(perftest_lat, client_args(port, connect_timeout=15))
    finally:
        timer.join()
    assert not res.failed, res["msg"]
    assert res["attempts"] >= 2
    row = first_row(NEW_CLIENT)
    assert (res["msg_size"], res["iterations"]) == (int(row[0]), int(row[1]))
    assert [res[k] for k in KEYS] == [float(v) for v in row[2:]]
    assert res["latency_us"] == res["t_typical_us"] and res["latency_basis"] == "t_typical"
    assert res["format"] == "iterations" and len(res["rows"]) == 23 and res["link_type"] == "IB"
    assert res["passed"] is True and res["threshold_us"] is None
    assert res["msg"] == "ib_write_lat mlx5_0:1 -> 127.0.0.1: typical %s us, p99 %s us at 2 B" % (row[4], row[7])


def test_gate_on_typical_latency(fake_server):
    port = fake_server(NEW_CLIENT)
    row = first_row(NEW_CLIENT)
    typical = float(row[4])
    res = run_module(perftest_lat, client_args(port, max_typical_us=typical + 0.01, max_p99_us=float(row[7])))
    assert not res.failed and res["passed"] is True
    assert "within max_typical_us" in res["msg"] and "max_p99_us" in res["msg"]
    port = fake_server(NEW_CLIENT)
    res = run_module(perftest_lat, client_args(port, max_typical_us=typical / 2))
    assert res.failed and res["passed"] is False
    assert res["failure"]["kind"] == "above_threshold"
    assert res["threshold_us"] == typical / 2
    assert "typical latency %.2f us > %g us (max_typical_us)" % (typical, typical / 2) in res["msg"]


def test_gate_on_p99(fake_server):
    port = fake_server(NEW_CLIENT)
    p99 = float(first_row(NEW_CLIENT)[7])
    res = run_module(perftest_lat, client_args(port, max_typical_us=100, max_p99_us=p99 - 0.1))
    assert res.failed and res["failure"]["kind"] == "above_threshold"
    assert "p99 latency" in res["failure"]["message"] and res["threshold_us"] == pytest.approx(p99 - 0.1)


def test_old_layout_returns_nulls_and_says_the_p99_gate_was_not_checked(fake_server):
    port = fake_server(OLD_CLIENT)
    row = first_row(OLD_CLIENT)
    res = run_module(perftest_lat, client_args(port, test="send_lat", max_p99_us=1.0))
    assert not res.failed and res["passed"] is True
    assert res["t_typical_us"] == float(row[4]) and res["format"] == "iterations_old"
    assert (res["t_avg_us"], res["t_stdev_us"], res["p99_us"], res["p999_us"]) == (None, None, None, None)
    assert any(w.startswith("max_p99_us") and "not checked" in w for w in res["warnings_seen"])
    assert "within" not in res["msg"]


def test_duration_table_gates_the_average(fake_server):
    port = fake_server(DURATION)
    row = first_row(DURATION)  # 2  1008430  2.97  168068.16
    res = run_module(perftest_lat, client_args(port, duration=5, max_typical_us=2.0))
    assert res.failed and res["failure"]["kind"] == "above_threshold"
    assert (res["t_avg_us"], res["tps_avg"], res["iterations"]) == (float(row[2]), float(row[3]), int(row[1]))
    assert res["t_typical_us"] is None and res["latency_basis"] == "t_avg"
    assert "average latency (no typical printed) %s us" % row[2] in res["msg"]
    assert "-D" in res["cmd"]


# ----------------------------------------------------------------------------------------------
# server


def _serve_one_client(port):
    def run():
        assert wait_for(lambda: listening(port))
        subprocess.run([sys.executable, FAKE, "-p", str(port), "127.0.0.1"], check=False, capture_output=True)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_write_lat_server_reports_its_table(monkeypatch):
    monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(NEW_SERVER))
    port = free_port()
    thread = _serve_one_client(port)
    try:
        res = run_module(perftest_lat, dict(role="server", device="mlx5_0", tcp_port=port, executable=FAKE))
    finally:
        thread.join()
    assert not res.failed, res["msg"]
    row = first_row(NEW_SERVER)
    assert [res[k] for k in KEYS] == [float(v) for v in row[2:]]
    assert sum("Conflicting CPU frequency" in w for w in res["warnings_seen"]) == 2
    assert res["msg"].startswith("ib_write_lat mlx5_0:1 (server on TCP port %d): typical" % port)


@pytest.mark.parametrize("test, ok", [("read_lat", True), ("write_lat", False)])
def test_a_server_without_table_passes_only_for_read_lat(monkeypatch, tmp_path, test, ok):
    # what ib_read_lat's server prints after the handshake: one separator line (src/read_lat.c)
    only_sep = tmp_path / "sep.txt"
    only_sep.write_text("-" * 87 + "\n")
    monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(only_sep))
    port = free_port()
    thread = _serve_one_client(port)
    try:
        res = run_module(perftest_lat, dict(role="server", device="mlx5_0", tcp_port=port, executable=FAKE, test=test))
    finally:
        thread.join()
    assert res.failed is not ok
    if ok:
        assert res["passed"] is True and res["t_typical_us"] is None
        assert "served its client" in res["msg"]
    else:
        assert res["failure"]["kind"] == "unknown" and "no result table" in res["msg"]


def test_server_timeout_kills_the_process_group(monkeypatch):
    marker = "ibt-%s" % uuid.uuid4().hex
    monkeypatch.setenv("FAKE_PERFTEST_CHILD", "1")
    start = time.monotonic()
    res = run_module(
        perftest_lat,
        dict(role="server", device="mlx5_0", tcp_port=free_port(), timeout=2, executable=FAKE,
             extra_args=["--marker=%s" % marker]),
    )  # fmt: skip
    assert res.failed and res["failure"]["kind"] == "timeout"
    assert res["failure"]["message"] == "no client connected within 2 s"
    assert res["rc"] == -signal.SIGTERM
    assert 2 <= time.monotonic() - start < 2 + 8
    assert processes_with(marker) == []


# ----------------------------------------------------------------------------------------------
# against the lab's perftest simulator: module, simulator and parser together


@pytest.fixture
def lab_nodes(tmp_path, monkeypatch):
    """Two simulated nodes (a, b): fixture sysfs trees, one fabric map, the simulator as ib_*_lat."""
    import json

    sys.path.insert(0, str(ROOT / "tests" / "lab"))
    import sysfs_tree

    spec = json.loads((ROOT / "tests" / "lab" / "fabric" / "nodes" / "default.json").read_text())
    for node in ("a", "b"):
        sysfs_tree.build_tree(str(tmp_path / node / "sys"), spec)
    for exe in ("ib_write_lat", "ib_read_lat", "ib_send_lat"):
        (tmp_path / exe).symlink_to(ROOT / "tests" / "lab" / "perftest_sim.py")
    fabric = tmp_path / "fabric.json"
    fabric.write_text(json.dumps({"latency_us": {"a/mlx5_1<->b/mlx5_1": 9.0}}))
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(fabric))
    # the module's own process is node b
    monkeypatch.setenv("IBTUNE_LAB_NODE", "b")
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", str(tmp_path / "b" / "sys"))
    servers = []

    def serve(exe, device, port):
        env = dict(os.environ, IBTUNE_LAB_NODE="a", IBTUNE_LAB_SYSFS=str(tmp_path / "a" / "sys"))
        proc = subprocess.Popen(
            [sys.executable, str(tmp_path / exe), "-d", device, "-p", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        servers.append(proc)
        return proc

    yield tmp_path, serve
    for proc in servers:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_lab_healthy_link_passes_and_slow_link_fails(lab_nodes):
    tmp, serve = lab_nodes
    port = free_port()
    serve("ib_write_lat", "mlx5_0", port)
    args = client_args(port, executable=str(tmp / "ib_write_lat"), sysfs_root=str(tmp / "b" / "sys"))
    res = run_module(perftest_lat, dict(args, max_typical_us=3, max_p99_us=5))
    assert not res.failed, res["msg"]
    assert res["t_typical_us"] == pytest.approx(1.9, abs=0.005) and res["format"] == "iterations"
    assert res["link_rate_gbps"] == 400.0
    port = free_port()
    serve("ib_write_lat", "mlx5_1", port)
    res = run_module(perftest_lat, dict(args, tcp_port=port, device="mlx5_1", max_typical_us=3))
    assert res.failed and res["failure"]["kind"] == "above_threshold"
    assert res["t_typical_us"] == pytest.approx(9.0, abs=0.005)
    assert res["msg"].startswith("ib_write_lat mlx5_1:1 -> 127.0.0.1: typical 9.00 us")


def test_lab_read_lat_server_module_passes_without_a_table(lab_nodes, monkeypatch):
    tmp, _serve = lab_nodes
    port = free_port()
    client = {}

    def run_client():
        assert wait_for(lambda: listening(port))
        env = dict(os.environ, IBTUNE_LAB_NODE="a", IBTUNE_LAB_SYSFS=str(tmp / "a" / "sys"))
        client["proc"] = subprocess.run(
            [sys.executable, str(tmp / "ib_read_lat"), "-d", "mlx5_0", "-p", str(port), "127.0.0.1"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    thread = threading.Thread(target=run_client)
    thread.start()
    try:
        res = run_module(
            perftest_lat,
            dict(role="server", device="mlx5_0", tcp_port=port, test="read_lat", executable=str(tmp / "ib_read_lat")),
        )
    finally:
        thread.join()
    assert not res.failed, res["msg"]
    assert res["passed"] is True and res["t_typical_us"] is None and "served its client" in res["msg"]
    assert client["proc"].returncode == 0 and "t_typical[usec]" in client["proc"].stdout
