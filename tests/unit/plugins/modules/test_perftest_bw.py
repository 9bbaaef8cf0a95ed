"""perftest_bw run in-process against real processes.

- The real Debian ib_write_bw (perftest package) on this host without RDMA device: no_device.
- tests/fixtures/perftest/fake_perftest.py for the socket behaviour the real binary never reaches
  here (it exits at device discovery before opening a socket, shown below): one connect() try,
  a server blocked in accept(), "Couldn't listen to port". It prints real corpus outputs.
- Gate maths against a fixture sysfs tree in tmp_path.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

from ansible_collections.ibtune.fabric.plugins.modules import perftest_bw
from tests.conftest import CORPUS, FIXTURES, ROOT
from tests.unit.modules_harness import run_module

FAKE = str(FIXTURES / "perftest" / "fake_perftest.py")
MB = 1048576 * 8 / 1e9
CLIENT_SAMPLE = CORPUS / "ib_write_bw__client-roce-mb-sec-loopback-gid3.txt"  # 44276.64 MB/sec average
SERVER_SAMPLE = CORPUS / "ib_write_bw__server-roce-mb-sec-waiting-banner.txt"  # 46339.84 MB/sec average
BIDIR_SAMPLE = CORPUS / "ib_write_bw__bidirectional-roce-gbits-duration-newest-header-cpu-freq-line.txt"  # 98.02


def free_port():
    """A loopback TCP port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def processes_with(marker):
    """pids whose command line contains marker (a /proc scan, no psutil)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                cmdline = handle.read().decode("utf-8", "replace")
            with open("/proc/%s/stat" % entry) as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def listening(port):
    with open("/proc/net/tcp") as handle:
        return any(
            line.split()[3] == "0A" and int(line.split()[1].rsplit(":", 1)[1], 16) == port
            for line in handle.readlines()[1:]
        )


@pytest.fixture
def sysfs(tmp_path):
    """A tiny fixture tree: mlx5_0 port 1 at 400 Gb/s NDR, mlx5_1 port 1 at 100 Gb/s EDR (no newline)."""
    root = tmp_path / "sys"
    for dev, rate in (("mlx5_0", "400 Gb/sec (4X NDR)\n"), ("mlx5_1", "100 Gb/sec (4X EDR)")):
        port = root / "class" / "infiniband" / dev / "ports" / "1"
        port.mkdir(parents=True)
        (port / "rate").write_text(rate)
    return str(root)


@pytest.fixture
def fake_server(monkeypatch):
    """Start fake perftest servers on free loopback ports; kill them at teardown.

    The report to print (and the JSON file to write) goes into this process's environment, which the
    fake server and the module's client process both inherit.
    """
    started = []

    def start(output, port=None, json_src=None):
        port = port or free_port()
        monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(output))
        if json_src:
            monkeypatch.setenv("FAKE_PERFTEST_JSON", str(json_src))
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
# the real ib_write_bw on a host without RDMA device

REAL = shutil.which("ib_write_bw")
needs_real = pytest.mark.skipif(
    REAL is None, reason="Debian's perftest is not installed on this host (apt-get install -y perftest)"
)


@needs_real
def test_real_ib_write_bw_client_is_no_device_not_retried():
    port = free_port()
    res = run_module(
        perftest_bw,
        dict(role="client", server="127.0.0.1", device="mlx5_0", tcp_port=port, connect_timeout=5),
    )
    assert res.failed
    assert res["failure"]["kind"] == "no_device"
    assert "ibstat" in res["failure"]["hint"]
    assert res["attempts"] == 1  # no_device is not retried, only a refused connection is
    assert res["rc"] == 1
    assert "Did not detect devices" in res["stderr"]
    assert res["cmd"][0] == REAL
    assert res["msg"].startswith("ib_write_bw mlx5_0:1 -> 127.0.0.1: perftest found no RDMA device")
    assert res["passed"] is False


@needs_real
def test_real_ib_write_bw_server_fails_at_once_with_no_device():
    start = time.monotonic()
    res = run_module(perftest_bw, dict(role="server", device="mlx5_0", tcp_port=free_port(), timeout=20))
    assert res["failure"]["kind"] == "no_device"
    assert time.monotonic() - start < 10  # did not sit out the timeout


@needs_real
@pytest.mark.parametrize("test", ["read", "send"])
def test_real_read_and_send_tools_are_found_on_path(test):
    res = run_module(perftest_bw, dict(role="server", device="mlx5_0", tcp_port=free_port(), test=test))
    assert res["cmd"][0] == shutil.which("ib_%s_bw" % test)
    assert res["failure"]["kind"] == "no_device"


# ----------------------------------------------------------------------------------------------
# check mode, parameters


def test_check_mode_returns_argv_without_running(tmp_path):
    res = run_module(
        perftest_bw,
        client_args(18600, executable=None, gid_index=3, size="all", use_cuda=1, bidirectional=True),
        check_mode=True,
    )
    assert not res.failed
    assert res["changed"] is False
    assert res["cmd"] == [
        "ib_write_bw", "-d", "mlx5_0", "-i", "1", "-x", "3", "-q", "1", "-a", "-b", "--use_cuda=1",
        "-p", "18600", "--report_gbits", "-F", "127.0.0.1",
    ]  # fmt: skip
    assert res["attempts"] == 0 and res["rc"] is None
    assert res["msg"].startswith("check mode: perftest not run")


def test_missing_executable_is_one_sentence():
    res = run_module(perftest_bw, client_args(1, executable="/nonexistent/ib_write_bw"))
    assert res.failed
    assert res["msg"] == (
        "executable /nonexistent/ib_write_bw is not an executable file: install perftest or fix executable."
    )


def test_bad_size_is_rejected():
    res = run_module(perftest_bw, client_args(1, size="huge"))
    assert res.failed and "size='huge'" in res["msg"]


# ----------------------------------------------------------------------------------------------
# client retry


def test_client_retries_closed_port_until_connect_timeout():
    """A real loopback port nobody listens on: perftest's single try is retried for connect_timeout."""
    port = free_port()
    start = time.monotonic()
    res = run_module(perftest_bw, client_args(port, connect_timeout=2.5))
    took = time.monotonic() - start
    assert res.failed
    assert res["failure"]["kind"] == "connect"
    # Tried again and again (every ~0.5 s plus the start of a process, slower on a loaded CI box)
    # until connect_timeout: the loop stops only once less than 0.5 s of it is left.
    assert res["attempts"] >= 2
    assert 2.0 <= res["elapsed_s"] <= took < 2.5 + 10
    assert "127.0.0.1:%d" % port in res["msg"]
    assert "attempts in" in res["failure"]["message"]
    assert "Couldn't connect to 127.0.0.1:%d" % port in res["stderr"]


