# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two ib_phy results of one host (before and after the passes) paired port by port (pure)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import cables as _cables


def _ports(result):
    if result is None:
        return []
    if not isinstance(result, dict) or not isinstance(result.get("ports"), list):
        raise ValueError("an ib_phy result (a dict with ports) is needed, got %r" % (type(result).__name__,))
    return [p for p in result["ports"] if isinstance(p, dict) and isinstance(p.get("end"), dict)]


def pair(after, before=None, host=None):
    """[{"end", "before", "before_at", "after", "after_at", "error", "cleared"}] for every port of ``after``.

    ``host`` names host ends that have none; ``cleared``: the before-read cleared the counters (clear: true),
    so the after-figures count from that moment.
    """
    earlier = {}
    for port in _ports(before):
        end = dict(port["end"])
        if end.get("kind") != "switch" and host and not end.get("host"):
            end["host"] = host
        earlier[_cables.end_key(end)] = port
    out = []
    for port in _ports(after):
        end = dict(port["end"])
        if end.get("kind") != "switch" and host and not end.get("host"):
            end["host"] = host
        old = earlier.get(_cables.end_key(end)) or {}
        out.append(
            {
                "end": end,
                "before": old.get("reading"),
                "before_at": old.get("read_at"),
                "after": port.get("reading"),
                "after_at": port.get("read_at"),
                "error": port.get("error"),
                "cleared": bool((before or {}).get("cleared")),
            }
        )
    return out
