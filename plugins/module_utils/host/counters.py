# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port error/congestion counters: snapshots, deltas, saturation and threshold violations.

Pure functions over the sysfs ABI; ib_counters and the validation role call them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import os

from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import (
    list_devices,
    list_ports,
    port_dir,
    read_text,
)

# Bit widths of the saturating PortCounters (IBA 16.1.3.5) as the kernel exposes them (source "sysfs" and "pma";
# width() gives them per source: PortCountersExtended readings are 64-bit).
# A counter at 2**width - 1 is stuck: it can no longer show an increase.
COUNTER_WIDTHS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    # PortXmitWait: the kernel reads it from PortCounters, 32 bits (drivers/infiniband/core/sysfs.c), never
    # from PortCountersExtended; it pins at 4294967295 on a congested port (corpus: ibqueryerrors, SX6036).
    "port_xmit_wait": 32,
}

PHYSICAL = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "local_link_integrity_errors",
    "port_rcv_remote_physical_errors",
    "excessive_buffer_overrun_errors",
    "port_rcv_errors",
)
CONGESTION = (
    "port_xmit_wait",
    "port_xmit_discards",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "out_of_buffer",
)
LOSS = (
    "out_of_sequence",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "duplicate_request",
    "roce_adp_retrans",
    "roce_slow_restart",
    "rnr_nak_retry_err",
    "req_transport_retries_exceeded",
)

# Physical-layer trouble allows no increase at all by default; everything else is
# reported but not gated unless the user gives a threshold.
DEFAULT_THRESHOLDS = dict((name, 0) for name in PHYSICAL)


# The files of ports/<n>/counters/ the kernel's ib_core writes (drivers/infiniband/core/sysfs.c, IBA PortCounters
# and PortCountersExtended) and those of ports/<n>/hw_counters/ of mlx5 (drivers/infiniband/hw/mlx5/counters.c).
STANDARD_COUNTERS = (
    "VL15_dropped",
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
)
MLX5_HW_COUNTERS = (
    "duplicate_request",
    "implied_nak_seq_err",
    "lifespan",
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "req_cqe_error",
    "req_cqe_flush_error",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "req_rnr_retries_exceeded",
    "req_transport_retries_exceeded",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rnr_nak_retry_err",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_atomic_requests",
    "rx_dct_connect",
    "rx_icrc_encapsulated",
    "rx_read_requests",
    "rx_write_requests",
)


def unknown_thresholds(thresholds, snap=None):
    """One sentence per threshold whose counter name no port has and no kernel/mlx5 counter carries, with a
    did-you-mean: a misspelled name would otherwise gate nothing. Names present in snap (any port) are known."""
    known = set(STANDARD_COUNTERS) | set(MLX5_HW_COUNTERS) | set(PHYSICAL) | set(CONGESTION) | set(LOSS)
    for values in (snap or {}).values():
        known.update(values)
    out = []
    for name in sorted(thresholds or {}):
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        out.append(
            "thresholds.%s names no counter of ports/<n>/counters or hw_counters%s: correct the name, or it gates"
            " nothing." % (name, " (did you mean %s?)" % close[0] if close else "")
        )
    return out


def category(counter):
    if counter in PHYSICAL:
        return "physical"
    if counter in CONGESTION:
        return "congestion"
    if counter in LOSS:
        return "loss"
    return "other"


