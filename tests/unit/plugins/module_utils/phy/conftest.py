"""The lab's mlxlink simulator (tests/lab/mlxlink_sim.py) as the real executable the PHY code runs, on a fixture
RDMA tree built by tests/lab/sysfs_tree.py: no mock, the same argv and output paths as on a node."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[5]
SIM = ROOT / "tests" / "lab" / "mlxlink_sim.py"
SPEC = ROOT / "tests" / "lab" / "fabric" / "nodes" / "default.json"


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A node "node2" with mlx5_0 and mlx5_1 (4X NDR), a fabric map to fill in, and the simulator's paths."""
    sysfs = tmp_path / "sys"
    subprocess.run(
        [sys.executable, str(ROOT / "tests" / "lab" / "sysfs_tree.py"), "--spec", str(SPEC), "--root", str(sysfs)],
        check=True,
        capture_output=True,
    )
    fabric = tmp_path / "fabric.json"
    fabric.write_text("{}")
    monkeypatch.setenv("IBTUNE_LAB_NODE", "node2")
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", str(sysfs))
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(fabric))
    monkeypatch.setenv("IBTUNE_LAB_PHY_STATE", str(tmp_path / "phy"))

    class Lab:
        root = tmp_path
        executable = str(SIM)
        sysfs_root = str(sysfs)

        def set_map(self, value):
            fabric.write_text(json.dumps(value))

        def log(self):
            path = tmp_path / "phy" / "mlxlink.log"
            return [json.loads(line)["argv"] for line in path.read_text().splitlines()] if path.exists() else []

        def clock(self, seconds):
            monkeypatch.setenv("IBTUNE_LAB_NOW", str(seconds))

    return Lab()
