# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric against a golden topology saved earlier: cables missing, extra, or moved (one end on another
port now), and how a golden topology is given (ibnetdiscover text or an earlier result)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import finding
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index, derive_tiers, link_key
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover


def load_golden(value):
    """A golden topology given as ibnetdiscover text or as an earlier result (dict with switches/cas/links)."""
    if value is None:
        return None
    if isinstance(value, dict):
        missing = [k for k in ("switches", "cas", "links") if k not in value]
        if missing:
            raise ValueError(
                "golden topology lacks %s: pass an earlier ib_topology result or an ibnetdiscover output"
                % ", ".join(missing)
            )
        golden = dict(value)
        golden.setdefault("tiers", derive_tiers(golden))
        return golden
    return parse_ibnetdiscover(value)


def _cables(topo):
    return dict((link_key(lk), lk) for lk in topo["links"] if lk["kind"] != "aggregation")


def _moved_to(key, extra, used_extra, gidx):
    """(the end that stayed, where the other end was, where it is now, the extra cable) for a missing cable
    whose end is cabled elsewhere now; a CA end is matched first, an ISL moved at one end on either end."""
    host_ends = [e for e in key if not gidx.is_switch(e[0])]
    for end in host_ends or list(key):
        for other in extra:
            if other in used_extra or end not in other:
                continue
            was = [e for e in key if e != end][0]
            now_end = [e for e in other if e != end][0]
            return end, was, now_end, other
    return None


def _moves(missing, extra, gidx, cidx):
    """One "moved" finding per missing cable whose end is cabled elsewhere now (not a missing and an extra
    one); returns (findings, missing keys explained, extra keys used)."""
    findings, moved, used_extra = [], set(), set()
    for key in missing:
        match = _moved_to(key, extra, used_extra, gidx)
        if match is None:
            continue
        end, was, now_end, other = match
        findings.append(
            finding(
                "drift_moved",
                "error",
                "cable of %s moved: it was on %s, now on %s (golden topology): put it back or update "
                "the golden file." % (gidx.end_label(*end), gidx.end_label(*was), cidx.end_label(*now_end)),
                switch=cidx.name(now_end[0]),
                port=now_end[1],
                peer=gidx.end_label(*end),
                was=gidx.end_label(*was),
            )
        )
        used_extra.add(other)
        moved.add(key)
    return findings, moved, used_extra


def _missing(gidx, link):
    mine, other = gidx.switch_first(link)
    return finding(
        "drift_missing",
        "error",
        "cable %s <-> %s from the golden topology is missing: check both ports' link state and reseat it."
        % (gidx.end_label(*mine), gidx.end_label(*other)),
        switch=gidx.name(mine[0]),
        port=mine[1],
        peer=gidx.end_label(*other),
    )


def _extra(cidx, link):
    mine, other = cidx.switch_first(link)
    return finding(
        "drift_extra",
        "warning",
        "cable %s <-> %s is not in the golden topology: a new or re-cabled link; update the golden file "
        "if it is meant." % (cidx.end_label(*mine), cidx.end_label(*other)),
        switch=cidx.name(mine[0]),
        port=mine[1],
        peer=cidx.end_label(*other),
    )


def missing_cables(golden, current):
    """The golden topology's cables (link dicts) that the current one lacks, in key order."""
    gold, now = _cables(golden), _cables(current)
    return [gold[k] for k in sorted(gold) if k not in now]


def check_drift(golden, current):
    """Cables missing, extra or moved against a saved golden topology (both parsed topologies)."""
    gidx, cidx = Index(golden), Index(current)
    gold, now = _cables(golden), _cables(current)
    missing = [k for k in sorted(gold) if k not in now]
    extra = [k for k in sorted(now) if k not in gold]
    findings, moved, used_extra = _moves(missing, extra, gidx, cidx)
    findings += [_missing(gidx, gold[key]) for key in missing if key not in moved]
    findings += [_extra(cidx, now[key]) for key in extra if key not in used_extra]
    return findings
