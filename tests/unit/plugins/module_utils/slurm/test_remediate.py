"""slurm: parse real `scontrol show node --oneliner` / `sinfo --json` output (Slurm 22.05.8, captured from the
Molecule scenario's slurmctld into tests/fixtures/slurm/), plan drains and resumes, render topology.conf."""

import json

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as slurm
from tests.conftest import FIXTURES

SLURM = FIXTURES / "slurm"
TODAY = "2026-12-01"


def _nodes(name):
    return slurm.parse_show_node((SLURM / name).read_text())


def _by_name(nodes):
    return dict((n["name"], n) for n in nodes)


def _verdict(failed=None, passed=(), expected=(), systemic=None):
    return {"failed": dict(failed or {}), "passed": sorted(passed), "expected": list(expected), "systemic": systemic}


# --- parser ------------------------------------------------------------------------------------


def test_parse_admin_drain_and_down_nodes():
    nodes = _by_name(_nodes("show-node-admin-drain-down.txt"))
    assert sorted(nodes) == ["ibt-slurm-n1", "ibt-slurm-n2", "ibt-slurm-n3"]
    n1, n2, n3 = nodes["ibt-slurm-n1"], nodes["ibt-slurm-n2"], nodes["ibt-slurm-n3"]
    assert (n1["state"], n1["flags"], n1["reason"]) == ("IDLE", [], None)
    # Reason= is last, holds spaces and ends in [user@time]; both are split off
    assert (n2["state"], n2["flags"]) == ("IDLE", ["DRAIN"])
    assert n2["reason"] == "admin: replacing DIMM B2"
    assert (n2["reason_user"], n2["reason_time"]) == ("root", "2026-12-01T08:24:59")
    assert (n3["state"], n3["flags"], n3["reason"]) == ("DOWN", ["NOT_RESPONDING"], "admin: PSU failed")
    assert all(n["partitions"] == ["debug"] for n in nodes.values())
    assert [slurm.is_held(n) for n in (n1, n2, n3)] == [False, True, True]


def test_values_with_spaces_and_nested_equals_stay_whole():
    n1 = _by_name(_nodes("show-node-admin-drain-down.txt"))["ibt-slurm-n1"]
    assert n1["fields"]["OS"].startswith("Linux 6.") and "#1 SMP" in n1["fields"]["OS"]
    assert n1["fields"]["CfgTRES"] == "cpu=1,mem=1M,billing=1"
    assert n1["fields"]["AllocTRES"] == ""
    assert n1["fields"]["Version"] == "22.05.8"
    assert "cpu" not in n1["fields"] and "mem" not in n1["fields"]


def test_parse_our_reason_with_parentheses_and_comparison():
    n1 = _by_name(_nodes("show-node-ours-drained.txt"))["ibt-slurm-n1"]
    assert n1["reason"] == "ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"
    assert slurm.is_ours(n1["reason"]) and slurm.is_held(n1)


def test_parse_drain_with_a_running_job_and_not_responding():
    job = _by_name(_nodes("show-node-drain-with-job.txt"))["ibt-slurm-n1"]
    assert (job["state"], job["flags"]) == ("ALLOCATED", ["DRAIN"])
    gone = _by_name(_nodes("show-node-not-responding.txt"))
    assert gone["ibt-slurm-n1"]["flags"] == ["DRAIN", "NOT_RESPONDING"]
    # not responding alone is not a hold: Slurm marks it DOWN itself once SlurmdTimeout passes
    assert gone["ibt-slurm-n2"]["flags"] == ["NOT_RESPONDING"] and not slurm.is_held(gone["ibt-slurm-n2"])