def test_client_retry_reaches_a_server_that_starts_late(fake_server, monkeypatch):
    port = free_port()
    # set before the first client attempt: a client started just before the server listens must print it too
    monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(CLIENT_SAMPLE))
    timer = threading.Timer(1.2, fake_server, args=(CLIENT_SAMPLE, port))
    timer.start()
    try:
        res = run_module(perftest_bw, client_args(port, connect_timeout=15))
    finally:
        timer.join()
    assert not res.failed, res["msg"]
    assert res["attempts"] >= 2
    assert res["bw_avg_gbps"] == pytest.approx(44276.64 * MB)
    assert res["bw_peak_gbps"] == pytest.approx(44326.24 * MB)
    assert (res["msg_size"], res["iterations"], res["msg_rate_mpps"], res["link_type"]) == (
        65536,
        5000,
        0.708426,
        "Ethernet",
    )
    assert res["passed"] is True and res["threshold_gbps"] is None


# ----------------------------------------------------------------------------------------------
# server: timeout, process group, port busy, success


def test_server_timeout_kills_the_process_group(monkeypatch):
    marker = "ibt-%s" % uuid.uuid4().hex
    monkeypatch.setenv("FAKE_PERFTEST_CHILD", "1")  # the fake server starts a child in its group first
    start = time.monotonic()
    res = run_module(
        perftest_bw,
        dict(
            role="server",
            device="mlx5_0",
            tcp_port=free_port(),
            timeout=3,
            executable=FAKE,
            extra_args=["--marker=%s" % marker],
        ),
    )
    took = time.monotonic() - start
    assert res.failed
    assert res["failure"]["kind"] == "timeout"
    assert res["failure"]["message"] == "no client connected within 3 s"
    assert "no client connected within 3 s" in res["msg"]
    assert res["rc"] == -signal.SIGTERM
    assert "Waiting for client to connect" in res["stdout"]  # it was up, blocked in accept()
    assert 3 <= took < 3 + 8
    assert processes_with(marker) == []  # neither the server nor its child survived


