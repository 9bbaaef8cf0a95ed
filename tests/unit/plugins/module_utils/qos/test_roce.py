"""Host RoCE QoS: desired state, reading the knobs, diff, plan order and the boot script."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.qos.roce import (
    RoceQosError,
    apply_changes,
    boot_script,
    desired_state,
    diff,
    full_changes,
    parse_traffic_class,
    plan,
    rdma_device_of,
    read_current,
    state_text,
    validate_interface,
)
from tests.conftest import FIXTURES, read_corpus

ROOT = Path(__file__).resolve().parents[5]
STAND_IN = ROOT / "molecule" / "fabric_qos" / "files" / "mlnx_qos"
SPEC = FIXTURES / "qos" / "roce-host.json"


def build(tmp_path, qos=None):
    import sys

    sys.path.insert(0, str(FIXTURES / "qos"))
    import roce_tree

    spec = json.loads(SPEC.read_text())
    if qos:
        spec["qos"].update(qos)
    roce_tree.build(str(tmp_path / "sys"), str(tmp_path / "cfg"), spec)
    return str(tmp_path / "sys"), str(tmp_path / "cfg")


def test_desired_state_default_model():
    want = desired_state({})
    assert want == {
        "trust": "dscp",
        "pfc": [0, 0, 0, 1, 0, 0, 0, 0],
        "dscp2prio": {26: 3, 48: 6},
        "ecn_np": {3: 1},
        "ecn_rp": {3: 1},
        "cnp_dscp": 48,
        "cnp_802p_prio": 6,
        "traffic_class": 106,
        "default_roce_tos": 106,
    }
    assert desired_state({"ecn": "none"})["ecn_np"] == {}
    assert desired_state({"ecn": "none"})["traffic_class"] == 104
    assert desired_state({}, traffic_class=False, default_roce_tos=False)["traffic_class"] is None
    assert desired_state({"mode": "infiniband"}) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Global tclass=106\n", 106),
        ("Global tclass=106", 106),
        ("106", 106),
        ("", None),
        (None, None),
        ("Global tclass=-1", None),
        ("Global tclass=160\ntclass=96 dst_ip=10.0.0.0/8\n", 160),
        ("junk", None),
    ],
)
def test_parse_traffic_class(text, value):
    # The MLNX_OFED driver prints "Global tclass=N" once set and nothing while unset.
    assert parse_traffic_class(text) == value


@pytest.mark.parametrize(
    "iface",
    [
        {"netdev": "eth0; rm -rf /"},
        {"netdev": ""},
        {"netdev": "a" * 16},
        {"netdev": "eth0", "rdma_device": "mlx5_0 x"},
        {"netdev": "eth0", "port": "x"},
    ],
)
def test_validate_interface_rejects(iface):
    with pytest.raises(RoceQosError):
        validate_interface(iface)


def test_read_diff_plan_on_a_fixture_host(tmp_path):
    sysfs, cfg = build(tmp_path)
    iface = validate_interface({"netdev": "ens2f0np0"})
    iface["rdma_device"] = rdma_device_of(sysfs, "ens2f0np0")
    assert iface["rdma_device"] == "mlx5_1"
    want = desired_state({})
    text = read_corpus("mlnx_qos__os-controlled-dscp-trust-pfc3-tsa-vendor.txt")
    current, missing, _unused = read_current(iface, text, sysfs, cfg, want)
    assert missing == []
    # mlnx_qos side already lossless (corpus sample); the sysfs/configfs side still at driver defaults.
    changes = diff(want, current)
    assert [c["key"] for c in changes] == [
        "ecn_np",
        "ecn_rp",
        "cnp_dscp",
        "cnp_802p_prio",
        "traffic_class",
        "default_roce_tos",
    ]
    actions = plan(iface, changes, "mlnx_qos", sysfs, cfg)
    assert not any("argv" in a for a in actions)
    assert actions[0] == {"write": sysfs + "/class/net/ens2f0np0/ecn/roce_np/enable/3", "value": "1"}
    assert actions[-2] == {"mkdir": cfg + "/rdma_cm/mlx5_1"}
    assert actions[-1] == {"write": cfg + "/rdma_cm/mlx5_1/ports/1/default_roce_tos", "value": "106"}
    assert apply_changes(current, changes) == dict(want, dscp2prio={26: 3, 48: 6})


def test_plan_orders_mlnx_qos_calls_trust_pfc_then_dscp2prio():
    iface = {"netdev": "eth0", "rdma_device": "mlx5_0", "port": 1}
    want = desired_state({"roce_dscp": 24, "roce_priority": 2})
    changes = full_changes(want)
    actions = plan(iface, changes, "/usr/bin/mlnx_qos", "/sys", "/sys/kernel/config")
    argvs = [a["argv"] for a in actions if "argv" in a]
    assert argvs == [
        ["/usr/bin/mlnx_qos", "-i", "eth0", "--trust", "dscp"],
        ["/usr/bin/mlnx_qos", "-i", "eth0", "--pfc", "0,0,1,0,0,0,0,0"],
        # --trust and --dscp2prio cannot share a call (mlnx_qos refuses it)
        ["/usr/bin/mlnx_qos", "-i", "eth0", "--dscp2prio", "set,24,2", "--dscp2prio", "set,48,6"],
    ]
    writes = {a["write"]: a["value"] for a in actions if "write" in a}
    assert writes["/sys/class/net/eth0/ecn/roce_np/enable/2"] == "1"
    assert writes["/sys/class/infiniband/mlx5_0/tc/1/traffic_class"] == str(24 << 2 | 2)


def test_missing_knobs_are_reported_and_skipped(tmp_path):
    sysfs, cfg = build(tmp_path, {"ens1f0np0": {"omit": ["tc", "ecn"]}})
    shutil.rmtree(os.path.join(cfg, "rdma_cm"))
    iface = {"netdev": "ens1f0np0", "rdma_device": "mlx5_0", "port": 1}
    want = desired_state({})
    text = read_corpus("mlnx_qos__os-controlled-dscp-trust-pfc3-tsa-vendor.txt")
    current, missing, _unused = read_current(iface, text, sysfs, cfg, want)
    keys = sorted(m["key"] for m in missing)
    assert keys == ["cnp_802p_prio", "cnp_dscp", "default_roce_tos", "ecn_np/3", "ecn_rp/3", "traffic_class"]
    assert diff(want, current, {m["key"] for m in missing}) == []


def test_state_text_is_one_line_per_knob():
    iface = {"netdev": "eth0", "rdma_device": "mlx5_0", "port": 1}
    text = state_text(iface, desired_state({}))
    assert "eth0 pfc: 0,0,0,1,0,0,0,0\n" in text
    assert "mlx5_0 tc/1/traffic_class: 106\n" in text
    assert len(text.splitlines()) == 10


def test_boot_script_reapplies_everything_and_reports_failures(tmp_path):
    sysfs, cfg = build(tmp_path)
    state_dir = tmp_path / "state"
    conf = tmp_path / "mlnx_qos.json"
    conf.write_text(json.dumps({"sysfs_root": sysfs, "state_dir": str(state_dir)}))
    env = dict(os.environ, IBTUNE_MLNX_QOS_CONFIG=str(conf))
    want = desired_state({})
    items = []
    for netdev, dev in (("ens1f0np0", "mlx5_0"), ("ens2f0np0", "mlx5_1")):
        iface = {"netdev": netdev, "rdma_device": dev, "port": 1}
        items.append((netdev, plan(iface, full_changes(want), str(STAND_IN), sysfs, cfg)))
    script = tmp_path / "apply.sh"
    script.write_text(boot_script(items))
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    for netdev, dev in (("ens1f0np0", "mlx5_0"), ("ens2f0np0", "mlx5_1")):
        iface = {"netdev": netdev, "rdma_device": dev, "port": 1}
        out = subprocess.run([str(STAND_IN), "-i", netdev], capture_output=True, text=True, env=env, check=True).stdout
        current, missing, _unused = read_current(iface, out, sysfs, cfg, want)
        assert missing == [] and diff(want, current) == []
    # A knob that cannot be written makes the script exit 1 naming it, after running every other step.
    os.remove(os.path.join(sysfs, "class", "net", "ens1f0np0", "ecn", "roce_np", "cnp_dscp"))
    os.mkdir(os.path.join(sysfs, "class", "net", "ens1f0np0", "ecn", "roce_np", "cnp_dscp"))
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1
    assert "cannot write 48 to " + sysfs + "/class/net/ens1f0np0/ecn/roce_np/cnp_dscp" in done.stderr


def test_boot_script_quotes_odd_paths():
    script = boot_script([("eth0", [{"write": "/tmp/a b/c", "value": "1"}, {"argv": ["mlnx_qos", "-i", "eth0"]}])])
    assert "put '/tmp/a b/c' 1\n" in script
    assert "step mlnx_qos -i eth0\n" in script
