"""roce_qos module against a fixture sysfs/configfs tree and the lab's stand-in mlnx_qos (a real subprocess
that keeps state between calls): check mode changes nothing, apply reads back, a second run changes nothing."""

import hashlib
import json
import sys
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.modules import roce_qos
from tests.conftest import FIXTURES
from tests.unit.modules_harness import run_module

STAND_IN = str(Path(__file__).resolve().parents[4] / "molecule" / "fabric_qos" / "files" / "mlnx_qos")


@pytest.fixture
def host(tmp_path, monkeypatch):
    sys.path.insert(0, str(FIXTURES / "qos"))
    import roce_tree

    spec = json.loads((FIXTURES / "qos" / "roce-host.json").read_text())
    roce_tree.build(str(tmp_path / "sys"), str(tmp_path / "cfg"), spec)
    conf = tmp_path / "mlnx_qos.json"
    conf.write_text(json.dumps({"sysfs_root": str(tmp_path / "sys"), "state_dir": str(tmp_path / "state")}))
    monkeypatch.setenv("IBTUNE_MLNX_QOS_CONFIG", str(conf))
    args = {
        "interfaces": [{"netdev": "ens1f0np0"}, {"netdev": "ens2f0np0", "rdma_device": "mlx5_1"}],
        "executable": STAND_IN,
        "sysfs_root": str(tmp_path / "sys"),
        "configfs_root": str(tmp_path / "cfg"),
        "_ansible_diff": True,
    }
    return tmp_path, args


def snapshot(root):
    out = {}
    for path in sorted(Path(root).rglob("*")):
        if path.is_file() and path.name != "calls.log":
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def calls(tmp_path):
    log = tmp_path / "state" / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_check_mode_changes_nothing_and_shows_the_diff(host):
    tmp_path, args = host
    before = snapshot(tmp_path)
    result = run_module(roce_qos, args, check_mode=True)
    assert not result.failed, result["msg"]
    assert result["changed"] is True
    assert result["msg"] == "2 ports: 16 knobs would change"
    assert snapshot(tmp_path) == before
    assert all(argv in (["-i", "ens1f0np0"], ["-i", "ens2f0np0"]) for argv in calls(tmp_path))
    assert "ens1f0np0 trust: pcp\n" in result["diff"]["before"]
    assert "ens1f0np0 trust: dscp\n" in result["diff"]["after"]
    assert "ens2f0np0 pfc: 0,0,0,1,0,0,0,0\n" in result["diff"]["after"]
    assert "mlx5_1 rdma_cm ports/1/default_roce_tos: 106\n" in result["diff"]["after"]