def test_server_port_busy():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        res = run_module(perftest_bw, dict(role="server", device="mlx5_0", tcp_port=port, executable=FAKE))
    assert res["failure"]["kind"] == "port_busy"
    assert "TCP port %d" % port in res["msg"]


def test_server_serves_one_client_and_reports(monkeypatch):
    monkeypatch.setenv("FAKE_PERFTEST_OUTPUT", str(SERVER_SAMPLE))
    port = free_port()
    client = {}

    def run_client():
        assert wait_for(lambda: listening(port))
        client["proc"] = subprocess.run(
            [sys.executable, FAKE, "-p", str(port), "127.0.0.1"], check=False, capture_output=True
        )

    thread = threading.Thread(target=run_client)
    thread.start()
    try:
        res = run_module(perftest_bw, dict(role="server", device="mlx5_0", tcp_port=port, executable=FAKE))
    finally:
        thread.join()
    assert not res.failed, res["msg"]
    assert client["proc"].returncode == 0
    assert res["bw_avg_gbps"] == pytest.approx(46339.84 * MB)
    assert res["msg"].startswith("ib_write_bw mlx5_0:1 (server on TCP port %d): 388.7 Gb/s average" % port)


# ----------------------------------------------------------------------------------------------
# gate with a fixture sysfs tree


def test_gate_passes_at_90_percent_of_400g(fake_server, sysfs):
    port = fake_server(CLIENT_SAMPLE)
    res = run_module(perftest_bw, client_args(port, sysfs_root=sysfs, min_link_fraction=0.9))
    assert not res.failed, res["msg"]
    assert res["link_rate_gbps"] == 400.0
    assert res["threshold_gbps"] == 360.0
    assert res["threshold_basis"] == "0.9 x 400 Gb/s port rate"
    assert res["passed"] is True
    assert "threshold 360.0 Gb/s (0.9 x 400 Gb/s port rate) met" in res["msg"]


def test_gate_fails_naming_host_side_facts(fake_server, sysfs):
    port = fake_server(CLIENT_SAMPLE)
    res = run_module(perftest_bw, client_args(port, sysfs_root=sysfs, min_link_fraction=0.95))
    assert res.failed
    assert res["msg"] == (
        "ib_write_bw mlx5_0:1 -> 127.0.0.1: 371.4 Gb/s average is below the threshold 380.0 Gb/s "
        "(0.95 x 400 Gb/s port rate)"
    )
    assert res["passed"] is False
    assert res["failure"]["kind"] == "below_threshold"
    assert res["bw_avg_gbps"] == pytest.approx(44276.64 * MB)  # the measurement is still returned


def test_gate_min_gbps_wins_when_larger(fake_server, sysfs):
    port = fake_server(CLIENT_SAMPLE)
    res = run_module(perftest_bw, client_args(port, sysfs_root=sysfs, min_link_fraction=0.5, min_gbps=372))
    assert res.failed
    assert res["threshold_gbps"] == 372.0
    assert res["msg"].endswith("below the threshold 372.0 Gb/s (min_gbps)")


