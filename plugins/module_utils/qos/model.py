# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one QoS model (``ibtune_qos``) and what every layer derives from it.

NCCL_IB_TC / NCCL_IB_SL, host PFC/ECN/trust, switch config and OpenSM's QoS all come from
normalize_model(); nothing else declares DSCPs or priorities.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import strtoll

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


# The QoS mode each link layer of the collection-wide fabric declaration (ibtune_fabric.link_layer) implies when
# ibtune_qos.mode is not given: InfiniBand QoS lives in the subnet manager; on Ethernet (RoCE) the safe default is
# NVIDIA's lossless recipe (the model's defaults). Mode "none" (no QoS) fits either link layer.
FABRIC_QOS_MODES = {"InfiniBand": "infiniband", "Ethernet": "roce_lossless"}


class QosModelError(ValueError):
    """Raised with one sentence naming the key, the value and the fix."""


def mode_for_fabric(mode=None, fabric=None):
    """The QoS mode: ``mode`` (ibtune_qos.mode) when given, else the one ibtune_fabric.link_layer implies.

    An explicit mode that contradicts the fabric's link layer raises, naming both. Without a declared link layer
    the model's default (roce_lossless) stays.
    """
    link_layer = (fabric or {}).get("link_layer") if isinstance(fabric, dict) else None
    if link_layer in (None, ""):
        return DEFAULT_MODEL["mode"] if mode in (None, "") else mode
    if link_layer not in FABRIC_QOS_MODES:
        raise QosModelError(
            "ibtune_fabric.link_layer=%r is not InfiniBand or Ethernet: fix ibtune_fabric." % (link_layer,)
        )
    implied = FABRIC_QOS_MODES[link_layer]
    if mode in (None, ""):
        return implied
    if mode not in (implied, "none") and mode in MODES:
        raise QosModelError(
            "ibtune_qos.mode=%r contradicts ibtune_fabric.link_layer=%r (which implies mode %r): drop "
            "ibtune_qos.mode to follow the fabric, or fix whichever of the two is wrong." % (mode, link_layer, implied)
        )
    return mode


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


_RANGES = (
    ("roce_dscp", 0, 63),
    ("cnp_dscp", 0, 63),
    ("roce_priority", 0, 7),
    ("cnp_priority", 0, 7),
    ("ib_sl", 0, 15),
    ("ib_max_vls", 1, 15),
    ("ib_high_limit", 0, 255),
)


def _check_keys(model):
    unknown = sorted(set(model or {}) - set(DEFAULT_MODEL))
    if unknown:
        raise QosModelError(
            "ibtune_qos has unknown key(s) %s: valid keys are %s."
            % (", ".join(unknown), ", ".join(sorted(DEFAULT_MODEL)))
        )


def _check_vls(merged):
    """InfiniBand: the SL2VL table and the arbitration tables use no VL above ib_max_vls."""
    max_vls = merged["ib_max_vls"]
    vlarb = dict((key, parse_vlarb(merged[key], key)) for key in ("ib_vlarb_high", "ib_vlarb_low"))
    sl2vl = parse_sl2vl(merged["ib_sl2vl"])
    if merged["mode"] != "infiniband":
        return
    too_high = [vl for vl in sorted(set(sl2vl)) if vl >= max_vls]
    if too_high:
        raise QosModelError(
            "ibtune_qos.ib_sl2vl sends SLs to VL %s, but ib_max_vls=%d allows only VL 0..%d: "
            "raise ib_max_vls or change the table." % (",".join(str(v) for v in too_high), max_vls, max_vls - 1)
        )
    for key, entries in sorted(vlarb.items()):
        above = sorted(set(vl for vl, weight in entries if vl >= max_vls and weight > 0))
        if above:
            raise QosModelError(
                "ibtune_qos.%s gives weight to VL %s, but ib_max_vls=%d allows only VL 0..%d: the ports have "
                "no such VL, so that bandwidth share goes nowhere; raise ib_max_vls or drop those entries."
                % (key, ",".join(str(v) for v in above), max_vls, max_vls - 1)
            )


def _check_cnp(merged):
    """RoCE lossless: CNPs have their own DSCP and their own (strict) priority."""
    if merged["mode"] != "roce_lossless":
        return
    if merged["roce_dscp"] == merged["cnp_dscp"]:
        raise QosModelError(
            "ibtune_qos.cnp_dscp=%d equals roce_dscp: the switches would put lossless data in the strict CNP class "
            "(priority %d, no PFC); give CNPs their own DSCP (NVIDIA's recipe: 48)."
            % (merged["cnp_dscp"], merged["cnp_priority"])
        )
    if merged["roce_priority"] == merged["cnp_priority"]:
        raise QosModelError(
            "ibtune_qos.cnp_priority=%d equals roce_priority: CNPs must travel on their own (strict) priority."
            % merged["cnp_priority"]
        )


