"""Reading ports through the lab's mlxlink: argv lists, the histogram fallback, timeouts, clearing only on request."""

import os
import stat
import sys

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import module, read


def ends(*devices):
    return [{"kind": "host", "host": "node2", "device": d, "port": 1} for d in devices]


def test_read_two_ports_in_parallel_parses_both(lab):
    out = read.read_ends(ends("mlx5_0", "mlx5_1"), lab.executable, timeout=20, parallel=2)
    assert [o["error"] for o in out] == [None, None]
    assert [o["reading"]["format"] for o in out] == ["json", "json"]
    assert out[0]["reading"]["link"]["speed_gbps"] == 400.0 and out[0]["reading"]["fec_histogram"]
    assert out[1]["cmd"][1:] == ["-d", "mlx5_1", "-m", "-c", "--rx_fec_histogram", "--show_histogram", "--json"]
    assert not any(flag in argv for argv in lab.log() for flag in ("--pc", "--clear_histogram"))


def test_an_unknown_device_is_an_error_with_the_tools_sentence(lab):
    out = read.read_ends(ends("mlx5_9"), lab.executable, timeout=20)
    assert out[0]["reading"] is None
    assert 'Failed to open device: "mlx5_9"' in out[0]["error"]
    # the failed histogram query was retried without the histogram flags, then reported
    assert [("--rx_fec_histogram" in argv) for argv in lab.log()] == [True, False]


def test_a_query_that_hangs_is_killed_at_its_timeout(tmp_path):
    hang = tmp_path / "mlxlink"
    hang.write_text("#!%s\nimport time\ntime.sleep(60)\n" % sys.executable)
    hang.chmod(hang.stat().st_mode | stat.S_IXUSR)
    out = read.run_many([[str(hang)]], timeout=0.5)
    assert out[0]["timed_out"] and out[0]["rc"] != 0


def test_a_missing_tool_is_no_reading_not_a_crash(tmp_path):
    out = read.read_ends(ends("mlx5_0"), str(tmp_path / "nope"), timeout=5)
    assert out[0]["reading"] is None and "cannot run" in out[0]["error"]


def test_find_executable_prefers_mlxlink_then_mstlink(tmp_path):
    for name in ("mstlink", "mlxlink"):
        path = tmp_path / name
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    assert read.find_executable(None, path=str(tmp_path)) == str(tmp_path / "mlxlink")
    os.remove(tmp_path / "mlxlink")
    assert read.find_executable(None, path=str(tmp_path)) == str(tmp_path / "mstlink")
    assert read.find_executable("mlxlink", path=str(tmp_path)) is None


def test_module_run_reads_every_port_and_clears_nothing_by_default(lab):
    result = module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable, "host": "node2"})
    assert [p["end"]["device"] for p in result["ports"]] == ["mlx5_0", "mlx5_1"]
    assert not result["changed"] and not result["cleared"]
    assert "no counter was cleared" in result["msg"]
    assert not any("--pc" in argv for argv in lab.log())


def test_module_run_clears_after_the_read_only_when_asked_and_says_so(lab):
    lab.clock(1_800_000_000)
    first = module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable, "clear": True})
    assert first["changed"] and first["cleared"] and "CLEARED after the read" in first["msg"]
    # the read happened before the clear: it still holds a day of counting
    assert first["ports"][0]["reading"]["counters"]["time_since_clear_min"] == 1440.0
    assert ["-d", "mlx5_0", "--pc"] in lab.log()
    lab.clock(1_800_000_000 + 90)
    again = module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable})
    assert again["ports"][0]["reading"]["counters"]["time_since_clear_min"] == 1.5


def test_module_run_in_check_mode_never_clears(lab):
    result = module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable, "clear": True}, check_mode=True)
    assert result["changed"] and not result["cleared"] and "would be cleared" in result["msg"]
    assert not any("--pc" in argv for argv in lab.log())


def test_switch_ports_are_read_in_band_by_lid(lab):
    result = module.run(
        {"host_ports": False, "executable": lab.executable, "switch_ports": [{"lid": 5, "port": 2, "switch": "leaf4"}]}
    )
    port = result["ports"][0]
    assert port["end"] == {"kind": "switch", "lid": 5, "port": 2, "switch": "leaf4"}
    assert port["cmd"][1:5] == ["-d", "lid-5", "-p", "2"] and port["reading"]["module"]["serial"]


def test_bad_options_fail_with_one_sentence(lab):
    import pytest

    with pytest.raises(module.PhyModuleError, match="needs a lid and a port"):
        module.run({"host_ports": False, "executable": lab.executable, "switch_ports": [{"lid": 5}]})
    with pytest.raises(module.PhyModuleError, match="is not 'mlx5_0' or 'mlx5_0:1'"):
        module.run({"sysfs_root": lab.sysfs_root, "executable": lab.executable, "devices": ["mlx5_0:x"]})
    with pytest.raises(module.PhyModuleError, match="not found: install NVIDIA MFT"):
        module.run({"sysfs_root": lab.sysfs_root, "executable": "/nonexistent/mlxlink"})
