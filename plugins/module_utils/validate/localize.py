# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault localization: name the suspect nodes and links from normalised pair results.

Only failures that the link or its two ends can cause take part (see NOT_THE_LINK): a result that
failed because a rail is missing on one host, because its figures are invalid, because it regressed
against the baseline (reported on its own), or that involves a host which failed before measuring
(preflight, unreachable) makes no partner a suspect.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import value_of

# failure kinds that say nothing about the link between the two ends
NOT_THE_LINK = frozenset(("missing_rail", "invalid", "regression", "preflight", "unreachable"))


def _host_outcomes(results):
    """First-pass results -> (failed partners per host, hosts with a passed pair, failing role counts
    per host)."""
    passing = set()
    failed_results = []
    for item in results:
        if item.get("pass") not in (None, 1, "1", ""):
            continue
        if not item.get("server") or not item.get("client"):
            continue
        if item.get("passed"):
            passing.add(item["server"])
            passing.add(item["client"])
        else:
            failed_results.append(item)
    return _outcomes(failed_results, passing)


def _outcomes(failed_results, passing):
    failed = dict((h, set()) for h in passing)
    roles = {}
    for item in failed_results:
        server, client = item["server"], item["client"]
        failed.setdefault(server, set()).add(client)
        failed.setdefault(client, set()).add(server)
        roles.setdefault(server, {"server": 0, "client": 0})["server"] += 1
        roles.setdefault(client, {"server": 0, "client": 0})["client"] += 1
    return failed, passing, roles


def first_pass_suspects(results):
    """(suspect_nodes, suspect_link_pairs, known_good, failed_partners): see first_pass."""
    nodes, links, good, failed, _roles = first_pass(results)
    return nodes, links, good, failed


def first_pass(results):
    """The first-pass localization rule, shared with the report.

    Returns (suspect_nodes, suspect_link_pairs, known_good, failed_partners, failing_roles).

    A node that failed with two or more different partners is a suspect node. Partners that are
    themselves suspect nodes do not count (they explain the failure): the node failing with the
    most partners is named first, its pairs are set aside, and so on while some node still fails
    with >= 2 unexplained partners. Without this, both ends of a bad link in an all_pairs run
    would also be "suspect nodes" because each failed with the link's other end and with the
    bad node. A failed host pair neither of whose ends is a suspect node failed alone: a suspect
    link. Known-good nodes are the ones all of whose pairs passed, not counting pairs with a
    suspect node (in an all_pairs run every node meets the bad node, so "all pairs passed"
    alone would leave no partner to retest with) and that passed at least one pair.
    """
    return _first_pass_of(*_host_outcomes(results))


def _first_pass_of(failed, passing, roles):
    remaining = dict((h, len(p)) for h, p in failed.items())
    # ties (same number of partners) go to the host with more failed results (e.g. several rails)
    weight = dict((h, -(r["server"] + r["client"])) for h, r in roles.items())
    heap = [(-count, weight.get(host, 0), host) for host, count in remaining.items() if count >= 2]
    heapq.heapify(heap)
    nodes = set()
    while heap:
        negative, _weight, host = heapq.heappop(heap)
        if host in nodes:
            continue
        if -negative != remaining[host]:
            if remaining[host] >= 2:
                heapq.heappush(heap, (-remaining[host], weight.get(host, 0), host))
            continue
        nodes.add(host)
        for other in failed[host]:
            if other not in nodes:
                remaining[other] -= 1
    links = set()
    for host, partners in failed.items():
        if host in nodes:
            continue
        for other in partners:
            if other not in nodes:
                links.add(tuple(sorted((host, other))))
    in_links = set(h for link in links for h in link)
    known_good = sorted(
        h for h in failed if h not in nodes and h not in in_links and h in passing and not (failed[h] - nodes)
    )
    return sorted(nodes), sorted(links), known_good, failed, roles


def implicates_link(res, exclude_hosts=()):
    """Whether a normalised result takes part in localization (passed results always do)."""
    if res["passed"]:
        return True
    if res.get("failure_kind") in NOT_THE_LINK:
        return False
    return res["server"] not in exclude_hosts and res["client"] not in exclude_hosts


def _worse(res, current):
    """Whether res is a worse measurement of a link than current (lower Gb/s, higher latency, none)."""
    if current is None:
        return True
    value, other = value_of(res), value_of(current)
    if value is None:
        return other is not None
    if other is None:
        return False
    return value > other if res.get("kind") == "latency" else value < other