def normalize_model(model=None, fabric=None):
    """Fill defaults and validate; returns a new dict. Raises QosModelError.

    ``fabric`` is the collection-wide ibtune_fabric declaration: the mode follows its link layer when the model
    gives none (mode_for_fabric).
    """
    merged = dict(DEFAULT_MODEL)
    _check_keys(model)
    merged.update(model or {})
    merged["mode"] = mode_for_fabric((model or {}).get("mode"), fabric)
    if merged["mode"] not in MODES:
        raise QosModelError("ibtune_qos.mode=%r is not one of %s." % (merged["mode"], ", ".join(MODES)))
    if merged["ecn"] not in ECN_BITS:
        raise QosModelError("ibtune_qos.ecn=%r is not one of %s." % (merged["ecn"], ", ".join(sorted(ECN_BITS))))
    for key, low, high in _RANGES:
        merged[key] = _int_in(merged, key, low, high)
    _check_vls(merged)
    _check_cnp(merged)
    return merged


def parse_vlarb(text, key="ib_vlarb"):
    """OpenSM VL arbitration list "VL:weight,..." -> [(vl, weight)]; weights 0..255 (64-byte units)."""
    if not isinstance(text, str) or not text.strip():
        raise QosModelError("ibtune_qos.%s=%r must be a list like '0:64,1:64' (VL:weight)." % (key, text))
    entries = []
    for item in text.split(","):
        parts = item.strip().split(":")
        try:
            vl, weight = int(parts[0]), int(parts[1])
        except (IndexError, ValueError):
            raise QosModelError(
                "ibtune_qos.%s=%r has a bad entry %r: write VL:weight pairs like '0:64,1:64'." % (key, text, item)
            )
        if len(parts) != 2 or not 0 <= vl <= 14 or not 0 <= weight <= 255:
            raise QosModelError(
                "ibtune_qos.%s=%r has a bad entry %r: VL is 0..14 and weight 0..255." % (key, text, item)
            )
        entries.append((vl, weight))
    if len(entries) > 64:
        raise QosModelError("ibtune_qos.%s has %d entries: OpenSM takes at most 64." % (key, len(entries)))
    return entries


def parse_sl2vl(text):
    """OpenSM SL-to-VL table "v0,v1,...,v15" -> list of 16 VLs."""
    try:
        vls = [int(x) for x in str(text).split(",")]
    except ValueError:
        raise QosModelError("ibtune_qos.ib_sl2vl=%r must be 16 comma-separated VLs (one per SL 0..15)." % (text,))
    if len(vls) != 16 or any(not 0 <= vl <= 14 for vl in vls):
        raise QosModelError("ibtune_qos.ib_sl2vl=%r must be 16 comma-separated VLs 0..14 (one per SL 0..15)." % (text,))
    return vls


def vl_weights(model):
    """{vl: (high_weight, low_weight)} summed over the arbitration tables of a normalized model."""
    weights = {}
    for index, key in enumerate(("ib_vlarb_high", "ib_vlarb_low")):
        for vl, weight in parse_vlarb(model[key], key):
            high_low = list(weights.get(vl, (0, 0)))
            high_low[index] += weight
            weights[vl] = tuple(high_low)
    return weights


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


def nccl_qos_env(model, fabric=None):
    """The NCCL variables the model implies: NCCL_IB_TC on RoCE, NCCL_IB_SL on InfiniBand."""
    model = normalize_model(model, fabric)
    if model["mode"] == "roce_lossless":
        return {"NCCL_IB_TC": str(nccl_tc(model["roce_dscp"], model["ecn"]))}
    if model["mode"] == "infiniband":
        return {"NCCL_IB_SL": str(model["ib_sl"])}
    return {}


