# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm as the fabric verdict drives it: parse node states, plan drains and resumes, render topology.conf.

Pure functions, no Ansible: the slurm_remediate module runs scontrol and hands the text here; the node health
check (node_health.py) shares the reason namespace and the drain command.

Safety rules the planner enforces (the reason why this is code and not a loop of scontrol calls):
  - a node drained, down, failed or reserved for a reason that is not ours is never touched;
  - only nodes whose reason starts with our prefix are resumed, only when they now pass, only when asked;
  - a systemic verdict drains nothing, and no run drains more than the guard allows (a fabric-wide fault
    must not empty the cluster): the plan is refused as a whole, naming every node it would have drained.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args

REASON_PREFIX = "ibtune:"
# One namespace per source of a drain, under the collection's prefix: each source resumes only what it drained.
HEALTH_PREFIX = "ibtune: node-health:"
SOURCES = ("validation", "health")
# `scontrol show node --oneliner`: one node per line, "Key=value" fields separated by single spaces. Some
# values hold spaces themselves (OS=Linux 6.1.0-13-amd64 #1 SMP ...), so a field starts only where a space is
# followed by a key and "="; Reason= is the last field and takes the rest of the line.
_FIELD_RE = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_]*)=")
_REASON_SUFFIX_RE = re.compile(r"^(?P<text>.*?)\s*\[(?P<user>[^@\]\s]+)@(?P<time>[^\]\s]+)\]\s*$")

# Base states whose node is out of service on its own; flags that take a node out of service.
_HELD_BASES = ("DOWN", "FAIL", "FUTURE", "DRAINED", "DRAINING", "MAINT", "RESERVED")  # the last four: sinfo %T words
_HELD_FLAGS = (
    "DRAIN",
    "DRAINING",
    "DRAINED",
    "FAIL",
    "FAILING",
    "MAINTENANCE",
    "MAINT",
    "RESERVED",
    "REBOOT_REQUESTED",
    "REBOOT_ISSUED",
    "POWERED_DOWN",
    "POWER_DOWN",
    "POWERING_DOWN",
)


def _split_fields(line):
    """Fields of one --oneliner line, in order, as (key, value); Reason takes the rest of the line."""
    fields = []
    matches = list(_FIELD_RE.finditer(line))
    index = 0
    while index < len(matches):
        match = matches[index]
        key = match.group(1)
        if key == "Reason":
            fields.append((key, line[match.end() :].rstrip()))
            break
        end = matches[index + 1].start() if index + 1 < len(matches) else len(line)
        # a key inside a value ("CfgTRES=cpu=2,mem=1M") is preceded by "=" or ",", never by a space, so
        # every match here is a real field; the value runs to the next one.
        fields.append((key, line[match.end() : end].rstrip()))
        index += 1
    return fields


def split_reason(text):
    """'ibtune: bad link ... [root@2026-12-01T07:42:25]' -> (reason, user, time); (None, None, None) if empty."""
    if text is None:
        return None, None, None
    text = text.strip()
    if not text or text == "(null)":
        return None, None, None
    match = _REASON_SUFFIX_RE.match(text)
    if match:
        return match.group("text"), match.group("user"), match.group("time")
    return text, None, None


def parse_state(text):
    """'IDLE+DRAIN' -> ('IDLE', ['DRAIN']); 'DOWN*' (sinfo style) -> ('DOWN', ['NOT_RESPONDING'])."""
    text = (text or "").strip().upper()
    flags = []
    if text.endswith("*"):
        text = text[:-1]
        flags.append("NOT_RESPONDING")
    parts = [p for p in text.split("+") if p]
    if not parts:
        return "UNKNOWN", flags
    return parts[0], parts[1:] + flags


