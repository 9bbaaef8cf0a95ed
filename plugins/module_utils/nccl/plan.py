# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Multi-node NCCL test plans, and the bisection that names the node or pair behind a failing group.

Plans (each a list of runs; a run is one launcher command over a group of hosts):

- ``per_rail``: node pairs, one GPU per node (the GPU beside the rail's NIC: GPU index = rail index, the HGX
  layout), ``NCCL_IB_HCA==<dev>:<port>`` pinned to the rail, Ring/Simple forced (NCCL's maintainers' advice for
  benchmarking two nodes), gated per NIC.
- ``full_node``: the same pairs with every GPU and every rail (the node's own /etc/nccl.conf decides the NICs; the
  plan expects all of its rails).
- ``allocation``: every host at once, or one group per NVLink domain when ``domains`` maps hosts to one.

Pairs are disjoint and in inventory order ((h1, h2), (h3, h4), ...); an odd last host is paired with the first.
A run's ``expect`` says what NCCL's log must show (transport, NICs, GPUDirect) for the transport check.

Bisection: a failing group is split into halves (a known-good host pads a half of one) and both are re-run;
a failing half is split again, until a pair is left, whose two hosts are each run with a known-good host. The
verdict names a node (it fails with known-good partners), two nodes, a pair (each passes with others: the path
between them), or a group (every half passes: the fault shows only at that scale, e.g. the spine between them).
The state is plain data, advanced with the outcomes of each round of runs. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PLANS = ("per_rail", "full_node", "allocation")
DEFAULT_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
# NCCL's maintainers' advice for benchmarking a pair of nodes: one algorithm, one protocol, comparable figures
PER_RAIL_ENV = {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}
MAX_BISECT_DEPTH = 16


class PlanError(ValueError):
    """One sentence: what is wrong with the plan's inputs, and what to do."""


def pairs(hosts):
    """Disjoint pairs in order; an odd last host is paired with the first (so every host is in a pair)."""
    hosts = list(hosts)
    out = [hosts[i : i + 2] for i in range(0, len(hosts) - 1, 2)]
    if len(hosts) % 2 == 1 and len(hosts) > 1:
        out.append([hosts[-1], hosts[0]])
    return out


def parse_port(text):
    """'mlx5_0:1' -> ('mlx5_0', 1)."""
    device, _sep, port = str(text).partition(":")
    return device, int(port or 1)


def rails_of(host_ports):
    """(rails, missing): the rails of the group (every 'dev:port' any host has, sorted by device name as NCCL
    orders them) and, per host, the rails it lacks (each a finding: that host cannot be tested on that rail)."""
    every = sorted(set(p for ports in host_ports.values() for p in ports), key=_rail_sort)
    missing = {}
    for host, ports in host_ports.items():
        lacks = [r for r in every if r not in ports]
        if lacks:
            missing[host] = lacks
    return every, missing


def _rail_sort(rail):
    device, port = parse_port(rail)
    digits = "".join(ch for ch in device if ch.isdigit())
    return (device.rstrip("0123456789"), int(digits) if digits else -1, port)


def _check_inputs(hosts, plans, collectives):
    if len(hosts) < 2:
        raise PlanError("a multi-node NCCL plan needs at least two hosts, got %s" % (list(hosts),))
    unknown = [p for p in plans if p not in PLANS]
    if unknown:
        raise PlanError("unknown plan(s) %s: use %s" % (", ".join(unknown), ", ".join(PLANS)))
    if not collectives:
        raise PlanError("collectives is empty: name at least one, e.g. [all_reduce]")


def build_runs(hosts, host_ports, host_gpus, plans, collectives=DEFAULT_COLLECTIVES, ranks_per_node=None,
               domains=None, transport="IB", gdr=None):  # fmt: skip
    """{runs, findings} for ``plans`` over ``hosts`` (inventory order).

    host_ports: {host: ['mlx5_0:1', ...]} (ib_facts' active ports); host_gpus: {host: GPUs found};
    ranks_per_node: None (every GPU of the group's smallest host) or a number; domains: {host: NVLink domain}
    or None; transport/gdr: what every inter-node run must use (gdr None: not checked).
    Findings are {kind, host, message}: a host missing a rail or having fewer GPUs than the others."""
    hosts = list(hosts)
    _check_inputs(hosts, plans, collectives)
    ports = dict((h, list(host_ports.get(h) or [])) for h in hosts)
    rails, missing = rails_of(ports)
    findings = _rail_findings(missing) + _gpu_findings(hosts, host_gpus)
    base = {"collectives": list(collectives), "transport": transport, "gdr": gdr}
    runs = []
    if "per_rail" in plans:
        runs += _per_rail_runs(hosts, ports, rails, base)
    if "full_node" in plans:
        runs += [_group_run("full_node", pair, rails, host_gpus, ranks_per_node, base) for pair in pairs(hosts)]
    if "allocation" in plans:
        runs += _allocation_runs(hosts, rails, host_gpus, ranks_per_node, domains, base)
    return {"runs": runs, "findings": findings, "rails": rails}


