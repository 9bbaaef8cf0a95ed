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

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

_NOTHING = (None, None)  # the sides of a key that nothing came back for
_ROLES = ("server", "client")  # the order of a key's two sides in the index
# Client-side kinds that are consequences of the server side not being there.
_CONSEQUENCES = ("connect", "timeout", "no_client", "no_result")


def _key(pass_no, round_no, rail, server, client):
    return (int(pass_no), int(round_no), str(rail), server, client)


def _side_key(side):
    if side["role"] == "server":
        server, client = side["host"], side.get("peer")
    else:
        server, client = side.get("peer"), side["host"]
    return _key(side.get("pass") or 1, side["round"], side.get("rail"), server, client)


def _label(key, role=None):
    pass_no, round_no, rail, server, client = key
    who = "%s side of " % role if role else ""
    return "%spass %d round %d rail %s %s -> %s" % (who, pass_no, round_no, rail, server, client)


# what the join reads of a side (root_cause, _base and the gates): a side is indexed as these keys only, so the
# index of a pass's millions of sides holds a few keys each, and every clean server side of one port is one dict
SIDE_READS = (
    "device", "port", "failure_kind", "failure", "bw_avg_gbps", "bw_peak_gbps",
    "t_typical_us", "t_avg_us", "t_min_us", "t_max_us", "p99_us", "p999_us", "latency_us",
)  # fmt: skip


def _slim(side, shared):
    """The keys of SIDE_READS that ``side`` has; a server side without a failure is the one dict of its device and
    port in ``shared`` (it carries nothing else the join reads)."""
    if side["role"] == "server" and not side.get("failure_kind") and not side.get("failure"):
        port = (side.get("device"), side.get("port"))
        got = shared.get(port)
        if got is None:
            got = shared[port] = dict((k, side[k]) for k in ("device", "port") if k in side)
        return got
    # a key whose value is None is left out: the join reads every side with .get (a clean client side, the most
    # common entry of the index, is 4 keys instead of 6: a dict of 8 slots, not 16)
    return {k: side[k] for k in SIDE_READS if side.get(k) is not None}


def index_sides(sides, duplicates=None):
    """{(pass, round, rail, server, client): [server side, client side]} (None for a side that did not come back)
    from side results (an iterable: a generator over the hosts' side files is read once, never held whole), each
    side cut to what the join reads (SIDE_READS). A second side of the same key and role is never merged: its key
    goes to ``duplicates`` (a list) when given. (A pair of sides is a list, not a dict: 4.2 M of them at 1024 hosts x
    8 rails all_pairs.)"""
    index = {}
    shared = {}
    for side in sides or []:
        if not isinstance(side, dict) or side.get("role") not in _ROLES or "host" not in side:
            continue
        key = _side_key(side)
        got = index.get(key)
        if got is None:
            got = index[key] = [None, None]
        at = 0 if side["role"] == "server" else 1
        if got[at] is not None:
            if duplicates is not None:
                duplicates.append((key, _ROLES[at]))
            continue
        got[at] = _slim(side, shared)
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


def line_rate(srail, crail, bidirectional=False):
    """The slower end's port rate (x2 bidirectional): no figure can be above it. None when a rate is unknown."""
    rates = [r for r in (srail.get("rate_gbps"), crail.get("rate_gbps")) if isinstance(r, (int, float)) and r > 0]
    if len(rates) < 2:
        return None
    return float(min(rates)) * (2 if bidirectional else 1)


