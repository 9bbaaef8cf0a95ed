# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gates on an NCCL busbw curve: the area under it against a reference curve, and the large-message busbw
against what the NICs should carry.

- Curve gate (as OCI/NVIDIA's acceptance run): the area under busbw over the sizes >= ``min_size`` (1 GiB),
  trapezoids over log2(size) (nccl-tests steps sizes geometrically, so every step weighs the same), divided by
  the reference curve's area over the same sizes (the reference interpolated, linearly in log2(size), at the
  measured sizes inside its range). Pass at >= 0.95 by default. Sizes below ``min_size`` are reported, never
  gated: they measure latency, not the fabric.
- Reference curves are kept per (GPU, NIC, fabric, NCCL version) and test (collective, plan, nodes x ranks) in a
  baseline file: the first run records its curve, later runs are compared with it.
- Per-NIC expectation: NCCL's maintainers expect 46-48 GB/s of all_reduce busbw per NDR 400G NIC with Ring
  (NVIDIA/nccl issues; FACTS.md): 48 GB/s per 400 Gb/s, scaled by the declared rate, times ``fraction`` (0.9):
  43.2 GB/s per 400G NIC, 21.6 per 200G. A group's expectation is that times the NICs each node drives.

GB/s are 10^9 bytes per second, as nccl-tests prints them. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

GIB = 1 << 30
DEFAULT_MIN_SIZE = GIB
DEFAULT_MIN_RATIO = 0.95
PER_NIC_GBS_AT_400G = 48.0  # GB/s of busbw per NDR 400G NIC (NCCL maintainers: 46-48)
DEFAULT_NIC_FRACTION = 0.9
BASELINE_KIND = "ibtune-nccl-curves"
BASELINE_VERSION = 1


def row_busbw(row):
    """The figure a row is judged on: out-of-place busbw, else in-place (torch's all_reduce measures in place)."""
    value = row.get("busbw")
    if value is None:
        value = row.get("in_place_busbw")
    return None if value is None else float(value)


def curve(rows, min_size=DEFAULT_MIN_SIZE):
    """[(size, busbw)] of the rows at sizes >= min_size, sorted by size; the last row of a repeated size wins."""
    points = {}
    for row in rows or []:
        busbw = row_busbw(row)
        if busbw is None or int(row["size"]) < min_size:
            continue
        points[int(row["size"])] = busbw
    return sorted(points.items())


def small_sizes(rows, min_size=DEFAULT_MIN_SIZE):
    """[(size, busbw)] below min_size: reported next to the verdict, never gated."""
    return [
        (int(r["size"]), row_busbw(r)) for r in rows or [] if int(r["size"]) < min_size and row_busbw(r) is not None
    ]


def _interpolate(points, size):
    """busbw of the reference at ``size`` (linear in log2(size)); None outside the reference's sizes."""
    if not points or size < points[0][0] or size > points[-1][0]:
        return None
    for (s0, b0), (s1, b1) in zip(points, points[1:]):
        if s0 <= size <= s1:
            if s0 == s1:
                return b0
            t = (math.log2(size) - math.log2(s0)) / (math.log2(s1) - math.log2(s0))
            return b0 + t * (b1 - b0)
    return points[-1][1] if size == points[-1][0] else None


def area(points):
    """Area under busbw over log2(size) (GB/s x doublings); one point: its busbw (a curve of one size)."""
    if len(points) == 1:
        return points[0][1]
    total = 0.0
    for (s0, b0), (s1, b1) in zip(points, points[1:]):
        total += (math.log2(s1) - math.log2(s0)) * (b0 + b1) / 2.0
    return total


def curve_ratio(measured, reference):
    """{ratio, sizes, area, reference_area} comparing two curves ([(size, busbw)]) over the measured sizes the
    reference covers; None when no measured size lies inside the reference's range."""
    pairs = []
    for size, busbw in measured:
        ref = _interpolate(reference, size)
        if ref is not None:
            pairs.append((size, busbw, ref))
    if not pairs:
        return None
    got = area([(s, b) for s, b, _r in pairs])
    want = area([(s, r) for s, _b, r in pairs])
    return {
        "ratio": round(got / want, 4) if want > 0 else None,
        "sizes": [s for s, _b, _r in pairs],
        "area": round(got, 3),
        "reference_area": round(want, 3),
    }


def per_nic_expected(rate_gbps, fraction=DEFAULT_NIC_FRACTION):
    """GB/s of busbw one NIC of ``rate_gbps`` (declared port rate, Gb/s) should carry: 48 GB/s per 400 Gb/s."""
    rate = float(rate_gbps)
    if rate <= 0 or not 0 < float(fraction) <= 1:
        raise ValueError("rate_gbps must be > 0 and fraction in (0, 1], got %r and %r" % (rate_gbps, fraction))
    return round(float(fraction) * PER_NIC_GBS_AT_400G * rate / 400.0, 3)


