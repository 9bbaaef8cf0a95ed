# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PHY gates (pure): from a port's readings before and after a validation to findings.

Each gate and its default is written down with its source in docs/phy.md:
  - effective (post-FEC) and symbol BER: error above 1e-12 / 1e-13 (ibdiagnet's BER threshold, and the
    effective/symbol split of NVIDIA's fabric health method), warning on any value above the no-errors
    sentinel;
  - FEC histogram: a bin at or above ``fec_tail_bin`` (RS(544,514) corrects 15 symbols a codeword) rising
    between the snapshots is an error: the code is close to giving up;
  - raw (pre-FEC) BER per lane: an outlier against the fabric's median for lanes of the same speed
    (``raw_ber_outlier_factor`` x the median and at least ``raw_ber_floor``) is a warning: healthy NDR lanes
    sit around 1e-10..1e-9, so no absolute value says "bad";
  - link down or error recovery during the validation: an error;
  - module temperature: warning at 65 C, error at 75 C, or above the module's own high alarm;
  - optical power within ``power_margin_db`` of the module's alarm range: warning; outside it: error;
    bias current and supply voltage outside the module's range, a Tx fault, Rx LOS or CDR loss of lock on
    an active link, a module or data-path firmware fault: error.
BER over a KNOWN window: two snapshots are differenced ("Time Since Last Clear" says how long; a clock
difference when it is unknown); a single snapshot is judged on the figures mlxlink computed since the
last clear. Unknown (N/A) figures are never judged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

DEFAULTS = {
    "effective_ber_fail": 1e-12,
    "symbol_ber_fail": 1e-13,
    "fec_tail_bin": 10,
    "raw_ber_outlier_factor": 10.0,
    "raw_ber_floor": 1e-9,
    "temperature_warn_c": 65.0,
    "temperature_fail_c": 75.0,
    "power_margin_db": 1.0,
    "link_down_max": 0,
    "link_recovery_max": 0,
    "min_window_s": 1.0,
}
SEVERITIES = ("error", "warning")


def settings(overrides=None):
    """DEFAULTS with ``overrides`` merged in; ValueError naming an unknown key or a value that is no number."""
    merged = dict(DEFAULTS)
    for key, value in (overrides or {}).items():
        if key not in DEFAULTS:
            raise ValueError("unknown PHY threshold %r: use one of %s" % (key, ", ".join(sorted(DEFAULTS))))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError("PHY threshold %s must be a number >= 0, got %r" % (key, value))
        merged[key] = value
    if merged["temperature_warn_c"] > merged["temperature_fail_c"]:
        raise ValueError(
            "temperature_warn_c (%s) must not be above temperature_fail_c (%s)"
            % (merged["temperature_warn_c"], merged["temperature_fail_c"])
        )
    return merged


def _counters(reading):
    return (reading or {}).get("counters") or {}


def window(before, after, before_at=None, after_at=None):
    """{"seconds", "source", "cleared"}: how long the after-reading's figures cover.

    ``differenced``: both readings exist and the counters were not cleared between them (the window is the
    difference); otherwise the after-reading is judged on its own since its last clear.
    """
    b_min, a_min = _counters(before).get("time_since_clear_min"), _counters(after).get("time_since_clear_min")
    if before is None:
        seconds = a_min * 60.0 if a_min is not None else None
        return {"seconds": seconds, "source": "since_clear", "differenced": False, "cleared": False}
    if a_min is not None and b_min is not None:
        if a_min + 1e-9 < b_min:  # someone cleared the counters during the run: the after figures stand alone
            return {"seconds": a_min * 60.0, "source": "since_clear", "differenced": False, "cleared": True}
        seconds = (a_min - b_min) * 60.0
        # mlxlink prints minutes with one decimal: a short run is timed by the clock
        if seconds < 6.0 and before_at is not None and after_at is not None:
            seconds = max(seconds, float(after_at) - float(before_at))
        return {"seconds": seconds, "source": "time_since_clear", "differenced": True, "cleared": False}
    if before_at is not None and after_at is not None:
        return {"seconds": float(after_at) - float(before_at), "source": "clock", "differenced": True, "cleared": False}
    return {"seconds": None, "source": "unknown", "differenced": True, "cleared": False}


def _delta(before, after):
    if after is None or before is None:
        return None
    return after - before if after >= before else None  # a counter that went down was cleared or wrapped


def _lane_deltas(before, after):
    if not after:
        return None
    if not before or len(before) != len(after):
        return None
    return [_delta(b, a) for b, a in zip(before, after)]


def lane_gbps(reading):
    link = (reading or {}).get("link") or {}
    speed, lanes = link.get("speed_gbps"), link.get("lanes")
    if not speed or not lanes:
        return None
    return speed / lanes


def figures(before, after, win):
    """The after-reading's figures over the window: BERs, per-lane raw BER, flaps, the FEC histogram's rise.

    {"effective_ber", "symbol_ber", "raw_ber_lanes", "link_down", "link_recovery", "fec_rise" ([[low, high,
    delta]]), "window_s", "source"}; None where unknown.
    """
    after_c = _counters(after)
    out = {
        "window_s": win["seconds"],
        "source": win["source"],
        "link_down": None,
        "link_recovery": None,
        "fec_rise": None,
    }
    if not win["differenced"]:
        out.update(
            effective_ber=after_c.get("effective_ber"),
            symbol_ber=after_c.get("symbol_ber"),
            raw_ber_lanes=after_c.get("raw_ber_lanes"),
        )
        return out
    before_c = _counters(before)
    seconds = win["seconds"]
    lane = lane_gbps(after)
    port_bits = lane * (after.get("link") or {}).get("lanes") * 1e9 * seconds if lane and seconds else None
    lane_bits = lane * 1e9 * seconds if lane and seconds else None
    out["effective_ber"] = _rate(_delta(before_c.get("effective_errors"), after_c.get("effective_errors")), port_bits)
    out["symbol_ber"] = _rate(_delta(before_c.get("symbol_errors"), after_c.get("symbol_errors")), port_bits)
    lanes = _lane_deltas(before_c.get("raw_errors_lanes"), after_c.get("raw_errors_lanes"))
    out["raw_ber_lanes"] = [_rate(d, lane_bits) for d in lanes] if lanes else None
    out["link_down"] = _delta(before_c.get("link_down"), after_c.get("link_down"))
    out["link_recovery"] = _delta(before_c.get("link_recovery"), after_c.get("link_recovery"))
    out["fec_rise"] = _histogram_rise((before or {}).get("fec_histogram"), after.get("fec_histogram"))
    return out


def _rate(errors, bits):
    if errors is None or not bits:
        return None
    return errors / bits


def _histogram_rise(before, after):
    if not before or not after or len(before) != len(after):
        return None
    rise = []
    for (b_low, b_high, b_count), (a_low, a_high, a_count) in zip(before, after):
        if (b_low, b_high) != (a_low, a_high):
            return None
        rise.append([a_low, a_high, a_count - b_count if a_count >= b_count else None])
    return rise


def _finding(check, severity, value, limit, msg, lane=None):
    return {"check": check, "severity": severity, "value": value, "limit": limit, "lane": lane, "msg": msg}


def _window_words(fig):
    if fig["source"] == "since_clear":
        return "since the counters were last cleared"
    if fig["window_s"] is None:
        return "during the validation"
    return "over the %.0f s of the validation" % fig["window_s"]


def check_ber(fig, cfg):
    out = []
    for key, name, limit_key in (
        ("effective_ber", "effective (post-FEC) BER", "effective_ber_fail"),
        ("symbol_ber", "symbol BER", "symbol_ber_fail"),
    ):
        value = fig.get(key)
        if value is None or value <= 0:
            continue
        limit = cfg[limit_key]
        words = "%s %.2g %s" % (name, value, _window_words(fig))
        if value > limit:
            out.append(
                _finding(
                    key,
                    "error",
                    value,
                    limit,
                    "%s is above %.0e: the application sees errors FEC could not correct" % (words, limit),
                )
            )
        else:
            out.append(
                _finding(key, "warning", value, 0.0, "%s is above the no-errors value (limit %.0e)" % (words, limit))
            )
    return out


def check_fec_tail(fig, cfg):
    rise = fig.get("fec_rise") or []
    tail = [(low, high, d) for low, high, d in rise if high >= cfg["fec_tail_bin"] and d]
    if not tail:
        return []
    total = sum(d for _l, _h, d in tail)
    bins = ", ".join("%d more in bin %s" % (d, low if low == high else "%d-%d" % (low, high)) for low, high, d in tail)
    return [
        _finding(
            "fec_tail",
            "error",
            total,
            0,
            "FEC histogram tail rising %s (%s): codewords needed %d or more of "
            "the correctable symbols" % (_window_words(fig), bins, cfg["fec_tail_bin"]),
        )
    ]


def check_flaps(fig, cfg):
    out = []
    for key, name, limit_key in (
        ("link_down", "link went down", "link_down_max"),
        ("link_recovery", "link error recovery ran", "link_recovery_max"),
    ):
        value = fig.get(key)
        if value is not None and value > cfg[limit_key]:
            out.append(
                _finding(
                    key,
                    "error",
                    value,
                    cfg[limit_key],
                    "%s %d time%s %s" % (name, value, "" if value == 1 else "s", _window_words(fig)),
                )
            )
    return out


def _temperature(module, cfg):
    value = module.get("temperature_c")
    if value is None:
        return []
    high = (module.get("temperature_range") or [None, None])[1]
    if value >= cfg["temperature_fail_c"] or (high is not None and value >= high):
        limit = min(cfg["temperature_fail_c"], high) if high is not None else cfg["temperature_fail_c"]
        return [
            _finding(
                "temperature",
                "error",
                value,
                limit,
                "module at %.0f C (limit %.0f C, its alarm %s C)"
                % (value, cfg["temperature_fail_c"], "unknown" if high is None else "%.0f" % high),
            )
        ]
    if value >= cfg["temperature_warn_c"]:
        return [
            _finding(
                "temperature",
                "warning",
                value,
                cfg["temperature_warn_c"],
                "module at %.0f C, above the "
                "%.0f C warning (fails at %.0f C)" % (value, cfg["temperature_warn_c"], cfg["temperature_fail_c"]),
            )
        ]
    return []


def _power(module, key, name, cfg):
    values, rng = module.get(key + "_dbm"), module.get(key + "_range")
    if not values or not rng:
        return []
    low, high = rng
    out = []
    for lane, value in enumerate(values):
        if value is None:
            continue
        if value < low or value > high:
            out.append(
                _finding(
                    key,
                    "error",
                    value,
                    [low, high],
                    "%s %.2f dBm on lane %d is outside the module's "
                    "alarm range %.2f..%.2f dBm" % (name, value, lane, low, high),
                    lane,
                )
            )
        elif value - low < cfg["power_margin_db"] or high - value < cfg["power_margin_db"]:
            out.append(
                _finding(
                    key,
                    "warning",
                    value,
                    [low, high],
                    "%s %.2f dBm on lane %d is within %.1f dB of the "
                    "module's alarm range %.2f..%.2f dBm" % (name, value, lane, cfg["power_margin_db"], low, high),
                    lane,
                )
            )
    return out


def _in_range(module, key, name, unit):
    raw = module.get(key)
    values = raw if isinstance(raw, list) else [raw]
    rng = module.get(key.rsplit("_", 1)[0] + "_range")
    if not rng or not values:
        return []
    out = []
    for lane, value in enumerate(values):
        if value is not None and not rng[0] <= value <= rng[1]:
            where = " on lane %d" % lane if isinstance(raw, list) else ""
            out.append(
                _finding(
                    key,
                    "error",
                    value,
                    rng,
                    "%s %.1f %s%s is outside the module's range %s..%s %s"
                    % (name, value, unit, where, rng[0], rng[1], unit),
                    lane if isinstance(raw, list) else None,
                )
            )
    return out


def _faults(module, active):
    faults = module.get("faults") or {}
    out = []
    names = {
        "tx_fault": "Tx fault",
        "rx_los": "Rx loss of signal",
        "tx_los": "Tx loss of signal",
        "rx_cdr_lol": "Rx CDR loss of lock",
        "tx_cdr_lol": "Tx CDR loss of lock",
    }
    if active:
        for key, name in names.items():
            lanes = [i for i, flag in enumerate(faults.get(key) or []) if flag]
            if lanes:
                out.append(
                    _finding(
                        key,
                        "error",
                        len(lanes),
                        0,
                        "%s on lane%s %s of an active link"
                        % (name, "s" if len(lanes) > 1 else "", ",".join(map(str, lanes))),
                    )
                )
    for key, name in (("module_fw_fault", "module firmware fault"), ("datapath_fw_fault", "data-path firmware fault")):
        if faults.get(key):
            out.append(_finding(key, "error", faults[key], 0, "the module reports a %s" % name))
    return out


def check_module(reading, cfg):
    module = (reading or {}).get("module")
    if not module:
        return []
    state = ((reading.get("link") or {}).get("state") or "").lower()
    out = _temperature(module, cfg)
    out += _power(module, "rx_power", "Rx power", cfg) + _power(module, "tx_power", "Tx power", cfg)
    out += _in_range(module, "bias_ma", "bias current", "mA") + _in_range(module, "voltage_mv", "supply voltage", "mV")
    return out + _faults(module, state == "active")


def check_port(before, after, cfg, before_at=None, after_at=None):
    """(findings, figures) of one port from its two readings (``before`` may be None)."""
    if after is None:
        return [], None
    win = window(before, after, before_at, after_at)
    fig = figures(before, after, win)
    fig["speed"] = (after.get("link") or {}).get("speed")
    fig["lane_gbps"] = lane_gbps(after)
    found = check_ber(fig, cfg) + check_fec_tail(fig, cfg) + check_flaps(fig, cfg) + check_module(after, cfg)
    return found, fig


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2.0


def raw_ber_outliers(figs, cfg):
    """{index of fig: [finding]} for lanes whose raw BER is an outlier against the fabric's median for lanes of
    the same speed (``figs``: figures() of every port, None for a port not read)."""
    by_speed = {}
    for index, fig in enumerate(figs):
        if fig and fig.get("raw_ber_lanes") and fig.get("lane_gbps"):
            by_speed.setdefault(fig["lane_gbps"], []).extend(
                (index, lane, v) for lane, v in enumerate(fig["raw_ber_lanes"]) if v is not None
            )
    out = {}
    for gbps, lanes in by_speed.items():
        if len(lanes) < 2:
            continue
        median = _median([v for _i, _l, v in lanes])
        limit = max(cfg["raw_ber_outlier_factor"] * median, cfg["raw_ber_floor"])
        for index, lane, value in lanes:
            if value > limit:
                ratio = " (%.0fx the median)" % (value / median) if median > 0 else ""
                out.setdefault(index, []).append(
                    _finding(
                        "raw_ber_outlier",
                        "warning",
                        value,
                        limit,
                        "lane %d raw (pre-FEC) BER %.2g %s is an outlier%s: the fabric's %g Gb/s lanes sit at a "
                        "median of %.2g; FEC still corrects it, the cable or module is degrading"
                        % (lane, value, _window_words(figs[index]), ratio, gbps, median),
                        lane,
                    )
                )
    return out