def parse_show_node(text):
    """Parse `scontrol show node --oneliner` output into a list of node dicts (in Slurm's order).

    Each node: name, state (base state, e.g. IDLE), flags (e.g. ['DRAIN']), state_text (as Slurm wrote it),
    reason (without the [user@time] suffix, None when there is none), reason_user, reason_time, partitions
    (list), fields (every field as text). Lines without NodeName= ("No nodes in the system") are skipped.
    """
    nodes = []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line.startswith("NodeName="):
            continue
        fields = dict(_split_fields(line))
        state, flags = parse_state(fields.get("State"))
        reason, user, when = split_reason(fields.get("Reason"))
        partitions = fields.get("Partitions") or ""
        nodes.append(
            {
                "name": fields["NodeName"],
                "state": state,
                "flags": flags,
                "state_text": fields.get("State", ""),
                "reason": reason,
                "reason_user": user,
                "reason_time": when,
                "partitions": [p for p in partitions.split(",") if p and p != "(null)"],
                "fields": fields,
            }
        )
    return nodes


def parse_sinfo_json(data):
    """Nodes of `sinfo --json` (Slurm 22.05: {"nodes": [{name, state, state_flags, reason, ...}]}, decoded)
    in the shape parse_show_node returns; reason_time is the epoch of reason_changed_at."""
    nodes = []
    for entry in data.get("nodes", []) if isinstance(data, dict) else []:
        state = str(entry.get("state") or "unknown").upper()
        flags = [str(f).upper() for f in entry.get("state_flags") or []]
        nodes.append(
            {
                "name": entry["name"],
                "state": state,
                "flags": flags,
                "state_text": "+".join([state] + flags),
                "reason": entry.get("reason") or None,
                "reason_user": entry.get("reason_set_by_user") or None,
                "reason_time": entry.get("reason_changed_at") or None,
                "partitions": list(entry.get("partitions") or []),
                "fields": {},
            }
        )
    return nodes


def reason_source(reason):
    """'health' for the node health check's reasons, 'validation' for the other ibtune reasons (a fabric
    validation, slurm_remediate), None for a reason that is not ours."""
    if not reason or not reason.startswith(REASON_PREFIX):
        return None
    return "health" if reason.startswith(HEALTH_PREFIX) else "validation"


def is_ours(reason, prefix=REASON_PREFIX, source=None):
    """Whether the reason carries our prefix (and, with ``source``, was written by that source)."""
    if not reason or not reason.startswith(prefix):
        return False
    return source is None or reason_source(reason) == source


def held_by_us(nodes, prefix=REASON_PREFIX):
    """Names of the nodes Slurm holds with one of our reasons (any source): what a guard has to count."""
    return sorted(n["name"] for n in nodes if is_held(n) and is_ours(n["reason"], prefix))


def is_held(node):
    """True when Slurm keeps the node out of service: down, failed, drained or draining, reserved, maintenance."""
    return node["state"] in _HELD_BASES or any(f in _HELD_FLAGS for f in node["flags"])


def drain_reason(reason, today, prefix=REASON_PREFIX):
    """'ibtune: bad link mlx5_3 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01': one line, our prefix, the date."""
    text = " ".join((reason or "failed fabric validation").split())
    if text.startswith(prefix):
        text = text[len(prefix) :].strip()
    return "%s %s %s" % (prefix, text, today)


def drain_argv(node, reason, scontrol="scontrol"):
    return [scontrol, "update", "NodeName=%s" % node, "State=DRAIN", "Reason=%s" % reason]


def resume_argv(node, scontrol="scontrol"):
    return [scontrol, "update", "NodeName=%s" % node, "State=RESUME"]


# --- the verdict -------------------------------------------------------------------------------


def _failed_host(item):
    """(host, reason, culprit) of a failed_hosts entry; reports before the culprit flag blame every failed host."""
    if isinstance(item, dict):
        return item.get("host"), item.get("reason"), item.get("culprit", True) is not False
    return item, None, True


