"""The standalone schedule runner (ibtune-schedule) run for real, as a Slurm step would run it: a separate
process, the lab's perftest simulator on loopback, real TCP, real signals."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import runner, sidefiles

ROOT = Path(__file__).resolve().parents[5]
LAB = ROOT / "tests" / "lab"
sys.path.insert(0, str(LAB))
import sysfs_tree  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_schedule import free_ports, loopback_pair  # noqa: E402

# what the installed ibtune-schedule runs (roles/schedule_runner/templates/ibtune-schedule.j2)
RUNNER = [
    sys.executable,
    "-c",
    "import sys; sys.path.insert(0, %r); "
    "from ansible_collections.ibtune.fabric.plugins.module_utils.validate.runner import main; sys.exit(main())"
    % str(ROOT / ".collections"),
]


@pytest.fixture
def pass_dir(tmp_path):
    root = tmp_path / "sys"
    sysfs_tree.build_tree(str(root), json.loads((LAB / "fabric" / "nodes" / "default.json").read_text()))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "ib_write_bw").symlink_to(LAB / "perftest_sim.py")
    fabric = tmp_path / "fabric.json"
    fabric.write_text("{}")
    directory = tmp_path / "pass1"
    (directory / sidefiles.SLICES).mkdir(parents=True)
    settings = {
        "test": "write",
        "duration": 1,
        "connect_timeout": 3,
        "slack": 5,
        "executable": str(bindir / "ib_write_bw"),
    }
    (directory / sidefiles.SETTINGS).write_text(json.dumps(settings))
    # the Slurm node "node-a" is the inventory host "a"
    (directory / sidefiles.NODES).write_text(json.dumps({"node-a": "a"}))
    mark = uuid.uuid4().hex
    env = dict(os.environ, IBTUNE_LAB_NODE="a", IBTUNE_LAB_SYSFS=str(root), IBTUNE_LAB_FABRIC=str(fabric))
    env.update(SLURMD_NODENAME="node-a", IBTUNE_TEST_MARK=mark)
    return {"dir": directory, "env": env, "mark": mark, "settings": settings}


def write_slice(pass_dir, sides, host="a"):
    (pass_dir["dir"] / sidefiles.SLICES / ("%s.json" % host)).write_text(json.dumps(sides))


def results(pass_dir):
    return pass_dir["dir"] / sidefiles.RESULTS


def marked_processes(mark):
    """Live processes that carry this test's environment mark (only ones this test started)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as handle:
                env = handle.read()
            with open("/proc/%s/stat" % pid) as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if ("IBTUNE_TEST_MARK=%s" % mark).encode() in env and state != "Z":
            found.append(int(pid))
    return found


