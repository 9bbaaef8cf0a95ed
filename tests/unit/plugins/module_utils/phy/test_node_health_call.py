"""The node health check (slurm/node_health.py) with its PHY part on, against the lab's mlxlink."""

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import node_health


def config(lab, tmp_path, phy):
    raw = {"sysfs_root": lab.sysfs_root, "ports": ["mlx5_0:1", "mlx5_1:1"], "rate_gbps": 400, "width": 4,
           "state_dir": str(tmp_path / "state"), "nccl_conf": "", "phy": phy}  # fmt: skip
    path = tmp_path / "health.json"
    path.write_text(json.dumps(raw))
    return node_health.load_config(str(path))


def test_phy_off_by_default_keeps_the_check_as_it_was(lab, tmp_path):
    assert node_health.run_checks(config(lab, tmp_path, {})) == []
    assert lab.log() == []


def test_phy_on_names_a_port_whose_errors_reach_the_application(lab, tmp_path):
    cfg = config(lab, tmp_path, {"enabled": True, "executable": lab.executable})
    assert node_health.run_checks(cfg) == []
    lab.set_map({"phy": {"ports": {"node2/mlx5_1": {"effective_errors_per_min": 50, "serial": "MT24BAD"}}}})
    problems = node_health.run_checks(cfg)
    assert len(problems) == 1 and problems[0].startswith("mlx5_1 port 1: effective BER ")
    assert problems[0].endswith("(module serial MT24BAD)")


def test_a_bad_phy_key_is_a_config_error(lab, tmp_path):
    import pytest

    with pytest.raises(node_health.ConfigError, match="unknown phy keys"):
        config(lab, tmp_path, {"enabeld": True})
