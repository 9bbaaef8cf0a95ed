"""PCIe saturation: link capacities, the real NVML readings of the lent H200 (idle and under a host-to-device /
device-to-host copy loop, tests/fixtures/monitoring/nvml-h200), and NICs from sysfs counters."""

import json
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring import pcie
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import samples

NVML = Path(__file__).resolve().parents[4] / "fixtures" / "monitoring" / "nvml-h200"


def _nvml(name):
    doc = json.loads((NVML / ("nvml-%s.json" % name)).read_text())
    return doc["static"][0], [round_[0] for round_ in doc["samples"]]


@pytest.mark.parametrize(
    ("gts", "width", "gbytes"),
    [
        (32.0, 16, 63.015),  # Gen5 x16, what nvidia-smi and NVML report for the H200
        (16.0, 16, 31.508),  # Gen4 x16: a 400G NIC (50 GB/s) in this slot is PCIe-bound
        (8.0, 16, 15.754),
        (2.5, 1, 0.25),  # Gen1: 8b/10b
        (5.0, 8, 4.0),
        (64.0, 16, 121.0),  # Gen6 FLIT
        (None, 16, 0.0),
        (32.0, None, 0.0),
    ],
)
def test_link_capacity(gts, width, gbytes):
    assert pcie.link_bytes_per_second(gts, width) / 1e9 == pytest.approx(gbytes, abs=1e-3)


def test_real_h200_idle_reads_near_zero():
    static, found = _nvml("idle")
    assert static["name"] == "NVIDIA H200" and static["max_gen"] == 5 and static["max_width"] == 16
    record = pcie.gpu_window(static, found)
    assert record["capacity"] / 1e9 == pytest.approx(63.015, abs=1e-3)
    assert record["rx_ratio"] < 1e-4 and record["tx_ratio"] < 1e-4
    assert not record["degraded"]


@pytest.mark.parametrize(("name", "direction"), [("h2d", "rx"), ("d2h", "tx")])
def test_real_h200_copy_loop_saturates_its_direction(name, direction):
    """A pinned 1 GiB copy loop moved ~55 GB/s of payload; NVML counts headers too and reads ~0.95 of the link."""
    static, found = _nvml(name)
    record = pcie.gpu_window(static, found)
    other = "tx" if direction == "rx" else "rx"
    assert 0.9 < record[direction + "_ratio"] <= 1.0
    assert record[direction + "_peak_ratio"] >= record[direction + "_ratio"]
    assert record[other + "_ratio"] < 0.2
    assert not record["degraded"]


def test_a_narrow_gpu_link_is_degraded_a_slow_idle_one_is_not():
    static = {"index": 0, "max_gen": 5, "max_width": 16}
    idle_gen1 = [{"gen": 1, "width": 16, "tx_kbps": 500, "rx_kbps": 700}]
    assert not pcie.gpu_degraded(idle_gen1, static)  # power saving: idle GPUs downtrain
    busy_gen4 = [{"gen": 4, "width": 16, "tx_kbps": 0, "rx_kbps": 25_000_000}]
    assert pcie.gpu_degraded(busy_gen4, static)
    narrow = [{"gen": 5, "width": 8, "tx_kbps": 0, "rx_kbps": 0}]
    assert pcie.gpu_degraded(narrow, static)
    record = pcie.gpu_window(static, busy_gen4)
    # the ratio is against the link as trained (Gen4 x16), so a busy degraded link reads saturated
    assert record["rx_ratio"] == pytest.approx(25e9 / pcie.link_bytes_per_second(16.0, 16))


def test_nic_capacity_is_the_smaller_of_pcie_and_ports():
    gen4 = {"speed_gts": 16.0, "width": 16}
    assert pcie.nic_capacity(gen4, [400.0]) == (pytest.approx(31.5e9, rel=1e-3), "pcie")
    gen5 = {"speed_gts": 32.0, "width": 16}
    assert pcie.nic_capacity(gen5, [400.0]) == (50e9, "port")
    assert pcie.nic_capacity(gen5, [200.0, 200.0]) == (50e9, "port")  # a dual-port card shares its slot
    assert pcie.nic_capacity({}, [100.0]) == (12.5e9, "port")
    assert pcie.nic_capacity(gen5, []) == (pytest.approx(63.015e9, rel=1e-4), "pcie")


def test_nic_throughput_is_in_four_byte_words_and_refuses_wraps():
    before = {"1": {"port_xmit_data": 1000, "port_rcv_data": 10}}
    after = {"1": {"port_xmit_data": 1000 + 2_500_000_000, "port_rcv_data": 5}}
    rates = pcie.nic_throughput(before, after, 2.0)
    assert rates["tx"] == 5e9  # 2.5e9 words x 4 bytes over 2 s
    assert rates["rx"] is None  # went backwards: a reset or a 32-bit wrap, no rate this window
    assert pcie.nic_throughput({}, after, 2.0) == {"tx": None, "rx": None}


def test_nic_window_and_render():
    static = {
        "pcie": {"speed_gts": 16.0, "width": 16, "max_speed_gts": 16.0, "max_width": 16, "degraded": False},
        "pci_address": "0000:17:00.0",
        "hca_type": "MT4129",
        "port_rates_gbps": [400.0],
    }
    before = {"1": {"port_xmit_data": 0, "port_rcv_data": 0}}
    after = {"1": {"port_xmit_data": int(30e9 / 4), "port_rcv_data": int(3e9 / 4)}}
    nic = pcie.nic_window("mlx5_0", static, before, after, 1.0)
    assert nic["limit"] == "pcie" and nic["tx_ratio"] == pytest.approx(30e9 / 31.5077e9, rel=1e-3)
    gpu_static, gpu_samples = _nvml("h2d")
    text = pcie.render([nic, pcie.gpu_window(gpu_static, gpu_samples)], {"nvml": True, "sysfs": True})
    found = {(n, lab.get("kind"), lab.get("device"), lab.get("direction")): float(v) for n, lab, v in samples(text)}
    assert found[("ibtune_pcie_saturation_ratio", "nic", "mlx5_0", "tx")] == pytest.approx(0.952, abs=1e-3)
    assert found[("ibtune_pcie_saturation_ratio", "gpu", "nvidia0", "rx")] > 0.9
    assert found[("ibtune_pcie_capacity_bytes_per_second", "gpu", "nvidia0", None)] == pytest.approx(63.015e9, 1e-4)
    assert found[("ibtune_pcie_link_degraded", "nic", "mlx5_0", None)] == 0
    info = [lab for n, lab, _v in samples(text) if n == "ibtune_pcie_device_info"]
    assert {i["limit"] for i in info} == {"pcie"}
    assert {i["uuid"] for i in info if i["kind"] == "gpu"} == {gpu_static["uuid"]}
    assert 'ibtune_pcie_source_up{source="nvml"} 1' in text


def test_real_exporter_outputs_of_the_h200_say_the_same():
    """exporter-h200/pcie-*.prom: what the exporter itself wrote on the H200 during each phase."""
    base = NVML.parent / "exporter-h200"

    def ratio(phase, direction):
        for name, labels, value in samples((base / ("pcie-%s.prom" % phase)).read_text()):
            if name == "ibtune_pcie_saturation_ratio" and labels["direction"] == direction:
                return float(value)
        return None

    assert ratio("idle", "rx") < 1e-3 and ratio("idle", "tx") < 1e-3
    assert ratio("h2d", "rx") > 0.9 and ratio("d2h", "tx") > 0.9