def _pfc_list(value):
    """A PFC vector as 8 ints from a list or "0,0,0,1,0,0,0,0"; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [x for x in value.replace(" ", ",").split(",") if x != ""]
    return [int(x) for x in value]


def _dscp_map(value):
    """dscp2prio with int keys (JSON turns them into strings)."""
    return {int(k): int(v) for k, v in (value or {}).items() if v is not None}


def _parse_env_int(env, name, low, high, errors, warnings):
    """The value NCCL reads: strtoll(value, NULL, 0) ("0152" is 106, "0x6a" is 106); -1 is NCCL's unset.

    Returns None when unset (absent, empty or -1) or unreadable (then an error is added).
    """
    raw = env.get(name)
    if isinstance(raw, bool):
        raw = int(raw)
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw)
    value, used = strtoll(text)
    if used == 0 or value is None:
        errors.append(
            "%s=%r is not a number NCCL can read (strtoll gives %s): set it to %d..%d."
            % (name, raw, "0" if used == 0 else "an overflow, so NCCL keeps its default", low, high)
        )
        return None
    if used != len(text):
        warnings.append(
            "%s=%r: NCCL reads only the leading %r (%d) and ignores the rest; write %d."
            % (name, raw, text[:used], value, value)
        )
    if value == -1:
        return None
    if not low <= value <= high:
        shown = text if text == str(value) else "%s (NCCL reads %d)" % (text, value)
        errors.append("%s=%s is out of range: use %d..%d." % (name, shown, low, high))
        return None
    return value


def _unset(env, name):
    """NCCL's view: absent, empty and -1 (NCCL_PARAM's default for IB_SL/IB_TC) all mean not set."""
    raw = env.get(name)
    if raw is None:
        return True
    text = str(int(raw)) if isinstance(raw, bool) else str(raw)
    if text.strip() == "":
        return True
    value, used = strtoll(text)
    return used > 0 and value == -1


def _check_state(model, state, where, errors, warnings):
    """Compare one device's (host NIC or switch) DSCP/PFC state with the model."""
    dscp, prio = model["roce_dscp"], model["roce_priority"]
    trust = state.get("trust")
    if trust is not None and trust not in ("dscp", "l3", "both"):
        errors.append(
            "%s trusts %s, but the lossless class is chosen by DSCP %d: set trust dscp "
            "(mlnx_qos -i <netdev> --trust dscp on hosts, trust l3 or both on switches)." % (where, trust, dscp)
        )
    pfc = _pfc_list(state.get("pfc"))
    if pfc is not None:
        enabled = [p for p, on in enumerate(pfc) if on]
        if prio not in enabled:
            errors.append(
                "%s has no PFC on priority %d (PFC vector %s), but lossless traffic is DSCP %d on priority %d: "
                "enable PFC on priority %d." % (where, prio, ",".join(str(x) for x in pfc), dscp, prio, prio)
            )
        extra = [p for p in enabled if p != prio]
        if extra:
            errors.append(
                "%s has PFC on priorities %s, but only priority %d is meant to be lossless: PFC on other "
                "priorities spreads pause storms; disable it there (PFC vector %s)."
                % (
                    where,
                    ",".join(str(p) for p in enabled),
                    prio,
                    ",".join("1" if p == prio else "0" for p in range(8)),
                )
            )
    mapping = _dscp_map(state.get("dscp2prio"))
    if mapping:
        got = mapping.get(dscp)
        if got is None:
            warnings.append("%s lists no priority for DSCP %d in its DSCP map." % (where, dscp))
        elif got != prio:
            errors.append(
                "%s maps DSCP %d to priority %d, but lossless traffic is DSCP %d on priority %d."
                % (where, dscp, got, dscp, prio)
            )
        cnp = mapping.get(model["cnp_dscp"])
        if cnp is not None and cnp != model["cnp_priority"]:
            warnings.append(
                "%s maps CNP DSCP %d to priority %d, but the model sends CNPs on priority %d."
                % (where, model["cnp_dscp"], cnp, model["cnp_priority"])
            )


