"""The per-host schedule runner, run for real: the lab's perftest simulator on loopback, real TCP.

Both ends of each pair run in this one schedule (a loopback pair), so rounds, retries, timeouts and
process-group cleanup are exercised with real processes and real sockets.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.host import process
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import schedule

LAB = Path(__file__).resolve().parents[5] / "tests" / "lab"
sys.path.insert(0, str(LAB))
import sysfs_tree  # noqa: E402


def free_ports(n):
    socks = []
    for _index in range(n):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        socks.append(sock)
    ports = [s.getsockname()[1] for s in socks]
    for sock in socks:
        sock.close()
    return ports


@pytest.fixture
def lab(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    sysfs_tree.build_tree(str(root), json.loads((LAB / "fabric" / "nodes" / "default.json").read_text()))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("ib_write_bw", "ib_write_lat"):
        (bindir / name).symlink_to(LAB / "perftest_sim.py")
    fabric = tmp_path / "fabric.json"
    fabric.write_text("{}")
    monkeypatch.setenv("IBTUNE_LAB_NODE", "a")
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", str(root))
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(fabric))
    return {"bin": bindir, "fabric": fabric, "tmp": tmp_path}


def loopback_pair(round_no, port, rail="mlx5_0:1", device="mlx5_0"):
    common = {"pass": 1, "round": round_no, "rail": rail, "device": device, "port": 1, "tcp_port": port}
    return [
        dict(common, role="server", host="a", peer="a"),
        dict(common, role="client", host="a", peer="a", address="127.0.0.1"),
    ]


def params(lab, **extra):
    out = {
        "test": "write",
        "duration": 1,
        "connect_timeout": 3,
        "slack": 5,
        "executable": str(lab["bin"] / "ib_write_bw"),
    }
    out.update(extra)
    return out


def test_two_rounds_run_in_order_and_measure(lab, tmp_path):
    p1, p2 = free_ports(2)
    state = tmp_path / "state.json"
    sides = loopback_pair(1, p1) + loopback_pair(2, p2)
    start = time.monotonic()
    out = schedule.run_schedule(sides, params(lab), state_path=str(state))
    took = time.monotonic() - start
    assert out["rounds"] == 2 and out["failures"] == 0
    assert [s["round"] for s in out["sides"]] == [1, 1, 2, 2]
    clients = [s for s in out["sides"] if s["role"] == "client"]
    # default node spec: 400 Gb/s ports at the map's default fraction (0.98)
    assert all(abs(s["bw_avg_gbps"] - 392.0) < 1.0 for s in clients)
    assert all(s["failure_kind"] is None for s in out["sides"])
    # rounds are sequential: two 1 s tests take at least 2 s
    assert took >= 2.0
    doc = json.loads(state.read_text())
    assert doc["rounds_done"] == 2 and doc["finished"] is True and doc["failures"] == 0


def test_dead_server_client_retries_then_server_side_is_stopped(lab):
    lab["fabric"].write_text(json.dumps({"dead_servers": ["a"]}))
    (port,) = free_ports(1)
    out = schedule.run_schedule(loopback_pair(1, port), params(lab, connect_timeout=2))
    by_role = dict((s["role"], s) for s in out["sides"])
    assert by_role["client"]["failure_kind"] == "connect"
    # it retried (backing off) until connect_timeout: 3 attempts or more on an idle machine, 2 where each attempt's
    # simulated client took longer to start (seen under a load of 10 on 2 cores)
    assert by_role["client"]["attempts"] >= 2
    assert "attempts in" in by_role["client"]["failure"]
    assert by_role["server"]["failure_kind"] == "no_client"
    # bounded: connect_timeout + grace, not the test length plus slack
    assert by_role["server"]["elapsed_s"] < 2 + schedule.SERVER_GRACE_S + 1.5


def test_missing_executable_is_a_side_failure_not_a_crash(lab):
    (port,) = free_ports(1)
    out = schedule.run_schedule(loopback_pair(1, port), params(lab, executable=str(lab["tmp"] / "nope")))
    assert {s["failure_kind"] for s in out["sides"]} == {"no_executable"}


def test_never_touches_a_process_it_did_not_start(lab):
    """Someone else's perftest server, on another port, survives our schedule."""
    (theirs, ours) = free_ports(2)
    foreign = subprocess.Popen(
        [str(lab["bin"] / "ib_write_bw"), "-d", "mlx5_0", "-p", str(theirs), "-D", "30"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        out = schedule.run_schedule(loopback_pair(1, ours), params(lab))
        assert out["failures"] == 0
        assert foreign.poll() is None, "the foreign perftest was stopped"
    finally:
        foreign.send_signal(signal.SIGKILL)
        foreign.wait()


def test_children_are_gone_after_a_timeout(lab):
    """A test that outlives its bound (run estimate + slack) is stopped with its process group."""
    (port,) = free_ports(1)
    # the test really runs 3 s (-D 3 as an extra argument) but the runner is told 1 s, no slack
    settings = params(lab, slack=0, duration=None, run_estimate_s=1, extra_args=["-D", "3"])
    start = time.monotonic()
    out = schedule.run_schedule(loopback_pair(1, port), settings)
    kinds = {s["role"]: s["failure_kind"] for s in out["sides"]}
    # the server's bound (connected + 1 s) ends first; its client then loses the connection
    assert kinds["server"] == "timeout"
    assert kinds["client"] is not None
    assert time.monotonic() - start < 3 + 3 + 1  # bounded by connect_timeout + estimate, never hangs
    time.sleep(0.2)
    mine = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).find(str(port)) >= 0]
    assert mine == []


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def test_check_sides_names_the_problem():
    assert schedule.check_sides(
        [{"round": 1, "role": "client", "host": "a", "peer": "b", "rail": "r", "device": "d", "tcp_port": 1}]
    ) == ["sides[0] is a client without the server's address"]
    assert "lacks" in schedule.check_sides([{"role": "server"}])[0]


def test_established_ports_sees_a_real_connection():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    conn, _peer = server.accept()
    try:
        assert port in process.established_ports()
    finally:
        for sock in (client, conn, server):
            sock.close()
