# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe saturation per GPU and per NIC: throughput against what the link can carry, as one ratio per device.

- Capacity of a PCIe link, per direction: transfer rate (GT/s) x lanes x line-code efficiency / 8 bits
  (8b/10b up to Gen2, 128b/130b Gen3-Gen5, 242/256 FLIT for Gen6): Gen5 x16 = 63.0 GB/s.
- GPU: NVML's PCIe throughput (``nvmlDeviceGetPcieThroughput``, KB/s over a 20 ms window, headers included)
  sampled several times per window, each sample against the link as NVML reports it trained at that moment
  (GPUs drop to a lower generation when idle to save power, so the current generation is the capacity of the
  moment). With dcgm-exporter deployed, its ``DCGM_FI_PROF_PCIE_{TX,RX}_BYTES`` (bytes/s) take the place of the
  samples in a recording rule, and only the capacity comes from here.
- NIC: port_xmit_data / port_rcv_data (sysfs counters in 4-byte words, all ports of the device) between two
  reads, against min(PCIe capacity of the device's function, sum of its ports' rates): a 400G port on a Gen4 x16
  slot (31.5 GB/s) is limited by PCIe, not by the port's 50 GB/s.
Pure functions over plain readings; training_exporter.py reads NVML and sysfs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GEN_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
# NVML reports KB/s; taken as 10^3 bytes (measured on an H200, Gen5 x16: a saturating host-to-device copy reads
# 59.6e6 KB/s against 63.0 GB/s of link capacity; 2^10 would put it at 0.97 of the link, 10^3 at 0.95).
NVML_KB = 1000
WORD_BYTES = 4
DIRECTIONS = ("tx", "rx")
# A GPU link below its maximum generation is degraded only while it carries traffic: idle GPUs downtrain on
# purpose. "Carries traffic" = a sample above this fraction of what the maximum link could carry.
BUSY_FRACTION = 0.10


def encoding_efficiency(gts):
    """Share of the raw transfer rate that carries data after line coding."""
    if gts <= 5.0:
        return 8.0 / 10.0
    if gts <= 32.0:
        return 128.0 / 130.0
    return 242.0 / 256.0


def link_bytes_per_second(gts, width):
    """Data bytes per second per direction of a PCIe link (0 when speed or width is unknown)."""
    if not gts or not width:
        return 0.0
    return gts * 1e9 * width * encoding_efficiency(gts) / 8.0


def gen_gts(gen):
    """A PCIe generation (NVML's number) -> its transfer rate in GT/s; None when unknown."""
    return GEN_GTS.get(gen)


def gpu_sample_ratios(sample):
    """{direction: bytes/s, direction_ratio: share of the link as trained now} of one NVML sample."""
    capacity = link_bytes_per_second(gen_gts(sample.get("gen")), sample.get("width"))
    out = {"capacity": capacity}
    for direction in DIRECTIONS:
        value = sample.get("%s_kbps" % direction)
        rate = None if value is None else float(value) * NVML_KB
        out[direction] = rate
        out[direction + "_ratio"] = rate / capacity if rate is not None and capacity > 0 else None
    return out


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _max(values):
    values = [v for v in values if v is not None]
    return max(values) if values else None


def gpu_degraded(samples, static):
    """True when the link trained narrower than it can, or slower than it can while carrying traffic."""
    widths = [s.get("width") for s in samples if s.get("width")]
    if static.get("max_width") and widths and min(widths) < static["max_width"]:
        return True
    full = link_bytes_per_second(gen_gts(static.get("max_gen")), static.get("max_width"))
    for sample in samples:
        busy = max((sample.get("%s_kbps" % d) or 0) * NVML_KB for d in DIRECTIONS)
        if full and busy > BUSY_FRACTION * full and sample.get("gen") and sample["gen"] < static.get("max_gen", 0):
            return True
    return False


def gpu_window(static, samples):
    """One GPU's window of NVML samples -> its device record (see device_record)."""
    ratios = [gpu_sample_ratios(s) for s in samples]
    last = samples[-1] if samples else {}
    record = {
        "kind": "gpu",
        "device": "nvidia%d" % static["index"],
        "pci_bus_id": static.get("pci_bus_id", ""),
        "uuid": static.get("uuid", ""),
        "model": static.get("name", ""),
        "limit": "pcie",
        "speed_gts": gen_gts(last.get("gen")),
        "width": last.get("width"),
        "max_speed_gts": gen_gts(static.get("max_gen")),
        "max_width": static.get("max_width"),
        "capacity": ratios[-1]["capacity"] if ratios else 0.0,
        "degraded": gpu_degraded(samples, static),
        "samples": len(samples),
    }
    for direction in DIRECTIONS:
        record[direction] = _mean([r[direction] for r in ratios])
        record[direction + "_ratio"] = _mean([r[direction + "_ratio"] for r in ratios])
        record[direction + "_peak_ratio"] = _max([r[direction + "_ratio"] for r in ratios])
    return record


def nic_capacity(pcie, port_rates_gbps):
    """(bytes/s, "pcie"|"port"): what limits a NIC, its PCIe link or the sum of its ports' rates."""
    pcie_bytes = link_bytes_per_second((pcie or {}).get("speed_gts"), (pcie or {}).get("width"))
    port_bytes = sum(r for r in port_rates_gbps if r) * 1e9 / 8.0
    if pcie_bytes and (not port_bytes or pcie_bytes < port_bytes):
        return pcie_bytes, "pcie"
    return port_bytes, "port"