def verdict_from_report(report):
    """The parts of report.json the planner needs: {failed: {host: reason}, passed: [..], expected: [..], systemic}.

    Reports from the engine rewrite carry failed_hosts/passed_hosts/expected_hosts/systemic; a failed host whose
    ``culprit`` is false (the verdict does not blame it: untested, a gate that could not apply) is not drained.
    Older reports have none of them: then the suspect nodes fail (bad_node or suspect), and when there is no
    suspect node but failed pairs, the hosts of failed pairs do; passed is unknown (nothing is resumed from an old
    report).
    """
    report = report or {}
    failed = {}
    if report.get("failed_hosts") is not None:
        kept = set()
        for item in report.get("failed_hosts") or []:
            host, reason, culprit = _failed_host(item)
            kept.add(host)
            if culprit and host and host not in failed:
                failed[str(host)] = reason or "failed fabric validation"
        # a failed host the verdict does not blame (untested, behind a switch fault...) is neither drained nor resumed
        passed = [str(h) for h in report.get("passed_hosts") or [] if h not in kept]
    else:
        for node in report.get("suspect_nodes") or []:
            words = "bad node" if node.get("verdict") == "bad_node" else "suspect node"
            devices = ",".join(node.get("devices") or [])
            failed[str(node["host"])] = "%s%s" % (words, (" " + devices) if devices else "")
        if not failed:
            for pair in report.get("failed_pairs") or []:
                label = "failed %s %s-%s" % (pair.get("test") or "pair", pair.get("server"), pair.get("client"))
                for host in (pair.get("server"), pair.get("client")):
                    if host and host not in failed:
                        failed[str(host)] = label
        passed = []
    expected = [str(h) for h in report.get("expected_hosts") or []]
    systemic = report.get("systemic") or None
    return {"failed": failed, "passed": sorted(set(passed)), "expected": expected, "systemic": systemic}


# --- the plan ----------------------------------------------------------------------------------


def _index(nodes):
    by_name = {}
    for node in nodes:
        by_name[node["name"]] = node
    short = {}
    for node in nodes:
        short.setdefault(node["name"].split(".")[0], node)
    return by_name, short


def _lookup(host, by_name, short):
    return by_name.get(host) or by_name.get(host.split(".")[0]) or short.get(host.split(".")[0])


def _snapshot(node):
    return {"state": node["state_text"] or node["state"], "reason": node["reason"]}


def guard_limit(partition_size, max_drain_fraction, max_drain=None):
    """How many nodes may be held by us at once: floor(fraction x partition size), capped by max_drain (None: no
    cap). The nodes already held with our reasons (any source, earlier runs included) count against it."""
    limit = int(max_drain_fraction * partition_size + 1e-9)
    if max_drain is not None and max_drain >= 0:
        limit = min(limit, max_drain)
    return limit


def _members(nodes, partition):
    if not partition:
        return list(nodes)
    members = [n for n in nodes if partition in n["partitions"]]
    if not members:
        raise ValueError(
            "partition %r has no nodes in `scontrol show node`: give a partition Slurm knows "
            "(sinfo lists them) or none for the whole cluster" % partition
        )
    return members


def _drain_action(node, text, today, prefix, scontrol):
    reason = drain_reason(text, today, prefix)
    return {
        "node": node["name"],
        "action": "drain",
        "reason": reason,
        "argv": drain_argv(node["name"], reason, scontrol),
        "before": _snapshot(node),
        "after": {"state": "%s+DRAIN" % node["state"], "reason": reason},
    }


def _resume_action(node, scontrol):
    return {
        "node": node["name"],
        "action": "resume",
        "reason": None,
        "argv": resume_argv(node["name"], scontrol),
        "before": _snapshot(node),
        "after": {"state": node["state"] if node["state"] not in _HELD_BASES else "IDLE", "reason": None},
    }


def _plan_drains(ctx, verdict, out):
    """Drain actions for the failed hosts Slurm does not hold yet; the others are left alone, saying why."""
    drains = []
    for host in sorted(verdict["failed"]):
        node = _lookup(host, ctx["by_name"], ctx["short"])
        if node is None:
            known = _lookup(host, ctx["all_by_name"], ctx["all_short"]) is not None
            out["untouched"].append(
                {"host": host, "why": "not in partition %s" % ctx["partition"] if known else "not a Slurm node"}
            )
            continue
        if is_held(node):
            why = (
                "already drained by ibtune (%s)" % node["reason"]
                if is_ours(node["reason"], ctx["prefix"])
                else "left alone: %s for a reason that is not ours (%s)"
                % (node["state_text"], node["reason"] or "no reason")
            )
            out["untouched"].append({"host": node["name"], "why": why})
            continue
        drains.append(_drain_action(node, verdict["failed"][host], ctx["today"], ctx["prefix"], ctx["scontrol"]))
    return drains