def test_gate_bidirectional_doubles_the_port_rate(fake_server, sysfs):
    port = fake_server(BIDIR_SAMPLE)
    args = client_args(port, device="mlx5_1", sysfs_root=sysfs, bidirectional=True, duration=5)
    res = run_module(perftest_bw, dict(args, min_link_fraction=0.9))
    assert res.failed
    assert res["msg"] == (
        "ib_write_bw mlx5_1:1 -> 127.0.0.1: 98.0 Gb/s average is below the threshold 180.0 Gb/s "
        "(0.9 x 100 Gb/s port rate x 2 bidirectional)"
    )
    assert res["bw_peak_gbps"] == 0.0  # -D: peak not measured, the average is gated
    assert "WARNING: BW peak won't be measured in this run." in res["warnings_seen"]
    port = fake_server(BIDIR_SAMPLE)
    res = run_module(perftest_bw, dict(args, tcp_port=port, min_link_fraction=0.45))
    assert not res.failed and res["threshold_gbps"] == 90.0


def test_link_fraction_without_port_rate_fails_before_running(sysfs):
    res = run_module(perftest_bw, client_args(free_port(), device="mlx5_7", sysfs_root=sysfs, min_link_fraction=0.9))
    assert res.failed
    assert res["msg"].startswith("ib_write_bw mlx5_7:1 -> 127.0.0.1: min_link_fraction=0.9 needs the port rate")
    assert "class/infiniband/mlx5_7/ports/1/rate" in res["msg"]
    assert "attempts" not in res


# ----------------------------------------------------------------------------------------------
# --out_json


def test_out_json_headline_from_the_json_file(fake_server):
    port = fake_server("/dev/null", json_src=FIXTURES / "perftest" / "out_json_gbits_rdma_write.json")
    res = run_module(perftest_bw, client_args(port, out_json=True))
    assert not res.failed, res["msg"]
    json_arg = [a for a in res["cmd"] if a.startswith("--out_json_file=")][0]
    assert "--out_json" in res["cmd"]
    assert not os.path.exists(json_arg.split("=", 1)[1])  # the temporary file is cleaned up
    assert (res["bw_avg_gbps"], res["bw_peak_gbps"], res["msg_size"]) == (391.87, 392.61, 1048576)


def test_out_json_in_mb_sec_without_report_gbits(fake_server):
    port = fake_server("/dev/null", json_src=CORPUS / "ib_write_bw__out-json-file-roce-mb-sec-rocm-key.txt")
    res = run_module(perftest_bw, client_args(port, out_json=True, report_gbits=False))
    assert not res.failed, res["msg"]
    assert "--report_gbits" not in res["cmd"]
    assert res["bw_avg_gbps"] == pytest.approx(2229.27 * MB)
    assert res["link_type"] == "Ethernet"


# ----------------------------------------------------------------------------------------------
# the module killed from outside: no perftest survives it