def test_runs_its_slice_found_by_the_slurm_node_name_and_streams_every_round(pass_dir):
    p1, p2 = free_ports(2)
    write_slice(pass_dir, loopback_pair(1, p1) + loopback_pair(2, p2))
    proc = subprocess.run(
        RUNNER + ["--pass-dir", str(pass_dir["dir"])], env=pass_dir["env"], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    sides = sidefiles.read_sides(str(results(pass_dir)))
    assert list(sides) == ["a"]
    assert [(s["round"], s["role"]) for s in sides["a"]] == [(1, "server"), (1, "client"), (2, "server"), (2, "client")]
    assert all(abs(s["bw_avg_gbps"] - 392.0) < 1 for s in sides["a"] if s["role"] == "client")
    # appended a round at a time, then rewritten whole once the schedule finished
    assert (results(pass_dir) / ("a" + sidefiles.SIDES_SUFFIX)).read_text() == sidefiles.whole_lines(sides["a"])
    done = sidefiles.read_done(str(results(pass_dir)))["a"]
    assert done["finished"] is True and done["rounds"] == 2 and done["failures"] == 0
    state = sidefiles.read_states(str(results(pass_dir)))["a"]
    assert state["rounds_done"] == 2 and state["finished"] is True


def test_sigterm_keeps_the_rounds_that_ended_and_leaves_no_process(pass_dir):
    """What scancel, a preemption or the time limit does to a job step: SIGTERM to the runner."""
    ports = free_ports(3)
    write_slice(pass_dir, [s for index, port in enumerate(ports, 1) for s in loopback_pair(index, port)])
    env = dict(pass_dir["env"])
    proc = subprocess.Popen(RUNNER + ["--pass-dir", str(pass_dir["dir"])], env=env, stderr=subprocess.PIPE)
    side_file = results(pass_dir) / ("a" + sidefiles.SIDES_SUFFIX)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (side_file.exists() and side_file.read_text().count("\n") >= 2):
        time.sleep(0.05)
    time.sleep(0.3)  # round 2 is running now
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 128 + signal.SIGTERM
    back = sidefiles.read_side_file(str(side_file))
    assert [s["round"] for s in back] == [1, 1]
    assert side_file.read_text() == sidefiles.side_lines(back)  # a stopped runner's lines stay as appended
    done = sidefiles.read_done(str(results(pass_dir)))["a"]
    assert done["stopped"] == "SIGTERM" and "finished" not in done
    time.sleep(0.2)
    assert marked_processes(pass_dir["mark"]) == [], "a perftest (simulator) outlived the runner"


def test_a_rewrite_that_fails_leaves_the_lines_and_says_so_in_done_json(pass_dir):
    """The rewrite whole is a new file beside the lines (files.write_text's temporary name, 30 characters longer
    than the host's: "." + host + ".sides.jsonl." + 12 hex + ".tmp"); a host name of 228 characters makes that
    name longer than a file name may be (ENAMETOOLONG, root or not), while the runner's own files, the slice and
    the state's and done's temporaries (mkstemp: 25 and 24 longer) still fit. The runner finishes, says why in
    done.json, and the controller reads the lines as appended."""
    host = "h" * 228
    p1, p2 = free_ports(2)
    sides = [dict(side, host=host, peer=host) for side in loopback_pair(1, p1) + loopback_pair(2, p2)]
    write_slice(pass_dir, sides, host=host)
    proc = subprocess.run(
        RUNNER + ["--pass-dir", str(pass_dir["dir"]), "--host", host],
        env=pass_dir["env"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    done = sidefiles.read_done(str(results(pass_dir)))[host]
    assert done["finished"] is True and done["rounds"] == 2
    assert "File name too long" in done["compact_failed"], done
    side_file = results(pass_dir) / (host + sidefiles.SIDES_SUFFIX)
    back = sidefiles.read_side_file(str(side_file))
    assert [(s["round"], s["role"]) for s in back] == [(1, "server"), (1, "client"), (2, "server"), (2, "client")]
    assert side_file.read_text() == sidefiles.side_lines(back[:2]) + sidefiles.side_lines(back[2:])  # as appended
    assert sorted(os.listdir(str(results(pass_dir)))) == sorted(
        host + suffix for suffix in (sidefiles.SIDES_SUFFIX, sidefiles.STATE_SUFFIX, sidefiles.DONE_SUFFIX)
    )  # no temporary left behind


def test_quick_checks_run_first_and_a_check_that_cannot_start_is_a_failed_check(pass_dir):
    (port,) = free_ports(1)
    write_slice(pass_dir, loopback_pair(1, port))
    settings = dict(
        pass_dir["settings"],
        checks=[
            {"name": "ok", "argv": [sys.executable, "-c", "print('OK')"]},
            {"name": "bad", "argv": [sys.executable, "-c", "import sys; print('mlx5_1 port 1 is DOWN'); sys.exit(1)"]},
            {"name": "absent", "argv": [str(pass_dir["dir"] / "no-such-check")]},
        ],
    )
    (pass_dir["dir"] / sidefiles.SETTINGS).write_text(json.dumps(settings))
    proc = subprocess.run(
        RUNNER + ["--pass-dir", str(pass_dir["dir"])], env=pass_dir["env"], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    checks = sidefiles.read_checks(str(results(pass_dir)))["a"]
    assert [(c["check"], c["passed"]) for c in checks] == [("ok", True), ("bad", False), ("absent", False)]
    assert checks[1]["output"] == "mlx5_1 port 1 is DOWN" and checks[1]["rc"] == 1
    assert "cannot run" in checks[2]["output"]
    # the pairs ran all the same: a node whose check fails still serves its partner
    assert len(sidefiles.read_sides(str(results(pass_dir)))["a"]) == 2


def test_a_host_without_sides_ends_at_once_and_a_bad_slice_is_refused(pass_dir):
    proc = subprocess.run(
        RUNNER + ["--pass-dir", str(pass_dir["dir"])], env=pass_dir["env"], capture_output=True, check=False
    )
    assert proc.returncode == 0
    assert sidefiles.read_done(str(results(pass_dir)))["a"]["rounds"] == 0
    write_slice(pass_dir, [{"role": "client", "round": 1}])
    proc = subprocess.run(
        RUNNER + ["--pass-dir", str(pass_dir["dir"])], env=pass_dir["env"], capture_output=True, check=False
    )
    assert proc.returncode == runner.EXIT_BAD_INPUT
    assert b"ibtune-schedule: a: sides[0] lacks" in proc.stderr


def test_host_name_prefers_the_option_then_the_slurm_node_name():
    assert runner.host_name("x", {"n1": "node1"}, {"SLURMD_NODENAME": "n1"}) == "x"
    assert runner.host_name(None, {"n1": "node1"}, {"SLURMD_NODENAME": "n1"}) == "node1"
    assert runner.host_name(None, {}, {"SLURMD_NODENAME": "n2"}) == "n2"