def test_sinfo_json_agrees_with_scontrol():
    from_json = _by_name(slurm.parse_sinfo_json(json.loads((SLURM / "sinfo-admin-drain-down.json").read_text())))
    from_text = _by_name(_nodes("show-node-admin-drain-down.txt"))
    for name in from_text:
        for key in ("state", "flags", "reason", "reason_user", "partitions"):
            assert from_json[name][key] == from_text[name][key], (name, key)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IDLE", ("IDLE", [])),
        ("MIXED+DRAIN", ("MIXED", ["DRAIN"])),
        ("DOWN+NOT_RESPONDING", ("DOWN", ["NOT_RESPONDING"])),
        ("down*", ("DOWN", ["NOT_RESPONDING"])),
        ("", ("UNKNOWN", [])),
    ],
)
def test_parse_state(text, expected):
    assert slurm.parse_state(text) == expected


def test_no_nodes_and_garbage_give_no_nodes():
    assert slurm.parse_show_node("No nodes in the system\n") == []
    assert slurm.parse_show_node("") == []


# --- verdict -----------------------------------------------------------------------------------


def test_verdict_from_new_report_keys():
    report = json.loads((SLURM / "report-failed.json").read_text())
    verdict = slurm.verdict_from_report(report)
    assert verdict["failed"]["ibt-slurm-n1"].startswith("bad link mlx5_1")
    assert sorted(verdict["failed"]) == ["ibt-slurm-n1", "ibt-slurm-n2", "ibt-slurm-n3"]
    assert verdict["systemic"] is None


def test_verdict_from_old_report_uses_suspects_then_failed_pairs():
    old = {
        "suspect_nodes": [{"host": "n4", "verdict": "bad_node", "devices": ["mlx5_0"]}],
        "failed_pairs": [{"server": "n4", "client": "n5", "test": "write"}],
    }
    assert slurm.verdict_from_report(old)["failed"] == {"n4": "bad node mlx5_0"}
    pairs_only = {"suspect_nodes": [], "failed_pairs": [{"server": "n4", "client": "n5", "test": "write"}]}
    assert sorted(slurm.verdict_from_report(pairs_only)["failed"]) == ["n4", "n5"]
    assert slurm.verdict_from_report(pairs_only)["passed"] == []


# --- planner -----------------------------------------------------------------------------------


def test_drains_a_failed_node_with_our_reason_and_leaves_foreign_ones():
    nodes = _nodes("show-node-admin-drain-down.txt")
    verdict = _verdict(
        {
            "ibt-slurm-n1": "bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s)",
            "ibt-slurm-n2": "counters",
            "ibt-slurm-n3": "unreachable",
        }
    )
    result = slurm.plan(nodes, verdict, TODAY, max_drain_fraction=0.5)
    assert result["refused"] is None
    assert [(a["node"], a["action"]) for a in result["actions"]] == [("ibt-slurm-n1", "drain")]
    action = result["actions"][0]
    assert action["reason"] == "ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"
    assert action["argv"] == [
        "scontrol",
        "update",
        "NodeName=ibt-slurm-n1",
        "State=DRAIN",
        "Reason=ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01",
    ]
    assert action["before"] == {"state": "IDLE", "reason": None}
    assert action["after"] == {"state": "IDLE+DRAIN", "reason": action["reason"]}
    skipped = dict((s["host"], s["why"]) for s in result["untouched"])
    assert "admin: replacing DIMM B2" in skipped["ibt-slurm-n2"] and "not ours" in skipped["ibt-slurm-n2"]
    assert "admin: PSU failed" in skipped["ibt-slurm-n3"]


def test_second_run_on_our_drained_node_plans_nothing():
    nodes = _nodes("show-node-ours-drained.txt")
    verdict = _verdict({"ibt-slurm-n1": "bad link mlx5_1 again, other figures"})
    result = slurm.plan(nodes, verdict, "2026-12-02", max_drain_fraction=0.5)
    assert result["actions"] == [] and result["refused"] is None
    assert "already drained by ibtune" in result["untouched"][0]["why"]