def _brief(res):
    """The figures of a result that a suspect entry carries."""
    out = {
        "kind": res.get("kind", "bandwidth"),
        "bw_avg_gbps": res["bw_avg_gbps"],
        "threshold_gbps": res["threshold_gbps"],
        "failure": res["failure"],
        "failure_kind": res.get("failure_kind"),
    }
    if out["kind"] == "latency":
        out["t_typical_us"] = res.get("t_typical_us")
        out["threshold_us"] = res.get("threshold_us")
    return out


def localize(results, exclude_hosts=()):
    """Name the culprits from normalized results.

    First pass (pass 1): a node that failed with >= 2 different partners is a suspect node (partners
    already named suspect nodes do not count, see first_pass_suspects); a pair that failed
    alone is a suspect link; nodes all of whose pairs passed are known-good.
    Second pass (pass 2, each suspect and each end of a suspect link against known-good partners):
    a host that fails again with a known-good partner is a bad node; one that passes all its retests
    is cleared. Links are then re-derived: a failed first-pass pair neither of whose ends is a bad or
    (unretested) suspect node is a suspect link, a bad link once both its ends were cleared.

    Failed results that do not implicate the link (implicates_link: NOT_THE_LINK kinds, a host in
    ``exclude_hosts``, e.g. the hosts that failed preflight) are left out.

    Returns {suspect_nodes, suspect_links, known_good, cleared}.
    """
    exclude_hosts = frozenset(exclude_hosts or ())
    passing = set()  # hosts with a passed first-pass pair
    first = []  # failed first-pass results that implicate the link
    second = []
    for res in results:
        if res["pass"] == 1:
            if res["passed"]:
                passing.add(res["server"])
                passing.add(res["client"])
            elif implicates_link(res, exclude_hosts):
                first.append(res)
        elif implicates_link(res, exclude_hosts):
            second.append(res)
    nodes1, links1, good, failed, _roles = _first_pass_of(*_outcomes(first, passing))
    good_set = set(good)
    subjects = set(nodes1)
    for a, b in links1:
        subjects.add(a)
        subjects.add(b)

    retests = dict((s, []) for s in subjects)
    for res in second:
        for host, other in ((res["server"], res["client"]), (res["client"], res["server"])):
            if host in retests and other in good_set:
                retests[host].append(res)
    bad = set()
    cleared = set()
    for host, runs in retests.items():
        if any(not r["passed"] for r in runs):
            bad.add(host)
        elif runs:
            cleared.add(host)
    named = bad | (set(nodes1) - cleared)

    failing_devices = {}
    for res in first:
        if not res["passed"]:
            failing_devices.setdefault(res["server"], set()).add(res["server_device"])
            failing_devices.setdefault(res["client"], set()).add(res["client_device"])

    suspect_nodes = []
    for host in sorted(named):
        runs = retests.get(host, [])
        retest = []
        for r in runs:
            entry = {
                "partner": r["client"] if r["server"] == host else r["server"],
                "server": r["server"],
                "client": r["client"],
                "passed": r["passed"],
            }
            entry.update(_brief(r))
            retest.append(entry)
        suspect_nodes.append(
            {
                "host": host,
                "verdict": "bad_node" if host in bad else "suspect",
                "failed_with": sorted(failed.get(host, ())),
                "devices": sorted(d for d in failing_devices.get(host, ()) if d),
                "first_pass_suspect": host in nodes1,
                "retest": retest,
            }
        )

    worst = {}
    for res in first:
        if res["passed"] or res["server"] in named or res["client"] in named:
            continue
        key = res["link"]
        if _worse(res, worst.get(key)):
            worst[key] = res
    suspect_links = []
    for key in sorted(worst):
        res = worst[key]
        both_cleared = res["server"] in cleared and res["client"] in cleared
        entry = {
            "link": key,
            "server": res["server"],
            "server_device": res["server_device"],
            "client": res["client"],
            "client_device": res["client_device"],
            "test": res["test"],
            "rail": res.get("rail"),
            "verdict": "bad_link" if both_cleared else "suspect",
        }
        entry.update(_brief(res))
        suspect_links.append(entry)
    return {
        "suspect_nodes": suspect_nodes,
        "suspect_links": suspect_links,
        "known_good": good,
        "cleared": sorted(cleared - bad),
    }