def _check_nccl_tc(model, env, host_tc, errors, warnings):
    """RoCE: NCCL_IB_TC marks the lossless DSCP with the model's ECN bits (or the host's global class does)."""
    dscp, prio = model["roce_dscp"], model["roce_priority"]
    want_tc = nccl_tc(dscp, model["ecn"])
    tc = _parse_env_int(env, "NCCL_IB_TC", 0, 255, errors, warnings)
    if tc is None and _unset(env, "NCCL_IB_TC"):
        if host_tc is not None and int(host_tc) == want_tc:
            warnings.append(
                "NCCL_IB_TC is not set; the host's global traffic class %d marks DSCP %d, so NCCL's traffic "
                "is lossless, but set NCCL_IB_TC=%d to make it explicit." % (want_tc, dscp, want_tc)
            )
        else:
            errors.append(
                "NCCL_IB_TC is not set, so NCCL marks DSCP 0, but lossless traffic is DSCP %d on priority %d: "
                "set NCCL_IB_TC=%d." % (dscp, prio, want_tc)
            )
        return
    if tc is None:
        return
    got_dscp, got_ecn = tc_to_dscp(tc)
    if got_dscp != dscp:
        errors.append(
            "NCCL_IB_TC=%d marks DSCP %d, but lossless traffic is DSCP %d on priority %d: set NCCL_IB_TC=%d."
            % (tc, got_dscp, dscp, prio, want_tc)
        )
    elif got_ecn != model["ecn"]:
        errors.append(
            "NCCL_IB_TC=%d carries ECN bits %s, but the model's ECN marking is %s: set NCCL_IB_TC=%d."
            % (tc, got_ecn, model["ecn"], want_tc)
        )


def _check_roce(model, env, host_state, switch_state, errors, warnings):
    """RoCE lossless: NCCL's marking, the host's and the switch's trust, PFC and DSCP map."""
    host_tc = (host_state or {}).get("traffic_class")
    _check_nccl_tc(model, env, host_tc, errors, warnings)
    want_tc = nccl_tc(model["roce_dscp"], model["ecn"])
    if host_state:
        _check_state(model, host_state, "the host", errors, warnings)
        if host_tc is not None and int(host_tc) != want_tc:
            got_dscp, _ecn = tc_to_dscp(int(host_tc))
            errors.append(
                "the host's global traffic class is %d (DSCP %d), but lossless traffic is DSCP %d on priority %d: "
                "write %d to tc/1/traffic_class or unset it."
                % (int(host_tc), got_dscp, model["roce_dscp"], model["roce_priority"], want_tc)
            )
    if switch_state:
        _check_state(model, switch_state, "the switch", errors, warnings)
    if not _unset(env, "NCCL_IB_SL"):
        warnings.append(
            "NCCL_IB_SL=%s is set on a RoCE fabric, where it does not choose the priority." % env["NCCL_IB_SL"]
        )


def _check_infiniband(model, env, errors, warnings):
    """InfiniBand: NCCL's service level is the model's and maps to a VL that is scheduled."""
    sl = _parse_env_int(env, "NCCL_IB_SL", 0, 15, errors, warnings)
    if sl is None and _unset(env, "NCCL_IB_SL"):
        sl = 0  # NCCL's default service level
    if sl is not None:
        vl = parse_sl2vl(model["ib_sl2vl"])[sl]
        weights = vl_weights(model)
        shown = "NCCL_IB_SL unset (SL 0)" if _unset(env, "NCCL_IB_SL") else "NCCL_IB_SL=%s" % env["NCCL_IB_SL"]
        # normalize_model already refused tables that send an SL past ib_max_vls.
        if sum(weights.get(vl, (0, 0))) == 0:
            errors.append(
                "%s maps to VL %d, which has weight 0 in qos_vlarb_high and qos_vlarb_low: "
                "the VL is never scheduled; give VL %d a weight." % (shown, vl, vl)
            )
        if sl != model["ib_sl"]:
            errors.append(
                "%s, but the QoS model puts NCCL on SL %d: set NCCL_IB_SL=%d." % (shown, model["ib_sl"], model["ib_sl"])
            )
    if not _unset(env, "NCCL_IB_TC"):
        warnings.append(
            "NCCL_IB_TC=%s is set on an InfiniBand fabric: QoS there follows NCCL_IB_SL." % env["NCCL_IB_TC"]
        )


def check_layers(model, nccl_env=None, host_state=None, switch_state=None):
    """Find where NCCL, the hosts and the switches disagree with the QoS model.

    host_state / switch_state: {trust, pfc (8 ints or "0,0,0,1,..."), dscp2prio {dscp: prio},
    traffic_class (host global override, optional)} as roce_qos or mlnx_qos parsing return them.
    Returns {"errors": [...], "warnings": [...], "expected": {...}}; every message names both sides.
    """
    model = normalize_model(model)
    env = {str(k): v for k, v in (nccl_env or {}).items()}
    errors, warnings = [], []
    expected = nccl_qos_env(model)
    mode = model["mode"]
    if mode == "roce_lossless":
        _check_roce(model, env, host_state, switch_state, errors, warnings)
    elif mode == "infiniband":
        _check_infiniband(model, env, errors, warnings)
    return {"errors": errors, "warnings": warnings, "expected": expected, "mode": mode}