def test_resume_only_our_nodes_and_only_when_asked():
    nodes = _nodes("show-node-ours-drained.txt")  # n1 ours, n2 admin, n3 admin down
    verdict = _verdict(passed=["ibt-slurm-n1", "ibt-slurm-n2", "ibt-slurm-n3"])
    without = slurm.plan(nodes, verdict, TODAY)
    assert without["actions"] == [] and without["resumable"] == ["ibt-slurm-n1"]
    result = slurm.plan(nodes, verdict, TODAY, resume=True)
    assert [(a["node"], a["action"], a["argv"][-1]) for a in result["actions"]] == [
        ("ibt-slurm-n1", "resume", "State=RESUME")
    ]
    skipped = dict((s["host"], s["why"]) for s in result["untouched"])
    assert "not resumed" in skipped["ibt-slurm-n2"] and "not resumed" in skipped["ibt-slurm-n3"]


def test_a_host_that_failed_is_not_resumed_even_if_listed_as_passed():
    report = {"failed_hosts": [{"host": "ibt-slurm-n1", "reason": "counters"}], "passed_hosts": ["ibt-slurm-n1"]}
    verdict = slurm.verdict_from_report(report)
    result = slurm.plan(_nodes("show-node-ours-drained.txt"), verdict, TODAY, resume=True)
    assert result["actions"] == []


def test_guard_refuses_the_whole_plan_and_names_the_nodes():
    nodes = _nodes("show-node-not-responding.txt")  # n1 ours drained, n2 idle, n3 down
    nodes[0] = dict(nodes[0], state="IDLE", flags=[], reason=None, state_text="IDLE")
    verdict = _verdict({"ibt-slurm-n1": "bad link", "ibt-slurm-n2": "bad link"})
    result = slurm.plan(nodes, verdict, TODAY, max_drain_fraction=0.5)
    assert result["actions"] == []
    assert result["would_drain"] == ["ibt-slurm-n1", "ibt-slurm-n2"]
    assert "Refusing to drain 2 of 3 nodes" in result["refused"]
    assert "ibt-slurm-n1, ibt-slurm-n2" in result["refused"]
    # an absolute cap wins over a generous fraction
    capped = slurm.plan(nodes, verdict, TODAY, max_drain_fraction=1.0, max_drain=1)
    assert capped["refused"] and capped["limit"] == 1
    assert slurm.plan(nodes, verdict, TODAY, max_drain_fraction=1.0)["refused"] is None


def test_default_fraction_allows_one_drain_per_ten_nodes():
    assert slurm.guard_limit(10, 0.1) == 1
    assert slurm.guard_limit(9, 0.1) == 0
    assert slurm.guard_limit(512, 0.1) == 51
    assert slurm.guard_limit(512, 0.1, max_drain=8) == 8


def test_systemic_verdict_drains_nothing_and_says_why():
    nodes = _nodes("show-node-admin-drain-down.txt")
    verdict = _verdict({"ibt-slurm-n1": "no device"}, systemic="no RDMA device on any host")
    result = slurm.plan(nodes, verdict, TODAY, max_drain_fraction=1.0, resume=True)
    assert result["actions"] == []
    assert result["refused"].startswith("The verdict is systemic (no RDMA device on any host)")


def test_partition_scope_and_unknown_hosts():
    nodes = _nodes("show-node-admin-drain-down.txt")
    nodes[0] = dict(nodes[0], partitions=["gpu"])
    verdict = _verdict({"ibt-slurm-n1": "x", "login01": "y"})
    result = slurm.plan(nodes, verdict, TODAY, partition="debug", max_drain_fraction=1.0)
    skipped = dict((s["host"], s["why"]) for s in result["untouched"])
    assert skipped == {"ibt-slurm-n1": "not in partition debug", "login01": "not a Slurm node"}
    with pytest.raises(ValueError, match="partition 'nope' has no nodes"):
        slurm.plan(nodes, verdict, TODAY, partition="nope")
    with pytest.raises(ValueError, match="max_drain_fraction"):
        slurm.plan(nodes, verdict, TODAY, max_drain_fraction=1.5)


