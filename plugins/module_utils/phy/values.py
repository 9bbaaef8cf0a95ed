# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The values mlxlink and ibdiagnet print, read strictly (pure).

A value is a number, a list of per-lane numbers, or a number with the module's own alarm range
(``61 [-10..80]``). ``N/A`` (and an empty value) means the tool could not read it: it is carried as
None, never as 0. Anything else that does not parse raises BadValue, so the caller can carry the field as
unknown and say which one it was, instead of mining it for leading digits.

BER: mlxlink prints ``<coef>E-<magnitude>`` from the PPCNT register's coefficient (4 bits) and magnitude
(8 bits) (mstflint mlxlink_amBER_collector.cpp); the smallest value the register holds, ``15E-255``, is what
the firmware reports when it has counted no error at all (1.5e-254 in NVML/DCGM and in ibdiagnet's
``1.500000e-254``). It means zero errors: any BER below NO_ERRORS_BELOW is read as 0.0.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import LANE_SPEEDS_GBPS

NOT_AVAILABLE = frozenset(("N/A", "NA", "", "-", "n/a"))
# 15E-255 = 1.5e-254, the register's floor: "no error counted". A physical BER of 1e-200 would be one error in
# 1e180 years of a 400 Gb/s link: everything below this is the sentinel, never a rate.
NO_ERRORS_BELOW = 1e-200

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_BER = re.compile(r"^(\d+(?:\.\d+)?)[eE]([+-]?\d+)$")
_RANGE = re.compile(r"^(.*?)\s*\[\s*([^\].]*?(?:\.\d+)?)\s*\.\.\s*([^\]]*?)\s*\]$")


class BadValue(ValueError):
    """A value that is neither N/A nor in the tool's format."""


def strip_ansi(text):
    """``\\x1b[32m15E-255\\x1b[0m`` -> ``15E-255`` (mlxlink colours its values on a terminal)."""
    return _ANSI.sub("", text or "")


def clean(value):
    """The value as a stripped string without colour codes; None for N/A."""
    if value is None:
        return None
    text = strip_ansi(str(value)).strip()
    return None if text in NOT_AVAILABLE else text


def number(value):
    """A finite float, or None for N/A; BadValue otherwise (``3.2V``, ``inf``, ``12 34``)."""
    text = clean(value)
    if text is None:
        return None
    if not _NUMBER.match(text):
        raise BadValue("not a number: %r" % (text,))
    result = float(text)
    if not math.isfinite(result):
        raise BadValue("not a finite number: %r" % (text,))
    return result


def count(value):
    """A non-negative integer counter, or None for N/A; BadValue otherwise (``-1``, ``12.5``)."""
    text = clean(value)
    if text is None:
        return None
    if not text.isdigit():
        raise BadValue("not a counter: %r" % (text,))
    return int(text)


def ber(value):
    """A bit error rate: 0.0 for the no-errors sentinel (15E-255, 1.5e-254), None for N/A."""
    text = clean(value)
    if text is None:
        return None
    match = _BER.match(text)
    if match:
        rate = float(match.group(1)) * 10.0 ** int(match.group(2))
    elif _NUMBER.match(text):
        rate = float(text)
    else:
        raise BadValue("not a bit error rate: %r" % (text,))
    if not math.isfinite(rate) or rate < 0 or rate > 1:
        raise BadValue("not a bit error rate between 0 and 1: %r" % (text,))
    return 0.0 if rate < NO_ERRORS_BELOW else rate


def is_no_errors(text):
    """True when the printed BER is the register's "no error counted" value."""
    return ber(text) == 0.0


def split_lanes(value):
    """Per-lane items of ``1E-10,1E-9`` or of a JSON ``{"values": [...]}`` list, as strings; None for N/A.

    A list holding only N/A (mlxlink prints ``{"values": ["N/A"]}`` when it has no per-lane figure) is None.
    """
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("values")
    if isinstance(value, (list, tuple)):
        items = [strip_ansi(str(v)).strip() for v in value]
    else:
        text = clean(value)
        if text is None:
            return None
        items = [part.strip() for part in text.split(",")]
    if not items or all(i in NOT_AVAILABLE for i in items):
        return None
    return items


def lanes(value, parse=number):
    """Per-lane values through ``parse`` (N/A lanes stay None); None when no lane was printed."""
    items = split_lanes(value)
    if items is None:
        return None
    return [parse(item) for item in items]


def with_range(value, parse=number):
    """``61 [-10..80]`` -> ([61.0], -10.0, 80.0); per-lane ``1,2 [lo..hi]`` -> ([1.0, 2.0], lo, hi).

    (None, None, None) for N/A; the range is the module's own alarm thresholds as mlxlink prints them.
    """
    text = clean(value)
    if text is None:
        return None, None, None
    match = _RANGE.match(text)
    if not match:
        return lanes(text, parse), None, None
    return lanes(match.group(1), parse), number(match.group(2)), number(match.group(3))


def speed_gbps(text, lanes=None):
    """``400G`` -> 400.0, ``100G_4X`` -> 100.0; an InfiniBand lane speed (``IB-NDR``, ``NDR``) x ``lanes``
    (4 when unknown) -> 400.0; None when unknown."""
    value = clean(text)
    if value is None:
        return None
    match = re.match(r"^(\d+(?:\.\d+)?)\s*G", value)
    if match:
        return float(match.group(1))
    name = value.upper().replace("IB-", "").replace("IB ", "").strip()
    if name in LANE_SPEEDS_GBPS:
        return LANE_SPEEDS_GBPS[name] * (lanes or 4)
    return None


def width_lanes(text):
    """``4x`` -> 4; None when unknown."""
    value = clean(text)
    if value is None:
        return None
    match = re.match(r"^(\d+)\s*[xX]$", value)
    return int(match.group(1)) if match else None