class _Join:
    """One pass's join: the plan's rails, the indexed sides, the settings, and what every result of the pass shares
    (worked out once: the keys every result holds alike, the line rate and the gate of each pair of port rates)."""

    def __init__(self, sides, rails, settings):
        self.settings = settings
        self.test = settings.get("test") or "write"
        self.kind = testkinds.kind_of(self.test)
        self.duplicates = []
        self.index = index_sides(sides, self.duplicates)
        self.duplicate_roles = {}  # key -> the roles that came back twice (once per result, not a scan per result)
        for key, role in self.duplicates:
            self.duplicate_roles.setdefault(key, []).append(role)
        self.by_name = dict((h, dict((r["rail"], r) for r in hr)) for h, hr in rails.items())
        # a float, as the report's normaliser makes it: fabric_join's duration is an int, and an int figure sent
        # every result of a pass down the normaliser's slow path (results.normalize_result): 3.3 us a result, not 1.2
        duration = settings.get("duration")
        number = isinstance(duration, (int, float)) and not isinstance(duration, bool)
        self.duration_s = float(duration) if number else duration
        self.bidirectional = bool(settings.get("bidirectional"))
        # the keys every result of the pass holds alike (copied into each result, not built key by key)
        self.shared = {
            "test": self.test,
            "kind": self.kind,
            "duration_s": self.duration_s,
            # the parameters a baseline compares like with like (report/baseline.py PARAMS)
            "size": settings.get("size"),
            "qps": settings.get("qps"),
            "bidirectional": self.bidirectional if self.kind == "bandwidth" else None,
        }
        self.thresholds = {}
        self.gates = {}

    def rail_of(self, host, rail):
        return self.by_name.get(host, {}).get(rail, {})

    def threshold(self, rates):
        if rates not in self.thresholds:
            s = self.settings
            self.thresholds[rates] = gate.bandwidth_threshold(
                min_gbps=s.get("min_gbps"),
                min_link_fraction=s.get("min_link_fraction"),
                expect_rate_gbps=s.get("expect_rate_gbps"),
                server_rate_gbps=rates[0],
                client_rate_gbps=rates[1],
                bidirectional=self.bidirectional,
            )
        return self.thresholds[rates]

    def bandwidth_gate(self, srail, crail):
        """(line_rate_gbps, threshold) of a pair of ports, once per pair of rates."""
        rates = (srail.get("rate_gbps"), crail.get("rate_gbps"))
        got = self.gates.get(rates)
        if got is None:
            got = self.gates[rates] = (line_rate(srail, crail, self.bidirectional), self.threshold(rates))
        return got


def _base(join, pair, rail, sside, cside):
    server, client = pair["server"], pair["client"]
    srail, crail = join.rail_of(server, rail), join.rail_of(client, rail)
    res = dict(join.shared)
    res.update(
        server=server,
        server_device=srail.get("device") or (sside or {}).get("device"),
        server_port=srail.get("port") or (sside or {}).get("port"),
        client=client,
        client_device=crail.get("device") or (cside or {}).get("device"),
        client_port=crail.get("port") or (cside or {}).get("port"),
        rail=rail,
        round=int(pair["round"]),
        # the figures are the client side's: an invalid figure counts against the host that produced it
        measured_by=client,
    )
    # the latency pass is a first pass of another kind: the report localises and
    # peer-gates it like pass 1 (pass 2 is only ever the bandwidth retest)
    res["pass"] = 1 if join.kind == "latency" else int(pair.get("pass") or 1)
    return res


def _gate_bandwidth(join, res, measured, failure_kind, failure):
    srail, crail = join.rail_of(res["server"], res["rail"]), join.rail_of(res["client"], res["rail"])
    res["bw_avg_gbps"] = measured.get("bw_avg_gbps")
    res["bw_peak_gbps"] = measured.get("bw_peak_gbps")
    res["line_rate_gbps"], threshold = join.bandwidth_gate(srail, crail)
    res["threshold_gbps"] = threshold["threshold_gbps"]
    res["threshold_basis"] = threshold["basis"]
    if failure_kind is not None:
        return failure_kind, failure
    passed, failure_kind, failure = gate.judge_bandwidth(res["bw_avg_gbps"], threshold)
    if passed and threshold.get("error") and threshold["threshold_gbps"] is None:
        return "no_rate", threshold["error"]
    return failure_kind, failure


LATENCY_FIGURES = ("t_typical_us", "t_avg_us", "t_min_us", "t_max_us", "p99_us", "p999_us")
LATENCY_BASES = (("t_typical_us", "t_typical"), ("t_avg_us", "t_avg"), ("latency_us", "latency_us"))


def _gate_latency(join, res, measured, failure_kind, failure):
    for name in LATENCY_FIGURES:
        res[name] = measured.get(name)
    res["t_typical_us"], res["latency_basis"] = None, None
    for name, basis in LATENCY_BASES:  # the figure gated: typical where printed, else the average
        if measured.get(name) is not None:
            res["t_typical_us"], res["latency_basis"] = measured[name], basis
            break
    limit = join.settings.get("max_typical_us")
    res["threshold_us"] = float(limit) if limit is not None else None
    if failure_kind is not None:
        return failure_kind, failure
    _passed, failure_kind, failure, _limit = gate.judge_latency(
        res["t_typical_us"], res["p99_us"], join.settings.get("max_typical_us"), join.settings.get("max_p99_us")
    )
    if failure_kind is None and join.settings.get("max_p99_us") is not None and res["p99_us"] is None:
        # a ceiling the tool printed no figure for is a gate that could not apply: never a silent pass
        return "ungated", (
            "max_p99_us is %s us but the latency tool printed no p99 for this pair: it could not be gated on it "
            "(run more iterations, or unset max_p99_us)" % join.settings["max_p99_us"]
        )
    return failure_kind, failure


