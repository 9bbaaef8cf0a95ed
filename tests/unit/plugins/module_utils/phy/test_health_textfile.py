"""The node health check's PHY part and the textfile, on the lab's mlxlink."""

import subprocess

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import health, module, textfile

PORTS = [{"device": "mlx5_0", "port": 1}, {"device": "mlx5_1", "port": 1}]


def test_off_by_default_and_healthy_when_on(lab):
    assert health.node_problems({}, PORTS) == []
    assert health.node_problems({"enabled": True, "executable": lab.executable}, PORTS) == []
    assert all("--rx_fec_histogram" not in argv for argv in lab.log())  # the cheapest query, no histogram


def test_effective_ber_off_its_sentinel_and_a_hot_module_are_problems(lab):
    lab.set_map({"phy": {"ports": {
        "node2/mlx5_0": {"effective_errors_per_min": 1000},
        "node2/mlx5_1": {"temperature_c": 76, "serial": "MT24HOT"},
    }}})  # fmt: skip
    problems = health.node_problems({"enabled": True, "executable": lab.executable}, PORTS)
    assert len(problems) == 2
    assert problems[0].startswith("mlx5_0 port 1: effective BER ") and "above the no-errors value" in problems[0]
    assert problems[1] == "mlx5_1 port 1: module at 76 C (limit 75 C, its alarm 75 C) (module serial MT24HOT)"
    assert not any("--pc" in argv for argv in lab.log())


def test_a_missing_tool_is_one_problem_and_a_bad_key_a_config_error(lab):
    assert health.node_problems({"enabled": True, "executable": "/nonexistent/mlxlink"}, PORTS) == [
        "PHY check: /nonexistent/mlxlink not found (install MFT or mstflint, or turn node_health_phy off)"
    ]
    with pytest.raises(ValueError, match="unknown phy keys"):
        health.config({"enable": True})


def test_textfile_passes_promtool_and_omits_what_is_unknown(lab, tmp_path):
    lab.clock(1_800_000_000)
    lab.set_map({"phy": {"ports": {"node2/mlx5_1": {"lane_ber": {"2": 2e-7}, "fec_tail_per_min": 3}}}})
    out = tmp_path / "ibtune_phy.prom"
    assert textfile.main(["--out", str(out), "--executable", lab.executable, "--sysfs-root", lab.sysfs_root]) == 0
    text = out.read_text()
    assert 'ibtune_phy_raw_ber{device="mlx5_1",port="1",lane="2"} 2e-07' in text
    assert 'ibtune_phy_effective_ber{device="mlx5_0",port="1"} 0.0' in text
    assert 'ibtune_phy_fec_tail_total{device="mlx5_1",port="1"} 4320' in text
    assert 'ibtune_phy_module_info{device="mlx5_0",port="1",vendor="Nvidia",part_number="MMA4Z00-NS"' in text
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_textfile_of_a_passive_dac_has_no_made_up_zeros():
    from pathlib import Path

    from ansible_collections.ibtune.fabric.plugins.module_utils.phy import mlxlink

    fix = Path(__file__).resolve().parents[5] / "tests" / "fixtures" / "phy"
    reading = mlxlink.parse((fix / "mlxlink-4.30.1-text-bluefield3-100g-dac-port0.txt").read_text())
    text = textfile.render([{"end": {"device": "mlx5_0", "port": 1}, "reading": reading, "read_at": 1.0}])
    assert "ibtune_phy_module_temperature_celsius" not in text and "rx_power" not in text
    assert 'ibtune_phy_effective_ber{device="mlx5_0",port="1"} 0.0' in text
    assert (
        'ibtune_phy_module_info{device="mlx5_0",port="1",vendor="FS",part_number="Q28-PC03",'
        'serial="REDACTED-1",identifier="QSFP28"} 1' in text
    )


def test_an_unreadable_port_is_up_0(lab):
    result = module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable, "devices": ["mlx5_9"]})
    assert textfile.render(result["ports"]).splitlines()[2] == 'ibtune_phy_up{device="mlx5_9",port="1"} 0'