def test_apply_then_idempotent(host):
    tmp_path, args = host
    result = run_module(roce_qos, args)
    assert not result.failed, result["msg"]
    assert result["changed"] is True and len(result["changes"]) == 16
    cur = result["current"]["ens1f0np0"]
    assert cur["trust"] == "dscp" and cur["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert cur["traffic_class"] == 106 and cur["default_roce_tos"] == 106
    assert (tmp_path / "sys/class/net/ens2f0np0/ecn/roce_rp/enable/3").read_text().strip() == "1"
    assert (tmp_path / "cfg/rdma_cm/mlx5_0/ports/1/default_roce_tos").read_text().strip() == "106"
    # ens1f0np0 already had ECN and CNP set: only what differed was touched.
    touched = [a.get("write") for a in result["actions"] if "write" in a]
    assert not any("ens1f0np0/ecn/roce_np/cnp_dscp" in (t or "") for t in touched)
    assert any("ens2f0np0/ecn/roce_np/cnp_dscp" in (t or "") for t in touched)
    before = snapshot(tmp_path)
    again = run_module(roce_qos, args)
    assert again["changed"] is False and again["actions"] == [] and again["msg"] == "2 ports: 0 knobs changed"
    assert snapshot(tmp_path) == before
    assert again["diff"]["before"] == again["diff"]["after"]
    assert "step %s -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0" % STAND_IN in again["boot_script"]


def test_model_priority_2_moves_dscp_26(host):
    tmp_path, args = host
    result = run_module(roce_qos, dict(args, qos={"roce_priority": 2}))
    assert not result.failed, result["msg"]
    assert ["-i", "ens1f0np0", "--dscp2prio", "set,26,2", "--dscp2prio", "set,48,6"] in calls(tmp_path)
    assert result["current"]["ens1f0np0"]["dscp2prio"] == {"26": 2, "48": 6}
    assert result["current"]["ens1f0np0"]["ecn_np"] == {"2": 1}


def test_missing_knob_reported_or_fatal(host):
    tmp_path, args = host
    (tmp_path / "sys/class/infiniband/mlx5_0/tc/1/traffic_class").unlink()
    result = run_module(roce_qos, args)
    assert not result.failed
    assert [m["key"] for m in result["missing"]] == ["traffic_class"]
    assert result["msg"].endswith(", 1 missing")
    strict = run_module(roce_qos, dict(args, fail_on_missing=True))
    assert strict.failed and "ens1f0np0 lacks " in strict["msg"] and "traffic_class" in strict["msg"]


def test_a_setting_that_does_not_stick_fails(host):
    tmp_path, args = host
    # Firmware-controlled DCBX: the switch's PFC TLV wins and the host's PFC write does not stick.
    conf = tmp_path / "mlnx_qos.json"
    conf.write_text(json.dumps(dict(json.loads(conf.read_text()), locked={"pfc": [0, 0, 0, 0, 1, 0, 0, 0]})))
    result = run_module(roce_qos, args)
    assert result.failed
    assert result["msg"] == (
        "after applying, ens1f0np0 still differs: pfc is [0, 0, 0, 0, 1, 0, 0, 0], wanted [0, 0, 0, 1, 0, 0, 0, 0]; "
        "the driver refused it, or firmware-controlled DCBX let the switch override it (see dmesg; mlnx_qos --dcbx os, "
        "or fix the switch)."
    )
    # The trust, DSCP map and ECN writes before the refused PFC did change the host: a partial apply is a change.
    assert result["changed"] is True
    assert {"argv": [STAND_IN, "-i", "ens1f0np0", "--trust", "dscp"]} in result["applied_actions"]


def test_a_failing_action_after_earlier_ones_reports_changed(host):
    tmp_path, args = host
    # mlnx_qos refuses the second port's trust change (as the real tool does without CAP_NET_ADMIN), after the
    # first port was fully set: the module fails, and still says it changed the host.
    wrapper = tmp_path / "mlnx_qos_refusing"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$*" in *ens2f0np0*--trust*) echo "Netlink error: Operation not permitted" >&2; exit 1;; esac\n'
        'exec "%s" "%s" "$@"\n' % (sys.executable, STAND_IN)
    )
    wrapper.chmod(0o755)
    result = run_module(roce_qos, dict(args, executable=str(wrapper)))
    assert result.failed
    assert "Operation not permitted" in result["msg"]
    assert result["changed"] is True
    assert {"argv": [str(wrapper), "-i", "ens1f0np0", "--trust", "dscp"]} in result["applied_actions"]


def test_unreadable_knob_is_reported_missing(host):
    tmp_path, args = host
    target = tmp_path / "sys/class/net/ens2f0np0/ecn/roce_np/cnp_dscp"
    target.unlink()
    target.mkdir()
    result = run_module(roce_qos, args)
    assert not result.failed
    assert result["missing"] == [{"key": "cnp_dscp", "path": str(target), "netdev": "ens2f0np0"}]


def test_unknown_interface_and_missing_tool(host):
    tmp_path, args = host
    result = run_module(roce_qos, dict(args, interfaces=[{"netdev": "eth9"}]))
    assert result.failed and result["msg"].startswith("interface eth9 does not exist under")
    result = run_module(roce_qos, dict(args, executable="no-such-mlnx-qos"))
    assert result.failed and result["msg"].startswith("no-such-mlnx-qos is not installed on this host")


def test_not_roce_mode_is_a_no_op(host):
    _tmp, args = host
    result = run_module(roce_qos, dict(args, qos={"mode": "infiniband"}))
    assert not result.failed and result["changed"] is False
    assert result["msg"] == "QoS mode is infiniband: nothing to do on RoCE host ports"