def parse_counter(text):
    """Counter file content -> int, or None for "N/A (no PMA)", empty or unreadable values."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def _read_dir(path):
    values = {}
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return values
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full):
            continue
        value = parse_counter(read_text(full))
        if value is not None:
            values[name] = value
    return values


def snapshot(sysfs_root, include_hw_counters=False, devices=None):
    """{'dev:port': {counter: int}} for every port; ports without readable counters map to {}."""
    snap = {}
    for device in list_devices(sysfs_root):
        if devices and device not in devices:
            continue
        for port in list_ports(sysfs_root, device):
            pdir = port_dir(sysfs_root, device, port)
            values = _read_dir(os.path.join(pdir, "counters"))
            if include_hw_counters:
                values.update(_read_dir(os.path.join(pdir, "hw_counters")))
            snap["%s:%s" % (device, port)] = values
    return snap


# Where a reading comes from decides its width (one table, COUNTER_WIDTHS, per source):
#   sysfs    the kernel's ports/<n>/counters: PortCounters widths for the error counters, PortXmitWait 32 bits
#   pma      perfquery / ibqueryerrors from PortCounters: the same widths
#   pma_ext  perfquery -x (PortCountersExtended) and ibqueryerrors on a port with AdditionalPortCounters (its values
#            carry a human-readable suffix): 64 bits, PortXmitWait included
SOURCES = ("sysfs", "pma", "pma_ext")
EXTENDED_BITS = 64


def width(counter, source="sysfs"):
    """The bit width of ``counter`` read from ``source`` (SOURCES), None when it does not saturate there."""
    if source not in SOURCES:
        raise ValueError("counter source must be one of %s, got %r" % (", ".join(SOURCES), source))
    if counter not in COUNTER_WIDTHS:
        return None
    return EXTENDED_BITS if source == "pma_ext" else COUNTER_WIDTHS[counter]


def is_gated(counter, thresholds=None):
    """Whether an increase of ``counter`` fails the port (a threshold >= 0, the physical ones by default)."""
    allowed = effective_thresholds(thresholds).get(counter)
    return allowed is not None and allowed >= 0


def saturated(snap, thresholds=None, source="sysfs", sources=None):
    """[{device, port, counter, value, width, source, gated}] for counters pinned at their maximum: such a counter
    can show no increase. ``sources``: {"dev:port": {counter: source}} where a reading's source differs from
    ``source``. ``gated``: an increase of it would fail the port (is_gated), so the port cannot pass."""
    out = []
    for key in sorted(snap):
        device, port = key.rsplit(":", 1)
        for counter, value in sorted(snap[key].items()):
            origin = ((sources or {}).get(key) or {}).get(counter, source)
            bits = width(counter, origin)
            if bits and value >= (1 << bits) - 1:
                out.append(
                    {"device": device, "port": int(port), "counter": counter, "value": value, "width": bits,
                     "source": origin, "gated": is_gated(counter, thresholds)}
                )  # fmt: skip
    return out


def deltas(previous, current):
    """{'dev:port': {counter: after - before}} for counters present in both snapshots.

    A counter that went down was reset (perfquery -R, driver reload): its delta is the new value.
    """
    out = {}
    for key, values in current.items():
        before = (previous or {}).get(key)
        if before is None:
            continue
        port_deltas = {}
        for counter, after in values.items():
            if counter not in before:
                continue
            delta = after - before[counter]
            port_deltas[counter] = after if delta < 0 else delta
        out[key] = port_deltas
    return out


def effective_thresholds(user_thresholds):
    merged = dict(DEFAULT_THRESHOLDS)
    merged.update(user_thresholds or {})
    return merged


def violations(previous, current, thresholds=None):
    """Counters whose increase exceeds the allowed increase, worst first."""
    allowed_by_counter = effective_thresholds(thresholds)
    found = []
    for key, port_deltas in deltas(previous, current).items():
        device, port = key.rsplit(":", 1)
        for counter, delta in port_deltas.items():
            allowed = allowed_by_counter.get(counter)
            if allowed is None or allowed < 0 or delta <= allowed:
                continue
            found.append(
                {
                    "device": device,
                    "port": int(port),
                    "counter": counter,
                    "before": previous[key][counter],
                    "after": current[key][counter],
                    "delta": delta,
                    "allowed": allowed,
                    "category": category(counter),
                }
            )
    found.sort(key=lambda v: (-v["delta"], v["device"], v["port"], v["counter"]))
    return found


def describe_violations(found, host=None):
    """One sentence naming every violation: what an operator reads in the failed task."""
    where = ("%s " % host) if host else ""
    parts = [
        "%s%s port %s %s rose by %d (%d -> %d, allowed %d)"
        % (where, v["device"], v["port"], v["counter"], v["delta"], v["before"], v["after"], v["allowed"])
        for v in found
    ]
    return "Error counters increased: " + "; ".join(parts) + ". Check cables/transceivers of these ports."


def describe_saturated(stuck, host=None):
    """One sentence for gated counters at their maximum: the port cannot pass, and the fix."""
    where = ("%s " % host) if host else ""
    parts = ["%s%s port %s %s = %d (%d bits)" % (where, s["device"], s["port"], s["counter"], s["value"], s["width"])
             for s in stuck]  # fmt: skip
    return (
        "Gated counters saturated: " + "; ".join(parts) + ". They cannot show new errors, so these ports cannot pass: "
        "reset them (perfquery -R) or read the extended counters (perfquery -x)."
    )
