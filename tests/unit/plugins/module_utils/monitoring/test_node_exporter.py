"""node_exporter.infiniband_verdict on the real node_exporter (Debian 12's prometheus-node-exporter 1.5.0) run
against fixture sysfs trees: one RDMA device without counters/ blinds the whole infiniband collector."""

import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from ansible_collections.ibtune.fabric.plugins.filter.node_exporter import node_exporter_ib_verdict
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import (
    devices_without_counters,
    infiniband_verdict,
    samples,
    scrape_url,
)
from tests.lab.sysfs_tree import build_tree

BINARY = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
needs_node_exporter = pytest.mark.skipif(BINARY is None, reason="prometheus-node-exporter (Debian) is not installed")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _scrape(sysfs):
    port = _free_port()
    argv = [BINARY, "--web.listen-address=127.0.0.1:%d" % port, "--path.sysfs=%s" % sysfs]
    argv += ["--collector.disable-defaults", "--collector.infiniband"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _unused in range(100):
            try:
                with urllib.request.urlopen(scrape_url("127.0.0.1:%d" % port), timeout=2) as resp:
                    return resp.read().decode()
            except OSError:
                assert proc.poll() is None, "node_exporter exited"
                time.sleep(0.1)
        pytest.fail("node_exporter did not answer")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _dirs(root):
    class_root = os.path.join(root, "class", "infiniband")
    out = []
    for dirpath, dirnames, _files in os.walk(class_root, followlinks=True):
        depth = os.path.relpath(dirpath, class_root).count(os.sep)
        if depth >= 3:  # as find depth: 4 (dirs 4 levels below class/infiniband are listed)
            dirnames[:] = []
        out.extend(os.path.join(dirpath, d) for d in dirnames)
    return class_root, out


TWO = {"devices": {"mlx5_0": {}, "mlx5_1": {"ports": {1: {"counters": False}}}}}


@needs_node_exporter
def test_one_device_without_counters_blinds_node_exporter_1_5_and_the_verdict_names_it(tmp_path):
    root = build_tree(str(tmp_path / "sys"), TWO)
    body = _scrape(root)
    # The real blind spot: no InfiniBand sample at all, the collector reported failed.
    assert 'node_scrape_collector_success{collector="infiniband"} 0' in body
    assert not [n for n, _l, _v in samples(body) if n.startswith("node_infiniband_")]
    class_root, dirs = _dirs(root)
    verdict = node_exporter_ib_verdict(body, class_root, dirs, "gpu-a01")
    assert verdict["ok"] is False and verdict["collector_success"] == "0"
    assert verdict["msg"].startswith("node_exporter 1.5.0 on gpu-a01 exports no InfiniBand metrics at all")
    assert "mlx5_1 has no counters/ directory" in verdict["msg"]
    assert "fabric_monitoring_install_method=archive" in verdict["msg"]


@needs_node_exporter
def test_every_device_with_counters_is_ok(tmp_path):
    root = build_tree(str(tmp_path / "sys"), {"devices": {"mlx5_0": {}, "mlx5_1": {}}})
    body = _scrape(root)
    class_root, dirs = _dirs(root)
    assert devices_without_counters(class_root, dirs) == []
    verdict = infiniband_verdict(body, [], "gpu-a01")
    assert verdict["ok"] is True and verdict["infiniband_samples"] > 20


def test_devices_without_counters_from_directory_paths():
    dirs = ["/s/ci/mlx5_0", "/s/ci/mlx5_0/ports", "/s/ci/mlx5_0/ports/1", "/s/ci/mlx5_0/ports/1/counters"]
    dirs += ["/s/ci/mlx5_1/ports/1", "/s/ci/mlx5_1/ports/2", "/s/ci/mlx5_1/ports/2/counters", "/s/ci/mlx5_1/device/x"]
    assert devices_without_counters("/s/ci/", dirs) == ["mlx5_1"]


def test_no_collector_at_all_says_to_enable_it():
    verdict = infiniband_verdict('node_exporter_build_info{version="1.5.0"} 1\n')
    assert not verdict["ok"] and "--collector.infiniband" in verdict["msg"]


def test_failed_collector_without_missing_counters_points_at_the_debug_log():
    text = 'node_scrape_collector_success{collector="infiniband"} 0\n'
    assert "--log.level=debug" in infiniband_verdict(text)["msg"]


@pytest.mark.parametrize(
    "address,url",
    [
        (":9100", "http://127.0.0.1:9100/metrics"),
        ("0.0.0.0:9100", "http://127.0.0.1:9100/metrics"),
        ("127.0.0.1:9200", "http://127.0.0.1:9200/metrics"),
        ("[::]:9100", "http://[::1]:9100/metrics"),
        ("10.0.0.5:9100", "http://10.0.0.5:9100/metrics"),
    ],
)
def test_scrape_url(address, url):
    assert scrape_url(address) == url


@needs_node_exporter
def test_a_host_without_rdma_devices_is_ok_although_the_collector_reports_no_data(tmp_path):
    root = build_tree(str(tmp_path / "sys"), {"devices": {}})
    body = _scrape(root)
    class_root, dirs = _dirs(root)
    verdict = node_exporter_ib_verdict(body, class_root, dirs, "sm-01")
    assert verdict["ok"] is True and "has no RDMA device" in verdict["msg"]