def nic_throughput(before, after, seconds):
    """{tx, rx} bytes/s of a NIC from two reads of {port: {"port_xmit_data": words, "port_rcv_data": words}};
    None for a direction whose counter went backwards (reset, or a 32-bit counter that wrapped) or is missing."""
    names = {"tx": "port_xmit_data", "rx": "port_rcv_data"}
    out = {}
    for direction, counter in names.items():
        total = 0
        for port, values in after.items():
            old, new = (before.get(port) or {}).get(counter), values.get(counter)
            if old is None or new is None or new < old:
                total = None
                break
            total += new - old
        out[direction] = total * WORD_BYTES / seconds if total is not None and seconds > 0 else None
    return out


def nic_window(device, static, before, after, seconds):
    """One NIC between two reads -> its device record (see device_record)."""
    capacity, limit = nic_capacity(static.get("pcie"), static.get("port_rates_gbps", []))
    pcie = static.get("pcie") or {}
    rates = nic_throughput(before, after, seconds)
    record = {
        "kind": "nic",
        "device": device,
        "pci_bus_id": static.get("pci_address") or "",
        "uuid": "",
        "model": static.get("hca_type") or "",
        "limit": limit,
        "speed_gts": pcie.get("speed_gts"),
        "width": pcie.get("width"),
        "max_speed_gts": pcie.get("max_speed_gts"),
        "max_width": pcie.get("max_width"),
        "capacity": capacity,
        "degraded": bool(pcie.get("degraded")),
        "samples": 1,
    }
    for direction in DIRECTIONS:
        ratio = rates[direction] / capacity if rates[direction] is not None and capacity > 0 else None
        record[direction] = rates[direction]
        record[direction + "_ratio"] = ratio
        record[direction + "_peak_ratio"] = ratio
    return record


_PER_DIRECTION = (
    (
        "ibtune_pcie_throughput_bytes_per_second",
        "",
        "Bytes per second through the device's PCIe link, mean over "
        "the exporter's window (GPU: NVML, headers included; NIC: port data counters).",
    ),
    (
        "ibtune_pcie_saturation_ratio",
        "_ratio",
        "Throughput over the link's capacity, mean over the window (1 = the link is full).",
    ),
    (
        "ibtune_pcie_saturation_peak_ratio",
        "_peak_ratio",
        "The highest sample of the saturation ratio in the window (GPU: 20 ms NVML samples; NIC: the window itself).",
    ),
)
_PER_DEVICE = (
    (
        "ibtune_pcie_capacity_bytes_per_second",
        "capacity",
        "Bytes per second per direction the device can move: "
        "PCIe generation x width (GPU), min(PCIe, sum of port rates) (NIC).",
    ),
    ("ibtune_pcie_link_speed_gts", "speed_gts", "PCIe transfer rate the link trained at (GT/s)."),
    ("ibtune_pcie_link_width", "width", "PCIe lanes the link trained at."),
    ("ibtune_pcie_link_max_speed_gts", "max_speed_gts", "Highest PCIe transfer rate of the device and slot (GT/s)."),
    ("ibtune_pcie_link_max_width", "max_width", "Widest PCIe link of the device and slot (lanes)."),
    (
        "ibtune_pcie_link_degraded",
        "degraded",
        "1 when the link trained narrower, or (carrying traffic) slower, than it can.",
    ),
)


def _esc(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs):
    return "{" + ",".join('%s="%s"' % (k, _esc(v)) for k, v in pairs) + "}"


def _value(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return repr(round(float(value), 6))


def _family(name, kind, help_text, samples):
    return ["# HELP %s %s" % (name, help_text), "# TYPE %s %s" % (name, kind)] + [name + s for s in samples]


def render(records, sources):
    """Prometheus text for device records (gpu_window / nic_window) and {source: up 1/0}."""
    records = sorted(records, key=lambda r: (r["kind"], r["device"]))
    lines = []
    for name, suffix, help_text in _PER_DIRECTION:
        samples = []
        for rec in records:
            for direction in DIRECTIONS:
                value = rec.get(direction + suffix)
                if value is not None:
                    labels = _labels((("kind", rec["kind"]), ("device", rec["device"]), ("direction", direction)))
                    samples.append("%s %s" % (labels, _value(value)))
        lines += _family(name, "gauge", help_text, samples)
    for name, key, help_text in _PER_DEVICE:
        samples = [
            "%s %s" % (_labels((("kind", r["kind"]), ("device", r["device"]))), _value(r[key]))
            for r in records
            if r.get(key) is not None
        ]
        lines += _family(name, "gauge", help_text, samples)
    info = [
        "%s 1"
        % _labels(
            (
                ("kind", r["kind"]),
                ("device", r["device"]),
                ("pci_bus_id", r["pci_bus_id"]),
                ("uuid", r["uuid"]),
                ("model", r["model"]),
                ("limit", r["limit"]),
            )
        )
        for r in records
    ]
    lines += _family(
        "ibtune_pcie_device_info",
        "gauge",
        "The device's PCI address, GPU UUID, model and what limits its capacity (pcie or port).",
        info,
    )
    up = ['{source="%s"} %d' % (s, 1 if ok else 0) for s, ok in sorted(sources.items())]
    lines += _family(
        "ibtune_pcie_source_up",
        "gauge",
        "1 when the exporter could read this source (nvml, sysfs) in its last window.",
        up,
    )
    return "\n".join(lines) + "\n"