def test_fqdn_in_report_matches_short_node_name():
    verdict = _verdict({"ibt-slurm-n1.cluster.example": "bad link"})
    result = slurm.plan(_nodes("show-node-admin-drain-down.txt"), verdict, TODAY, max_drain_fraction=1.0)
    assert [a["node"] for a in result["actions"]] == ["ibt-slurm-n1"]


def test_drain_reason_is_one_line_with_one_prefix():
    assert slurm.drain_reason("ibtune: port\n mlx5_0  DOWN", TODAY) == "ibtune: port mlx5_0 DOWN 2026-12-01"
    assert slurm.drain_reason(None, TODAY) == "ibtune: failed fabric validation 2026-12-01"


def test_diff_text_shows_before_and_after():
    nodes = _nodes("show-node-admin-drain-down.txt")
    result = slurm.plan(nodes, _verdict({"ibt-slurm-n1": "bad link"}), TODAY, max_drain_fraction=1.0)
    diff = slurm.diff_text(result, nodes)
    assert diff["before"] == "ibt-slurm-n1: IDLE\n"
    assert diff["after"] == "ibt-slurm-n1: IDLE+DRAIN reason=ibtune: bad link 2026-12-01\n"


# --- topology.conf -----------------------------------------------------------------------------


def test_render_topology_tree():
    text = slurm.render_topology({"leaf2": ["node03", "node04"], "leaf1": ["node01", "node02"]})
    assert text == (
        "SwitchName=leaf1 Nodes=node[01-02]\nSwitchName=leaf2 Nodes=node[03-04]\nSwitchName=spine Switches=leaf[1-2]\n"
    )
    assert slurm.render_topology({"leaf1": ["n1"]}) == "SwitchName=leaf1 Nodes=n1\n"


@pytest.mark.parametrize(
    ("leaves", "message"),
    [
        ({}, "no leaf switches"),
        ({"leaf1": ["n1"], "leaf2": ["n1"]}, "under two leaves"),
        ({"leaf1": []}, "has no hosts"),
        ({"leaf 1": ["n1"]}, "cannot be used"),
        ({"spine": ["n1"]}, "cannot be used"),
        ({"leaf1": ["n1 n2"]}, "not a Slurm node name"),
    ],
)
def test_render_topology_rejects(leaves, message):
    with pytest.raises(ValueError, match=message):
        slurm.render_topology(leaves)


# --- the fleet across runs and sources ---------------------------------------------------------


def _fleet(count, held=()):
    """`scontrol show node --oneliner` of ``count`` idle nodes (the fixture's n1 line as the template), the ones
    in ``held`` {name: reason} drained with that reason."""
    line = (SLURM / "show-node-ours-drained.txt").read_text().splitlines()[1]  # n2: an admin drain
    out = []
    for i in range(1, count + 1):
        name = "gpu%03d" % i
        text = line.replace("ibt-slurm-n2", name)
        reason = dict(held).get(name)
        head, _sep, _old = text.partition(" Reason=")
        if reason is None:
            head = head.replace("State=IDLE+DRAIN", "State=IDLE")
            out.append(head)
        else:
            out.append("%s Reason=%s [root@2026-12-01T07:42:25]" % (head, reason))
    return slurm.parse_show_node("\n".join(out))


