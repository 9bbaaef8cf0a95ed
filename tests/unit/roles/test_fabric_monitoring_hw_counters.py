"""roles/fabric_monitoring/files/ibtune-hw-counters.py, run as the systemd timer runs it (a real subprocess)
against a fixture sysfs tree shaped like the kernel's; its output is checked by promtool's exposition linter."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lab.sysfs_tree import build_tree

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "roles" / "fabric_monitoring" / "files" / "ibtune-hw-counters.py"
SAMPLE = re.compile(r'^ibtune_rdma_hw_events_total\{device="([^"]+)",port="(\d+)",counter="([^"]+)"\} (\d+)$')

SPEC = {
    "devices": {
        "mlx5_0": {
            "ports": {
                1: {
                    "link_layer": "Ethernet",
                    "rate": "200 Gb/sec (4X HDR)",
                    "hw_counters": {
                        "out_of_sequence": 11,
                        "np_cnp_sent": 14,
                        "rp_cnp_handled": 15,
                        "np_ecn_marked_roce_packets": 13,
                        "local_ack_timeout_err": 16,
                        "rp_cnp_ignored": 0,
                        "lifespan": 10,
                        "resp_cqe_error": "N/A",
                    },
                }
            }
        },
        # an InfiniBand HCA without hw_counters/ (older drivers): contributes nothing, breaks nothing
        "mlx4_0": {"ports": {1: {}, 2: {"state": "1: DOWN"}}},
        "mlx5_1": {"ports": {1: {"hw_counters": {"out_of_sequence": 18446744073709551615}}}},
    }
}


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], check=False, capture_output=True, text=True, timeout=30)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "sys"
    build_tree(str(root), SPEC)
    return root


def samples(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, "malformed sample line: %r" % line
        out[match.group(1, 2, 3)] = int(match.group(4))
    return out


def test_writes_every_numeric_counter_with_device_port_labels(tree, tmp_path):
    out = tmp_path / "textfile" / "ibtune_hw_counters.prom"
    out.parent.mkdir()
    result = run("--sysfs-root", str(tree), "--output", str(out))
    assert result.returncode == 0, result.stderr
    got = samples(out.read_text())
    assert got == {
        ("mlx5_0", "1", "local_ack_timeout_err"): 16,
        ("mlx5_0", "1", "np_cnp_sent"): 14,
        ("mlx5_0", "1", "np_ecn_marked_roce_packets"): 13,
        ("mlx5_0", "1", "out_of_sequence"): 11,
        ("mlx5_0", "1", "rp_cnp_handled"): 15,
        ("mlx5_0", "1", "rp_cnp_ignored"): 0,
        ("mlx5_1", "1", "out_of_sequence"): 18446744073709551615,
    }
    # only the .prom file is left: the temporary file was renamed over it
    assert [p.name for p in out.parent.iterdir()] == ["ibtune_hw_counters.prom"]
    assert oct(out.stat().st_mode & 0o777) == "0o644"


def test_rewrites_the_file_with_new_values(tree, tmp_path):
    out = tmp_path / "ibtune_hw_counters.prom"
    assert run("--sysfs-root", str(tree), "--output", str(out)).returncode == 0
    counter = tree / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "hw_counters" / "out_of_sequence"
    counter.write_text("4242")
    assert run("--sysfs-root", str(tree), "--output", str(out)).returncode == 0
    assert samples(out.read_text())[("mlx5_0", "1", "out_of_sequence")] == 4242


def test_host_without_rdma_devices_gets_a_valid_empty_file(tmp_path):
    out = tmp_path / "ibtune_hw_counters.prom"
    result = run("--sysfs-root", str(tmp_path / "nothing"), "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert samples(out.read_text()) == {}
    assert out.read_text().startswith("# HELP ibtune_rdma_hw_events_total ")


def test_missing_output_directory_is_one_clear_sentence(tree, tmp_path):
    result = run("--sysfs-root", str(tree), "--output", str(tmp_path / "absent" / "x.prom"))
    assert result.returncode == 2
    assert "textfile directory" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_output_passes_promtool_check_metrics(tree, tmp_path):
    out = tmp_path / "ibtune_hw_counters.prom"
    assert run("--sysfs-root", str(tree), "--output", str(out)).returncode == 0
    lint = subprocess.run(
        ["promtool", "check", "metrics"], check=False, input=out.read_text(), capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