def _module_process(tmp_path, args, env_extra=None):
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=str(ROOT / ".collections"))
    env.update(env_extra or {})
    return subprocess.Popen(
        [sys.executable, str(ROOT / "plugins" / "modules" / "perftest_bw.py"), str(args_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _server_args(marker, port):
    return dict(
        role="server", device="mlx5_0", tcp_port=port, timeout=60, executable=FAKE, extra_args=["--marker=" + marker]
    )


def test_sigterm_to_the_module_stops_the_whole_group(tmp_path):
    marker = "ibt-%s" % uuid.uuid4().hex
    port = free_port()
    proc = _module_process(tmp_path, _server_args(marker, port), {"FAKE_PERFTEST_CHILD": "1"})
    try:
        assert wait_for(lambda: listening(port) and len(processes_with(marker)) == 2)
        proc.send_signal(signal.SIGTERM)
        out, _unused = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    res = json.loads(out)
    assert res["failed"] is True
    assert res["failure"]["kind"] == "interrupted"
    assert "interrupted by signal 15" in res["msg"]
    assert processes_with(marker) == []


def test_sigkill_to_the_module_takes_perftest_along(tmp_path):
    """SIGKILL cannot be caught: PR_SET_PDEATHSIG makes the kernel kill perftest with the module."""
    marker = "ibt-%s" % uuid.uuid4().hex
    port = free_port()
    proc = _module_process(tmp_path, _server_args(marker, port))
    try:
        assert wait_for(lambda: listening(port) and processes_with(marker))
        proc.kill()
        proc.wait()
        assert wait_for(lambda: not processes_with(marker), timeout=5), processes_with(marker)
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)


# ----------------------------------------------------------------------------------------------
# contract with the lab's perftest simulator (tests/lab/perftest_sim.py, owned by the lab): the
# module's argv must be accepted and its output parsed, server and client both run by the module's
# process handling on loopback.

LAB = ROOT / "tests" / "lab"
SIM = LAB / "perftest_sim.py"
needs_sim = pytest.mark.skipif(not SIM.is_file(), reason="the lab simulator tests/lab/perftest_sim.py is absent")


@pytest.fixture
def lab_nodes(tmp_path, monkeypatch):
    sys.path.insert(0, str(LAB))
    try:
        import sysfs_tree  # noqa: PLC0415 - lab helper, only on this path
    finally:
        sys.path.remove(str(LAB))
    spec = json.loads((LAB / "fabric" / "nodes" / "default.json").read_text())
    roots = {}
    for node in ("node1", "node2"):
        roots[node] = str(tmp_path / node / "sys")
        sysfs_tree.build_tree(roots[node], spec)
    fabric = tmp_path / "fabric.json"
    fabric.write_text(json.dumps({"links": {"node1/mlx5_1<->node2/mlx5_1": 180.0}}))
    exe = tmp_path / "bin" / "ib_write_bw"
    exe.parent.mkdir()
    exe.symlink_to(SIM)
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(fabric))
    return roots, str(exe)


def _sim_server(roots, exe, port, device):
    env = dict(os.environ, IBTUNE_LAB_NODE="node1", IBTUNE_LAB_SYSFS=roots["node1"])
    argv = [exe, "-d", device, "-i", "1", "-q", "1", "-s", "65536", "-p", str(port), "--report_gbits", "-F"]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@needs_sim
@pytest.mark.parametrize(("device", "passes"), [("mlx5_0", True), ("mlx5_1", False)])
def test_module_client_against_the_lab_simulator(lab_nodes, monkeypatch, device, passes):
    roots, exe = lab_nodes
    monkeypatch.setenv("IBTUNE_LAB_NODE", "node2")
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", roots["node2"])
    port = free_port()
    # the client starts first and has to retry until the server listens
    timer = threading.Timer(1.0, lambda: servers.append(_sim_server(roots, exe, port, device)))
    servers = []
    timer.start()
    try:
        res = run_module(
            perftest_bw,
            client_args(port, device=device, executable=exe, sysfs_root=roots["node2"], min_link_fraction=0.9),
        )
    finally:
        timer.join()
        for proc in servers:
            proc.communicate(timeout=30)
    assert res["attempts"] >= 2
    assert res["link_rate_gbps"] == 400.0 and res["threshold_gbps"] == 360.0
    assert res["passed"] is passes
    if passes:
        assert res["bw_avg_gbps"] > 360.0, res["msg"]
    else:
        assert res["bw_avg_gbps"] == pytest.approx(180.0, abs=0.5)
        assert res["msg"].startswith(
            "ib_write_bw mlx5_1:1 -> 127.0.0.1: 180.0 Gb/s average is below the threshold 360.0"
        )
