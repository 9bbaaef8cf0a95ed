# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# Apache License 2.0 (see LICENSE)
"""The collection's one QoS model (``ibtune_qos``) and what every layer derives from it.

NCCL_IB_TC / NCCL_IB_SL, host PFC/ECN/trust, switch config and OpenSM's QoS all come from
normalize_model(); nothing else declares DSCPs or priorities.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MODES = ("roce_lossless", "infiniband", "none")
ECN_BITS = {"none": 0, "ect1": 1, "ect0": 2}

# NVIDIA's RoCE lossless recipe: DSCP 26 -> priority 3 with PFC, ECN on, CNPs on DSCP 48 /
# priority 6. On InfiniBand NCCL uses SL 0 unless told otherwise.
DEFAULT_MODEL = {
    "mode": "roce_lossless",
    "roce_dscp": 26,
    "roce_priority": 3,
    "ecn": "ect0",
    "cnp_dscp": 48,
    "cnp_priority": 6,
    "ib_sl": 0,
    "ib_max_vls": 8,
    "ib_high_limit": 0,
    # "VL:weight" lists; weights are in 64-byte units (OpenSM).
    "ib_vlarb_high": "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0",
    "ib_vlarb_low": "0:64,1:64,2:64,3:64,4:64,5:64,6:64,7:64",
    # SL -> VL for SL 0..15.
    "ib_sl2vl": "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7",
}


class QosModelError(ValueError):
    """Raised with one sentence naming the key, the value and the fix."""


def _int_in(model, key, low, high):
    value = model[key]
    if isinstance(value, bool):
        raise QosModelError("ibtune_qos.%s=%r must be an integer %d..%d." % (key, value, low, high))
    try:
        value = int(value)
    except (TypeError, ValueError):
        raise QosModelError("ibtune_qos.%s=%r must be an integer %d..%d." % (key, value, low, high))
    if not low <= value <= high:
        raise QosModelError("ibtune_qos.%s=%d is out of range: use %d..%d." % (key, value, low, high))
    return value


def normalize_model(model=None):
    """Fill defaults and validate; returns a new dict. Raises QosModelError."""
    merged = dict(DEFAULT_MODEL)
    unknown = sorted(set(model or {}) - set(DEFAULT_MODEL))
    if unknown:
        raise QosModelError(
            "ibtune_qos has unknown key(s) %s: valid keys are %s."
            % (", ".join(unknown), ", ".join(sorted(DEFAULT_MODEL)))
        )
    merged.update(model or {})
    if merged["mode"] not in MODES:
        raise QosModelError("ibtune_qos.mode=%r is not one of %s." % (merged["mode"], ", ".join(MODES)))
    if merged["ecn"] not in ECN_BITS:
        raise QosModelError("ibtune_qos.ecn=%r is not one of %s." % (merged["ecn"], ", ".join(sorted(ECN_BITS))))
    for key in ("roce_dscp", "cnp_dscp"):
        merged[key] = _int_in(merged, key, 0, 63)
    for key in ("roce_priority", "cnp_priority"):
        merged[key] = _int_in(merged, key, 0, 7)
    merged["ib_sl"] = _int_in(merged, "ib_sl", 0, 15)
    merged["ib_max_vls"] = _int_in(merged, "ib_max_vls", 1, 15)
    merged["ib_high_limit"] = _int_in(merged, "ib_high_limit", 0, 255)
    if merged["mode"] == "roce_lossless" and merged["roce_priority"] == merged["cnp_priority"]:
        raise QosModelError(
            "ibtune_qos.cnp_priority=%d equals roce_priority: CNPs must travel on their own (strict) priority."
            % merged["cnp_priority"]
        )
    return merged


def nccl_tc(dscp, ecn="ect0"):
    """NCCL_IB_TC traffic-class byte: DSCP << 2 | ECN bits (26, ect0 -> 106; ect1 -> 105; none -> 104)."""
    if isinstance(dscp, bool):
        raise QosModelError("dscp=%r must be an integer 0..63." % (dscp,))
    try:
        dscp = int(dscp)
    except (TypeError, ValueError):
        raise QosModelError("dscp=%r must be an integer 0..63." % (dscp,))
    if not 0 <= dscp <= 63:
        raise QosModelError("dscp=%d is out of range 0..63." % dscp)
    if ecn not in ECN_BITS:
        raise QosModelError("ecn=%r is not one of %s." % (ecn, ", ".join(sorted(ECN_BITS))))
    return (dscp << 2) | ECN_BITS[ecn]


def tc_to_dscp(tc):
    """Inverse of nccl_tc: (dscp, ecn name)."""
    tc = int(tc)
    ecn = {v: k for k, v in ECN_BITS.items()}.get(tc & 3, "ce")
    return tc >> 2, ecn


def nccl_qos_env(model):
    """The NCCL variables the model implies: NCCL_IB_TC on RoCE, NCCL_IB_SL on InfiniBand."""
    model = normalize_model(model)
    if model["mode"] == "roce_lossless":
        return {"NCCL_IB_TC": str(nccl_tc(model["roce_dscp"], model["ecn"]))}
    if model["mode"] == "infiniband":
        return {"NCCL_IB_SL": str(model["ib_sl"])}
    return {}
