# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tier balance: the switches of one tier should spread their links evenly over the switches below them.

Routing engines (OpenSM's ftree, minhop) spread destinations over a switch's up ports; a spine that reaches
one leaf twice and another not at all carries two shares of the first and none of the second, and the
fabric is unbalanced though no leaf lost an uplink. Per group (structure.Shape: a fat tree is one group,
a dragonfly one per group), the norm is the most common trunk size between the two tiers; every upper
switch whose trunks to the switches below differ from it is named, with the switches where they differ.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import finding, norm
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.oversubscription import PLURAL

TIER_PAIRS = (("spine", "leaf"), ("core", "spine"))
_LISTED = 6


def _trunks(shape, lowers, upper_tier):
    """{(upper, lower): cables} between the lower switches and the upper tier."""
    counts = {}
    for low in lowers:
        for upper, cables in shape.trunk_sizes(low).items():
            if shape.tier(upper) == upper_tier:
                counts[(upper, low)] = cables
    return counts


def _excess_port(shape, upper, lower):
    """The upper switch's highest port cabled to ``lower`` (the one to move when it has too many)."""
    ports = [v["port"] for v in shape.down.get(upper, []) if v["peer"] == lower]
    return max(ports) if ports else None


def _deviation_text(shape, deviations):
    parts = []
    for lower, cables in deviations[:_LISTED]:
        parts.append(
            ("%d to %s" % (cables, shape.index.name(lower))) if cables else "none to %s" % shape.index.name(lower)
        )
    if len(deviations) > _LISTED:
        parts.append("and %d more" % (len(deviations) - _LISTED))
    return ", ".join(parts)


def _unbalanced(shape, upper, lowers, counts, usual, lower_tier):
    deviations = [(low, counts.get((upper, low), 0)) for low in lowers if counts.get((upper, low), 0) != usual]
    if not deviations:
        return None
    links = sum(counts.get((upper, low), 0) for low in lowers)
    excess = [low for low, cables in deviations if cables > usual]
    return finding(
        "tier_balance",
        "error",
        "%s has %d links to the %d %s below where an even spread is %d (%d to each, the norm of its tier): %s; "
        "routing then spreads their traffic unevenly over the %s: move or add cables to even it."
        % (
            shape.index.name(upper),
            links,
            len(lowers),
            PLURAL[lower_tier],
            usual * len(lowers),
            usual,
            _deviation_text(shape, deviations),
            PLURAL[shape.tier(upper)],
        ),
        switch=shape.index.name(upper),
        port=_excess_port(shape, upper, excess[0]) if excess else None,
        peer=shape.index.name(deviations[0][0]),
        tier=shape.tier(upper),
        links=links,
        expected=usual * len(lowers),
        deviations=dict((shape.index.name(low), cables) for low, cables in deviations),
    )


def _group_findings(shape, group, upper_tier, lower_tier):
    uppers = sorted(shape.members(group, upper_tier), key=shape.index.name)
    lowers = sorted(
        (g for g in shape.members(group, lower_tier) if any(shape.tier(u) == upper_tier for u in shape.trunk_sizes(g))),
        key=shape.index.name,
    )
    if len(uppers) < 2 or not lowers:
        return []
    counts = _trunks(shape, lowers, upper_tier)
    usual = norm(list(counts.values()))
    found = [_unbalanced(shape, upper, lowers, counts, usual, lower_tier) for upper in uppers]
    return [f for f in found if f is not None]


def check_tier_balance(shape):
    """Upper-tier switches whose links to the switches below are not spread like the rest of their tier."""
    findings = []
    for group in range(1, len(shape.groups) + 1):
        for upper_tier, lower_tier in TIER_PAIRS:
            findings += _group_findings(shape, group, upper_tier, lower_tier)
    return findings