def _duplicate_failure(join, key):
    roles = join.duplicate_roles.get(key)
    if not roles:
        return None, None
    roles = sorted(roles)
    return "refused", "%s: %s came back twice, refused (not merged): a side is measured once" % (
        _label(key),
        " and ".join("the %s side" % r for r in roles),
    )


def _join_one(join, pair, rail):
    key = _key(pair.get("pass") or 1, pair["round"], rail, pair["server"], pair["client"])
    # taken out of the index as it is joined: what is left at the end is what the plan does not hold (_refused),
    # and the index shrinks as the results are written (a pass planning one key twice gets no_result the second time)
    sside, cside = join.index.pop(key, _NOTHING)
    res = _base(join, pair, rail, sside, cside)
    failure_kind, failure = _duplicate_failure(join, key)
    if failure_kind is None:
        failure_kind, failure = root_cause(sside, cside)
    gate_of = _gate_bandwidth if join.kind == "bandwidth" else _gate_latency
    failure_kind, failure = gate_of(join, res, cside or {}, failure_kind, failure)
    res["passed"] = failure_kind is None
    res["failure_kind"] = failure_kind
    res["failure"] = failure
    return res, key


def _joined(join, pairs):
    """Each (pair, rail)'s result, as a generator."""
    for pair in pairs:
        for rail in pair["rails"]:
            yield _join_one(join, pair, rail)[0]


def _refused(join):
    """A sentence for each side left in the index once every planned pair was joined: the plan does not hold it."""
    return [
        "%s: the plan holds no such pair, refused (not merged)"
        % _label(key, "/".join(sorted(role for role, side in zip(_ROLES, sides) if side is not None)))
        for key, sides in sorted(join.index.items())
    ]


def join_checked(pairs, sides, rails, settings):
    """(results, refused): join_pass's results, and one sentence per side the plan does not hold (refused, never
    merged into a result)."""
    with paused_gc():
        join = _Join(sides, rails, settings)
        out = list(_joined(join, pairs))
        return out, _refused(join)


def join_written(pairs, sides, rails, settings, dest):
    """(summary, failed results, refused): join_checked's, with the results written to ``dest`` as they are joined
    instead of held: at 1024 hosts x 8 rails all_pairs the 4.2 M result dicts were most of the join's memory. The
    file is resultfile.py's: a JSON list of results, table-encoded when the pass plans more than
    resultfile.COMPACT_ABOVE of them. ``dest`` None writes nothing (check mode)."""
    with paused_gc():
        join = _Join(sides, rails, settings)
        failed = []
        count = [0]

        def counted():
            for res in _joined(join, pairs):
                count[0] += 1
                if not res["passed"]:
                    failed.append(res)
                yield res

        if dest is None:
            for _res in counted():
                pass
        else:
            pairs = list(pairs)  # read twice: counted here, joined below
            planned = sum(len(pair["rails"]) for pair in pairs)
            resultfile.write_results(dest, counted(), compact=planned > resultfile.COMPACT_ABOVE)
        counts = summary(failed)
        counts["results"] = count[0]
        return counts, failed, _refused(join)


def join_pass(pairs, sides, rails, settings):
    """Pair results for every (pair, rail) the plan expected.

    ``pairs``: plan.slice_pass()['pairs']; ``sides``: side results from every host;
    ``rails``: {host: [rail dicts]} with rate_gbps (preflight.host_rails);
    ``settings``: {test, duration, bidirectional, min_gbps, min_link_fraction, expect_rate_gbps,
    max_typical_us, max_p99_us}. A result carries ``line_rate_gbps`` (the slower end's rate: a figure above it is
    invalid in the report), ``measured_by`` (the client) and, for latency, ``latency_basis`` (the figure gated:
    t_typical, or t_avg where the tool printed no typical). A pair with a side that came back twice fails as
    ``refused``; a latency ceiling the tool printed no figure for fails as ``ungated``.
    """
    return join_checked(pairs, sides, rails, settings)[0]


def summary(results):
    """Counts for the controller's one-line progress and the play output."""
    failed = [r for r in results if not r["passed"]]
    kinds = {}
    for res in failed:
        kinds[res["failure_kind"]] = kinds.get(res["failure_kind"], 0) + 1
    return {"results": len(results), "failed": len(failed), "failure_kinds": kinds}