def _plan_resumes(ctx, verdict, out, resume):
    """Resume actions for the passing hosts the validation drained (a health-check drain or a foreign reason is
    never resumed from a validation)."""
    resumes = []
    for host in sorted(verdict["passed"]):
        node = _lookup(host, ctx["by_name"], ctx["short"])
        if node is None or not is_held(node):
            continue
        if not is_ours(node["reason"], ctx["prefix"], source="validation"):
            owner = "the node health check's" if reason_source(node["reason"]) == "health" else "not ours"
            why = "passes, but %s for a reason that is %s (%s): not resumed" % (
                node["state_text"], owner, node["reason"] or "no reason"
            )  # fmt: skip
            out["untouched"].append({"host": node["name"], "why": why})
            continue
        out["resumable"].append(node["name"])
        if resume:
            resumes.append(_resume_action(node, ctx["scontrol"]))
    return resumes


def _refusal(verdict, drains, out, partition, max_drain_fraction, max_drain):
    """The sentence that refuses the whole plan (a systemic verdict, the guard), else None."""
    if verdict.get("systemic"):
        return (
            "The verdict is systemic (%s): slurm_remediate drains nothing on a fabric-wide failure; fix its cause "
            "and validate again." % verdict["systemic"].rstrip(".")
        )
    # a node this plan resumes no longer counts; a plan that drains nothing is never refused by the guard
    resumed = set(out["resumed"])
    held = [h for h in out["held_by_us"] if h not in resumed]
    if not drains or len(drains) + len(held) <= out["limit"]:
        return None
    where = ("partition %s" % partition) if partition else "the cluster"
    already = (
        " on top of the %d already held with ibtune reasons (%s)" % (len(held), ", ".join(held[:10])) if held else ""
    )
    return (
        "Refusing to drain %d of %d nodes in %s (%s)%s, more than the guard allows (%d: max_drain_fraction=%s%s): "
        "a failure this wide is likely the fabric, not the nodes; check the verdict, then raise the limit or "
        "drain by hand."
        % (len(drains), out["partition_size"], where, ", ".join(a["node"] for a in drains), already, out["limit"],
           max_drain_fraction, "" if max_drain is None else ", max_drain=%d" % max_drain)
    )  # fmt: skip


def plan(
    nodes,
    verdict,
    today,
    partition=None,
    max_drain_fraction=0.1,
    max_drain=None,
    resume=False,
    prefix=REASON_PREFIX,
    scontrol="scontrol",
):
    """Actions (as data) that bring Slurm in line with the verdict. Nothing is executed here.

    Returns {actions, untouched, resumable, would_drain, held_by_us, refused, partition_size, limit}:
      actions: [{node, action ('drain'|'resume'), reason, argv, before: {state, reason}, after: {state, reason}}]
      untouched: [{host, why}] failed or passing hosts left alone (foreign reason, not a Slurm node, ...)
      resumable: nodes the validation drained that now pass (resumed only when resume=True); a node the health
        check drained is never resumed here
      would_drain: every node the verdict asks to drain this run
      held_by_us: nodes already held with our reasons (any source): they count against the guard, so repeated
        runs cannot drain more than it allows
      refused: None, or one sentence when the plan must not run (systemic verdict, guard); then actions is [].
    """
    if not 0 <= max_drain_fraction <= 1:
        raise ValueError(
            "max_drain_fraction must be between 0 and 1 (0.1 = 10%% of the partition), got %r" % max_drain_fraction
        )
    members = _members(nodes, partition)
    by_name, short = _index(members)
    all_by_name, all_short = _index(nodes)
    ctx = {"by_name": by_name, "short": short, "all_by_name": all_by_name, "all_short": all_short,
           "partition": partition, "prefix": prefix, "today": today, "scontrol": scontrol}  # fmt: skip
    out = {
        "actions": [],
        "untouched": [],
        "resumable": [],
        "would_drain": [],
        "held_by_us": held_by_us(members, prefix),
        "refused": None,
        "partition_size": len(members),
        "limit": guard_limit(len(members), max_drain_fraction, max_drain),
    }
    drains = _plan_drains(ctx, verdict, out)
    out["would_drain"] = [a["node"] for a in drains]
    resumes = _plan_resumes(ctx, verdict, out, resume)
    out["resumed"] = [a["node"] for a in resumes]
    out["refused"] = _refusal(verdict, drains, out, partition, max_drain_fraction, max_drain)
    del out["resumed"]
    if out["refused"] is None:
        out["actions"] = drains + resumes
    return out