def _rail_findings(missing):
    return [
        {
            "kind": "missing_rail",
            "host": host,
            "message": "%s has no ACTIVE %s: it is not tested on that rail" % (host, ", ".join(lacks)),
        }
        for host, lacks in sorted(missing.items())
    ]


def _gpu_findings(hosts, host_gpus):
    counts = dict((h, int(host_gpus.get(h) or 0)) for h in hosts)
    most = max(counts.values()) if counts else 0
    return [
        {
            "kind": "gpu_count",
            "host": host,
            "message": "%s has %d GPU%s, the other hosts up to %d: a GPU is missing or its driver lost it"
            % (host, n, "" if n == 1 else "s", most),
        }
        for host, n in sorted(counts.items())
        if n < most
    ]


def _run_id(plan, hosts, rail=None):
    return "%s%s:%s" % (plan, "/" + rail if rail else "", "+".join(hosts))


def _per_rail_runs(hosts, ports, rails, base):
    runs = []
    for index, rail in enumerate(rails):
        device, port = parse_port(rail)
        able = [h for h in hosts if rail in ports[h]]
        for pair in pairs(able):
            env = dict(PER_RAIL_ENV, NCCL_IB_HCA="=%s:%d" % (device, port), CUDA_VISIBLE_DEVICES=str(index))
            runs.append(
                {
                    "id": _run_id("per_rail", pair, device),
                    "plan": "per_rail",
                    "hosts": pair,
                    "rail": device,
                    "ranks_per_node": 1,
                    "nics": 1,
                    "env": env,
                    "collectives": base["collectives"],
                    "expect": _expect(pair, base, [device]),
                }
            )
    return runs


def _expect(hosts, base, hcas):
    inter_node = len(hosts) > 1
    return {
        "hosts": list(hosts),
        "transport": base["transport"] if inter_node else None,
        "hcas": list(hcas) if inter_node and base["transport"] == "IB" else None,
        "gdr": base["gdr"] if inter_node else None,
    }


def _ranks(group, host_gpus, ranks_per_node):
    if ranks_per_node:
        return int(ranks_per_node)
    counts = [int(host_gpus.get(h) or 0) for h in group]
    fewest = min(counts) if counts else 0
    if fewest < 1:
        bare = [h for h in group if not host_gpus.get(h)]
        raise PlanError("no GPU found on %s: load the NVIDIA driver there, or set ranks_per_node" % ", ".join(bare))
    return fewest


def _group_run(plan, group, rails, host_gpus, ranks_per_node, base, expect_net=True, suffix=""):
    devices = sorted(set(parse_port(r)[0] for r in rails))
    run = {
        "id": _run_id(plan, group) + suffix,
        "plan": plan,
        "hosts": list(group),
        "rail": None,
        "ranks_per_node": _ranks(group, host_gpus, ranks_per_node),
        "nics": len(devices),
        "env": {},
        "collectives": base["collectives"],
        "expect": _expect(group, base, devices),
    }
    if not expect_net:
        run["expect"].update({"transport": None, "hcas": None, "gdr": None})
    return run


def _allocation_runs(hosts, rails, host_gpus, ranks_per_node, domains, base):
    if not domains:
        return [_group_run("allocation", hosts, rails, host_gpus, ranks_per_node, base)]
    by_domain = {}
    for host in hosts:
        by_domain.setdefault(str(domains.get(host, "?")), []).append(host)
    runs = []
    for name in sorted(by_domain):
        group = by_domain[name]
        if len(group) > 1:
            # inside one NVLink domain the traffic goes over NVLink, not the NICs: no network is expected
            runs.append(_group_run("allocation", group, rails, host_gpus, ranks_per_node, base, False, "@" + name))
    return runs


def subset_run(run, hosts, serial):
    """A copy of ``run`` over ``hosts`` (a bisection step): same plan, rail, ranks, env and collectives."""
    out = dict(run)
    out["hosts"] = list(hosts)
    out["id"] = "%s~b%d:%s" % (run["id"].split("~", 1)[0].split(":", 1)[0], serial, "+".join(hosts))
    out["expect"] = dict(run["expect"], hosts=list(hosts))
    out["bisect_of"] = run["id"]
    return out


