"""The ib_phy module's glue: arguments in, the reading out, one sentence on failure (the lab's mlxlink runs)."""

import subprocess
import sys
from pathlib import Path

from ansible_collections.ibtune.fabric.plugins.modules import ib_phy
from tests.unit.modules_harness import run_module

ROOT = Path(__file__).resolve().parents[4]


def tree(tmp_path, monkeypatch):
    sysfs = tmp_path / "sys"
    spec = ROOT / "tests" / "lab" / "fabric" / "nodes" / "default.json"
    subprocess.run(
        [sys.executable, str(ROOT / "tests" / "lab" / "sysfs_tree.py"), "--spec", str(spec), "--root", str(sysfs)],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("IBTUNE_LAB_NODE", "gpu01")
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", str(sysfs))
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(tmp_path / "none.json"))
    monkeypatch.setenv("IBTUNE_LAB_PHY_STATE", str(tmp_path / "phy"))
    return str(sysfs)


def test_reads_every_port_and_says_nothing_was_cleared(tmp_path, monkeypatch):
    sysfs = tree(tmp_path, monkeypatch)
    exe = str(ROOT / "tests" / "lab" / "mlxlink_sim.py")
    result = run_module(ib_phy, {"sysfs_root": sysfs, "executable": exe, "host": "gpu01"})
    assert not result.failed and not result["changed"] and not result["cleared"]
    assert [p["end"] for p in result["ports"]] == [
        {"kind": "host", "host": "gpu01", "device": "mlx5_0", "port": 1},
        {"kind": "host", "host": "gpu01", "device": "mlx5_1", "port": 1},
    ]
    assert result["ports"][0]["reading"]["counters"]["effective_ber"] == 0.0
    assert result["msg"] == "2 ports read; no counter was cleared"


def test_check_mode_never_clears(tmp_path, monkeypatch):
    sysfs = tree(tmp_path, monkeypatch)
    exe = str(ROOT / "tests" / "lab" / "mlxlink_sim.py")
    result = run_module(ib_phy, {"sysfs_root": sysfs, "executable": exe, "clear": True}, check_mode=True)
    assert result["changed"] and not result["cleared"]
    assert not (tmp_path / "phy" / "mlxlink.log").read_text().count("--pc")


def test_no_tool_is_one_sentence(tmp_path, monkeypatch):
    sysfs = tree(tmp_path, monkeypatch)
    result = run_module(ib_phy, {"sysfs_root": sysfs, "executable": str(tmp_path / "mlxlink")})
    assert result.failed and result["msg"].startswith(str(tmp_path / "mlxlink") + " not found: install NVIDIA MFT")


def test_a_saved_net_dump_ext_is_read_without_a_tool(tmp_path):
    path = ROOT / "tests" / "fixtures" / "phy" / "constructed" / "ibdiagnet2.net_dump_ext"
    result = run_module(ib_phy, {"host_ports": False, "net_dump_ext": str(path)})
    assert not result.failed and result["executable"] is None and len(result["ports"]) == 4
    assert result["ports"][0]["end"]["kind"] == "switch" and result["ports"][2]["end"]["host"] == "n08509"


def test_a_saved_db_csv_and_log_are_read_without_a_tool():
    here = ROOT / "tests" / "fixtures" / "phy" / "constructed"
    args = {
        "host_ports": False,
        "db_csv": str(here / "ibdiagnet2.db_csv"),
        "ibdiagnet_log": str(here / "ibdiagnet2.log"),
    }
    result = run_module(ib_phy, args)
    assert not result.failed and result["executable"] is None and len(result["ports"]) == 3
    leaf = result["ports"][0]
    assert leaf["end"] == {
        "kind": "switch",
        "guid": "0x0c42a10300aa0001",
        "port": 2,
        "node_desc": "MF0;leaf4:MQM9700/U1",
        "switch": "MF0;leaf4:MQM9700/U1",
    }
    assert leaf["reading"]["counters"]["symbol_ber"] == 0.0 and leaf["reading"]["module"]["serial"] == "MT2250FT00012"
    assert result["ports"][2]["end"]["host"] == "gpu01" and result["db_csv_unread"] == ["PHY_DB12"]
    assert result["ber_check"]["findings"][0]["value"] == 2e-12


def test_a_truncated_db_csv_is_one_sentence(tmp_path):
    path = tmp_path / "ibdiagnet2.db_csv"
    path.write_text("START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1,0\n")
    result = run_module(ib_phy, {"host_ports": False, "db_csv": str(path)})
    assert result.failed and "PM_INFO is never closed" in result["msg"] and str(path) in result["msg"]