def group_expected(rate_gbps, nics_per_node, fraction=DEFAULT_NIC_FRACTION):
    """A multi-node group's large-message busbw floor: per_nic_expected x the NICs each node drives."""
    return round(per_nic_expected(rate_gbps, fraction) * int(nics_per_node), 3)


def largest(rows):
    """(size, busbw) of the largest size measured, None without rows."""
    points = curve(rows, min_size=0)
    return points[-1] if points else None


def reference_key(identity):
    """The baseline key of a curve: GPU, NIC, fabric, NCCL version, then the test (collective, plan, shape).

    identity: {gpu, nic, fabric, nccl_version, collective, plan, nodes, ranks_per_node}; missing parts read '?'."""
    parts = [
        identity.get("gpu"),
        identity.get("nic"),
        identity.get("fabric"),
        identity.get("nccl_version"),
        identity.get("collective"),
        identity.get("plan"),
        "%sx%s" % (identity.get("nodes") or "?", identity.get("ranks_per_node") or "?"),
    ]
    return "|".join(str(p) if p not in (None, "") else "?" for p in parts)


def empty_baseline():
    return {"kind": BASELINE_KIND, "version": BASELINE_VERSION, "curves": {}}


def load_baseline(data):
    """A baseline dict from parsed JSON (None or {} gives an empty one); raises ValueError for another file."""
    if not data:
        return empty_baseline()
    if not isinstance(data, dict) or data.get("kind") != BASELINE_KIND:
        raise ValueError("not an NCCL reference-curve file (kind %r): give the file nccl_check wrote" % BASELINE_KIND)
    if int(data.get("version") or 0) > BASELINE_VERSION:
        raise ValueError("reference-curve file version %s is newer than this collection reads" % data.get("version"))
    out = empty_baseline()
    out.update(data)
    out["curves"] = dict(data.get("curves") or {})
    return out


def record(baseline, key, points, when, source):
    """A copy of baseline with ``points`` as the reference of ``key`` (the first run's curve)."""
    out = load_baseline(baseline)
    out["curves"][key] = {"points": [[int(s), float(b)] for s, b in points], "recorded": when, "source": source}
    return out


def judge_curve(rows, reference_points, min_size=DEFAULT_MIN_SIZE, min_ratio=DEFAULT_MIN_RATIO):
    """{status: passed|failed|recorded|no_data, ratio, ..., message} for one collective's rows.

    ``reference_points`` None: nothing to compare with yet (status recorded: the caller keeps this curve)."""
    measured = curve(rows, min_size)
    if not measured:
        return {
            "status": "no_data",
            "ratio": None,
            "message": "no size >= %s measured: set max_bytes to %s or more for the curve gate"
            % (_size(min_size), _size(min_size)),
        }
    if reference_points is None:
        return {"status": "recorded", "ratio": None, "points": measured, "message": "first run: curve recorded"}
    reference = sorted((int(s), float(b)) for s, b in reference_points)
    compared = curve_ratio(measured, reference)
    if compared is None or compared["ratio"] is None:
        return {
            "status": "no_data",
            "ratio": None,
            "message": "the measured sizes (%s..%s) lie outside the reference curve's (%s..%s): measure the same sizes"
            % (_size(measured[0][0]), _size(measured[-1][0]), _size(reference[0][0]), _size(reference[-1][0])),
        }
    passed = compared["ratio"] >= min_ratio
    result = dict(compared, status="passed" if passed else "failed", points=measured)
    result["message"] = "busbw curve area %.3f of the reference over %s..%s (%s %.2f)" % (
        compared["ratio"],
        _size(compared["sizes"][0]),
        _size(compared["sizes"][-1]),
        ">=" if passed else "<",
        min_ratio,
    )
    return result


def judge_floor(rows, floor_gbs):
    """{passed, busbw, size, floor, message} for the large-message busbw against a floor (GB/s); None: no floor."""
    if floor_gbs is None:
        return None
    top = largest(rows)
    if top is None:
        return {"passed": False, "busbw": None, "size": None, "floor": floor_gbs, "message": "no row measured"}
    size, busbw = top
    passed = busbw >= floor_gbs
    return {
        "passed": passed,
        "busbw": busbw,
        "size": size,
        "floor": floor_gbs,
        "message": "busbw %.1f GB/s at %s %s the expected %.1f GB/s"
        % (busbw, _size(size), "meets" if passed else "is below", floor_gbs),
    }


def _size(size):
    for unit, scale in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return "%d %s" % (size // scale, unit)
    return "%d B" % size
