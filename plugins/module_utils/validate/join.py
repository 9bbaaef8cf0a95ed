# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Join the server and client sides of a pass into pair results, and gate them once (pure).

Every pair the plan expected yields one result per rail, also when a side never came back (the
host died or its schedule was stopped): absence is a failure (``no_result``), never a silent gap.
The failure kind names the root cause: when the server side failed first (no device, port busy)
the client's "could not connect" is its consequence, so the server's kind wins.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds

# Client-side kinds that are consequences of the server side not being there.
_CONSEQUENCES = ("connect", "timeout", "no_client", "no_result")


def _key(pass_no, round_no, rail, server, client):
    return (int(pass_no), int(round_no), str(rail), server, client)


def index_sides(sides):
    """{(pass, round, rail, server, client): {"server": side, "client": side}} from side results."""
    index = {}
    for side in sides or []:
        if not isinstance(side, dict) or "role" not in side or "host" not in side:
            continue
        if side["role"] == "server":
            server, client = side["host"], side.get("peer")
        else:
            server, client = side.get("peer"), side["host"]
        key = _key(side.get("pass") or 1, side["round"], side.get("rail"), server, client)
        index.setdefault(key, {})[side["role"]] = side
    return index


def _side_failure(side, role):
    if side is None:
        return "no_result", "%s side: no result came back (the host's schedule did not finish)" % role
    if side.get("failure_kind"):
        return side["failure_kind"], "%s side: %s" % (role, side.get("failure") or side["failure_kind"])
    return None, None


def root_cause(server_side, client_side):
    """(failure_kind, sentence) from the two sides, or (None, None) when both ran cleanly."""
    skind, stext = _side_failure(server_side, "server")
    ckind, ctext = _side_failure(client_side, "client")
    if not skind and not ckind:
        return None, None
    if skind and ckind:
        # The server's cause explains the client's "could not connect"; a dead client explains
        # the server's "no client connected".
        if ckind in _CONSEQUENCES and skind not in _CONSEQUENCES:
            return skind, "%s; %s" % (stext, ctext)
        if skind in _CONSEQUENCES and ckind not in _CONSEQUENCES:
            return ckind, "%s; %s" % (ctext, stext)
        return ckind, "%s; %s" % (ctext, stext)
    if ckind:
        return ckind, ctext
    return ("server_failed" if skind in _CONSEQUENCES else skind), stext


def join_pass(pairs, sides, rails, settings):
    """Pair results for every (pair, rail) the plan expected.

    ``pairs``: plan.slice_pass()['pairs']; ``sides``: side results from every host;
    ``rails``: {host: [rail dicts]} with rate_gbps (preflight.host_rails);
    ``settings``: {test, duration, bidirectional, min_gbps, min_link_fraction, expect_rate_gbps,
    max_typical_us, max_p99_us}.
    """
    test = settings.get("test") or "write"
    kind = testkinds.kind_of(test)
    index = index_sides(sides)
    by_name = dict((h, dict((r["rail"], r) for r in hr)) for h, hr in rails.items())
    bw_threshold_cache = {}
    out = []
    for pair in pairs:
        server, client = pair["server"], pair["client"]
        for rail in pair["rails"]:
            key = _key(pair.get("pass") or 1, pair["round"], rail, server, client)
            got = index.get(key, {})
            sside, cside = got.get("server"), got.get("client")
            srail = by_name.get(server, {}).get(rail, {})
            crail = by_name.get(client, {}).get(rail, {})
            res = {
                "server": server,
                "server_device": srail.get("device") or (sside or {}).get("device"),
                "server_port": srail.get("port") or (sside or {}).get("port"),
                "client": client,
                "client_device": crail.get("device") or (cside or {}).get("device"),
                "client_port": crail.get("port") or (cside or {}).get("port"),
                "rail": rail,
                "test": test,
                "kind": kind,
                # the latency pass is a first pass of another kind: the report localises and
                # peer-gates it like pass 1 (pass 2 is only ever the bandwidth retest)
                "pass": 1 if kind == "latency" else int(pair.get("pass") or 1),
                "round": int(pair["round"]),
                "duration_s": settings.get("duration"),
            }
            measured = cside or {}
            failure_kind, failure = root_cause(sside, cside)
            if kind == "bandwidth":
                res["bw_avg_gbps"] = measured.get("bw_avg_gbps")
                res["bw_peak_gbps"] = measured.get("bw_peak_gbps")
                rates = (srail.get("rate_gbps"), crail.get("rate_gbps"))
                if rates not in bw_threshold_cache:
                    bw_threshold_cache[rates] = gate.bandwidth_threshold(
                        min_gbps=settings.get("min_gbps"),
                        min_link_fraction=settings.get("min_link_fraction"),
                        expect_rate_gbps=settings.get("expect_rate_gbps"),
                        server_rate_gbps=rates[0],
                        client_rate_gbps=rates[1],
                        bidirectional=bool(settings.get("bidirectional")),
                    )
                threshold = bw_threshold_cache[rates]
                res["threshold_gbps"] = threshold["threshold_gbps"]
                res["threshold_basis"] = threshold["basis"]
                if failure_kind is None:
                    passed, failure_kind, failure = gate.judge_bandwidth(res["bw_avg_gbps"], threshold)
                    if passed and threshold.get("error") and threshold["threshold_gbps"] is None:
                        passed, failure_kind, failure = False, "no_rate", threshold["error"]
            else:
                for name in ("t_typical_us", "t_avg_us", "t_min_us", "t_max_us", "p99_us", "p999_us"):
                    res[name] = measured.get(name)
                latency = measured.get("t_typical_us")
                if latency is None:
                    latency = measured.get("t_avg_us")
                if latency is None:
                    latency = measured.get("latency_us")
                res["t_typical_us"] = latency
                limit = settings.get("max_typical_us")
                res["threshold_us"] = float(limit) if limit is not None else None
                if failure_kind is None:
                    passed, failure_kind, failure, _limit = gate.judge_latency(
                        latency, measured.get("p99_us"), settings.get("max_typical_us"), settings.get("max_p99_us")
                    )
            res["passed"] = failure_kind is None
            res["failure_kind"] = failure_kind
            res["failure"] = failure
            out.append(res)
    return out


def summary(results):
    """Counts for the controller's one-line progress and the play output."""
    failed = [r for r in results if not r["passed"]]
    kinds = {}
    for res in failed:
        kinds[res["failure_kind"]] = kinds.get(res["failure_kind"], 0) + 1
    return {"results": len(results), "failed": len(failed), "failure_kinds": kinds}