# ---- bisection -------------------------------------------------------------------------------------------


def bisect_start(run, known_good=()):
    """The bisection state of a failed ``run``: its first round of tests, or an immediate verdict."""
    state = {
        "run": dict((k, v) for k, v in run.items() if k != "bisect_of"),
        "known_good": sorted(set(known_good) - set(run["hosts"])),
        "frames": [],
        "pending": [],
        "verdicts": [],
        "tested": [],
        "serial": 0,
        "depth": 0,
    }
    _push(state, list(run["hosts"]))
    return state


def _good(state, avoid):
    for host in state["known_good"]:
        if host not in avoid:
            return host
    return None


def _split(group, good):
    """Tests for a group of 3 or more: its two halves, each of at least two hosts."""
    half = (len(group) + 1) // 2
    first, second = group[:half], group[half:]
    if len(second) == 1:
        second = second + [good] if good else [first[-1]] + second
    return [first, second]


def _push(state, group):
    good = _good(state, group)
    if len(group) >= 3:
        frame = {"group": group, "step": "halves", "tests": _split(group, good), "good": good}
    elif len(group) == 2 and good:
        frame = {"group": group, "step": "against_good", "tests": [[group[0], good], [group[1], good]], "good": good}
    elif len(group) == 2:
        _verdict(state, "pair", group, "no known-good host to tell them apart")
        return
    else:
        _verdict(state, "node", group, "it fails with a known-good partner")
        return
    frame["runs"] = []
    for hosts in frame["tests"]:
        state["serial"] += 1
        sub = subset_run(state["run"], hosts, state["serial"])
        frame["runs"].append(sub["id"])
        state["pending"].append(sub)
    state["frames"].append(frame)


def _verdict(state, kind, hosts, why):
    state["verdicts"].append({"kind": kind, "hosts": list(hosts), "why": why})


def bisect_advance(state, outcomes):
    """The state after one round: ``outcomes`` is {run id: passed (bool)} for every pending run."""
    missing = [r["id"] for r in state["pending"] if r["id"] not in outcomes]
    if missing:
        raise PlanError("bisection round lacks outcomes for %s" % ", ".join(missing))
    frames = state["frames"]
    state = dict(state, pending=[], frames=[], depth=state["depth"] + 1)
    state["known_good"] = list(state["known_good"])
    state["verdicts"] = list(state["verdicts"])
    state["tested"] = list(state["tested"])
    for frame in frames:
        results = [bool(outcomes[run_id]) for run_id in frame["runs"]]
        for run_id, hosts, passed in zip(frame["runs"], frame["tests"], results):
            state["tested"].append({"id": run_id, "hosts": hosts, "passed": passed})
            if passed:
                state["known_good"] = sorted(set(state["known_good"]) | set(hosts))
        _conclude(state, frame, results)
    if state["depth"] >= MAX_BISECT_DEPTH and state["pending"]:
        state["pending"], state["frames"] = [], []
        _verdict(state, "group", state["run"]["hosts"], "bisection stopped after %d rounds" % MAX_BISECT_DEPTH)
    return state


def _conclude(state, frame, results):
    group = frame["group"]
    if frame["step"] == "against_good":
        bad = [host for host, passed in zip(group, results) if not passed]
        if len(bad) == 1:
            _verdict(state, "node", bad, "it fails with known-good %s, its partner passes with it" % frame["good"])
        elif bad:
            _verdict(state, "nodes", bad, "each fails with known-good %s" % frame["good"])
        else:
            _verdict(state, "pair", group, "each passes with known-good %s: the path between them" % frame["good"])
        return
    failing = [hosts for hosts, passed in zip(frame["tests"], results) if not passed]
    if not failing:
        _verdict(state, "group", group, "every half passes: the fault shows only with the whole group")
        return
    shared = set(failing[0]).intersection(*failing[1:]) if len(failing) > 1 else set()
    if len(shared) == 1:
        # overlapping halves (three hosts, none known good): the one host every failing test holds
        _verdict(
            state, "node", sorted(shared), "it is in every failing test (%s)" % ", ".join("+".join(f) for f in failing)
        )
        return
    for hosts in failing:
        suspects = [h for h in hosts if h in group and h not in state["known_good"]]
        if len(suspects) == 1 and len(hosts) == 2:
            _verdict(state, "node", suspects, "it fails with known-good %s" % [h for h in hosts if h != suspects[0]][0])
        elif suspects:
            _push(state, suspects)


def bisect_done(state):
    """True when no run is pending: ``verdicts`` holds what the bisection found."""
    return not state["pending"]