def describe_plan(result):
    """One line per action and node left alone, for the task's message and the diff."""
    lines = []
    for action in result["actions"]:
        if action["action"] == "drain":
            lines.append("drain %s: %s" % (action["node"], action["reason"]))
        else:
            lines.append("resume %s (was: %s)" % (action["node"], action["before"]["reason"]))
    for item in result["untouched"]:
        lines.append("leave %s: %s" % (item["host"], item["why"]))
    return lines


def diff_text(result, nodes):
    """Before/after text of the nodes the plan changes: 'name: STATE reason' per line, for Ansible's diff."""
    changed = dict((a["node"], a) for a in result["actions"])

    def line(name, snap):
        return "%s: %s%s\n" % (name, snap["state"], (" reason=%s" % snap["reason"]) if snap["reason"] else "")

    before = "".join(line(n, changed[n]["before"]) for n in sorted(changed))
    after = "".join(line(n, changed[n]["after"]) for n in sorted(changed))
    return {"before": before, "after": after}


# --- topology.conf -----------------------------------------------------------------------------

_SWITCH_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


def topology_leaves(explicit, leaf_groups, groups):
    """{leaf: [hosts]} for topology.conf: ``explicit`` (slurm_remediate_topology_leaves) when not empty, else one
    leaf per inventory group named in ``leaf_groups``, with that group's hosts (``groups``: Ansible's groups)."""
    if explicit:
        return explicit
    missing = [name for name in leaf_groups or [] if name not in groups]
    if missing:
        raise ValueError("leaf groups %s are not in the inventory" % ", ".join(missing))
    return dict((name, groups[name]) for name in leaf_groups or [])


def render_topology(leaves, spine="spine", header=None):
    """topology.conf (tree plugin) from {leaf switch: [hosts]}: one line per leaf, one spine over all leaves.

    Any source can feed it: inventory groups ({group: groups[group]}) or a topology model's leaf map. A host
    under two leaves, an empty leaf or a name Slurm cannot parse fails with a sentence naming it.
    """
    if not isinstance(leaves, dict) or not leaves:
        raise ValueError("no leaf switches given: pass {leaf: [hosts]} (e.g. from inventory groups)")
    seen = {}
    lines = [header] if header else []
    for leaf in sorted(leaves):
        hosts = leaves[leaf] or []
        if isinstance(hosts, str):
            hosts = [hosts]
        if not _SWITCH_NAME_RE.match(str(leaf)) or str(leaf) == spine:
            raise ValueError(
                "switch name %r cannot be used in topology.conf: use letters, digits, '-', '_' or '.' "
                "and a name other than the spine's (%s)" % (leaf, spine)
            )
        if not hosts:
            raise ValueError("leaf %s has no hosts: drop it or give it its hosts" % leaf)
        for host in hosts:
            host = str(host)
            if not _SWITCH_NAME_RE.match(host):
                raise ValueError("host %r under leaf %s is not a Slurm node name" % (host, leaf))
            if host in seen and seen[host] != leaf:
                raise ValueError(
                    "host %s is under two leaves (%s and %s): a node hangs off one leaf in a tree"
                    % (host, seen[host], leaf)
                )
            seen[host] = leaf
        lines.append("SwitchName=%s Nodes=%s" % (leaf, _slurm_args.compress_hostlist([str(h) for h in hosts])))
    if len(leaves) > 1:
        lines.append("SwitchName=%s Switches=%s" % (spine, _slurm_args.compress_hostlist([str(k) for k in leaves])))
    return "\n".join(lines) + "\n"