def test_the_guard_counts_every_node_already_held_with_our_reasons_across_runs():
    # five runs at 10% must not drain 50 of 100 nodes: the second finds the first's ten held and is refused
    verdict = _verdict(dict(("gpu%03d" % i, "bad node") for i in range(1, 11)))
    first = slurm.plan(_fleet(100), verdict, TODAY, max_drain_fraction=0.1)
    assert first["refused"] is None and len(first["actions"]) == 10
    held = dict(("gpu%03d" % i, "ibtune: bad node 2026-11-30") for i in range(1, 11))
    verdict = _verdict(dict(("gpu%03d" % i, "bad node") for i in range(11, 21)))
    second = slurm.plan(_fleet(100, held), verdict, TODAY, max_drain_fraction=0.1)
    assert second["actions"] == [] and second["held_by_us"] == sorted(held)
    assert second["refused"].startswith(
        "Refusing to drain 10 of 100 nodes in the cluster (gpu011, gpu012, gpu013, gpu014, gpu015, gpu016, gpu017, "
        "gpu018, gpu019, gpu020) on top of the 10 already held with ibtune reasons (gpu001, "
    )
    # health-check drains count too (one fleet, one limit)
    held = dict(("gpu%03d" % i, "ibtune: node-health: mlx5_0 port 1 is DOWN 2026-12-01") for i in range(1, 10))
    third = slurm.plan(_fleet(100, held), _verdict({"gpu050": "bad node"}), TODAY, max_drain_fraction=0.1)
    assert third["refused"] is None  # 9 + 1 = 10, the limit
    fourth = slurm.plan(_fleet(100, held), _verdict({"gpu050": "x", "gpu051": "y"}), TODAY, max_drain_fraction=0.1)
    assert fourth["refused"] is not None


def test_a_validation_resume_leaves_a_health_check_drain_alone():
    held = {"gpu001": "ibtune: bad link mlx5_1 2026-11-30", "gpu002": "ibtune: node-health: mlx5_0 port 1 is DOWN"}
    result = slurm.plan(_fleet(4, held), _verdict(passed=["gpu001", "gpu002"]), TODAY, resume=True)
    assert [(a["node"], a["action"]) for a in result["actions"]] == [("gpu001", "resume")]
    why = dict((u["host"], u["why"]) for u in result["untouched"])["gpu002"]
    assert why.startswith("passes, but IDLE+DRAIN for a reason that is the node health check's (ibtune: node-health:")
    assert slurm.reason_source("ibtune: node-health: x") == "health"
    assert slurm.reason_source("ibtune: bad node gpu1") == "validation"
    assert slurm.reason_source("NHC: x") is None


def test_a_failed_host_the_verdict_does_not_blame_is_neither_drained_nor_resumed():
    report = {
        "failed_hosts": [
            {"host": "gpu001", "failure_kind": "bad_node", "reason": "bad node gpu001", "culprit": True},
            {
                "host": "gpu002",
                "failure_kind": "untested",
                "reason": "rail mlx5_1:1 was never measured",
                "culprit": False,
            },
        ],
        "passed_hosts": ["gpu003", "gpu004"],
        "switch_faults": [{"scope": "leaf", "switches": ["leaf2"], "hosts": ["gpu003", "gpu004"]}],
    }
    verdict = slurm.verdict_from_report(report)
    assert verdict["failed"] == {"gpu001": "bad node gpu001"} and verdict["passed"] == ["gpu003", "gpu004"]
    held = {"gpu002": "ibtune: bad node 2026-11-30"}
    result = slurm.plan(_fleet(10, held), verdict, TODAY, resume=True, max_drain_fraction=0.5)
    assert [(a["node"], a["action"]) for a in result["actions"]] == [("gpu001", "drain")]  # gpu002 stays drained


def test_topology_leaves_explicit_or_from_the_inventory_groups():
    groups = {"all": ["n1", "n2", "n3"], "leaf1": ["n1", "n2"], "leaf2": ["n3"]}
    assert slurm.topology_leaves({"sw1": ["n1"]}, ["leaf1"], groups) == {"sw1": ["n1"]}
    assert slurm.topology_leaves({}, ["leaf1", "leaf2"], groups) == {"leaf1": ["n1", "n2"], "leaf2": ["n3"]}
    assert slurm.topology_leaves({}, [], groups) == {}
    with pytest.raises(ValueError, match="leaf3 are not in the inventory"):
        slurm.topology_leaves({}, ["leaf1", "leaf3"], groups)
