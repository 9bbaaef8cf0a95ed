"""A sweep's decisions on real `scontrol show node --oneliner` outputs of Slurm 22.05 (tests/fixtures/slurm/):
which nodes it takes, how it judges, what it does through slurm_remediate's rules, what it exports."""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate, sweep

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "slurm"
RAILS = [{"rail": "mlx5_0:1", "device": "mlx5_0", "port": 1, "rate_gbps": 400.0}]


def nodes(name, idle=(), reasons=None):
    """Nodes of a captured output; ``idle`` nodes put back in service and ``reasons`` ({node: reason}) changed, to
    derive a state from a real one."""
    out = remediate.parse_show_node((FIXTURES / name).read_text())
    for node in out:
        if node["name"] in idle:
            node.update(state="IDLE", flags=[], state_text="IDLE", reason=None, reason_user=None, reason_time=None)
        if node["name"] in (reasons or {}):
            node["reason"] = reasons[node["name"]]
    return out


def config(**extra):
    doc = {"partition": "debug", "shared_dir": "/shared/ibtune/sweep", "rails": RAILS, "max_share": 1.0}
    doc.update(extra)
    return sweep.load_config(doc)


def test_bad_configuration_names_every_key():
    with pytest.raises(ValueError) as err:
        sweep.load_config(
            {"partition": "", "shared_dir": "rel", "max_share": 2, "reactions": {"phy": "reboot"}, "colour": "red"}
        )
    text = str(err.value)
    for part in (
        "unknown key colour",
        "max_share=2",
        "shared_dir='rel'",
        "partition is empty",
        "rails is empty",
        "reactions.phy is 'reboot'",
    ):
        assert part in text


def test_the_quick_checks_and_their_reactions():
    cfg = config(
        node_health="/usr/local/sbin/ibtune-node-health",
        phy=["/usr/local/sbin/ibtune-phy", "--snapshot"],
        reactions={"node_health": "comment"},
    )
    assert cfg["checks"] == [
        {
            "name": "node_health",
            "argv": ["/usr/local/sbin/ibtune-node-health", "--all", "--no-drain"],
            "timeout_s": 30.0,
            "reaction": "comment",
        },
        {"name": "phy", "argv": ["/usr/local/sbin/ibtune-phy", "--snapshot"], "timeout_s": 30.0, "reaction": "comment"},
    ]
    assert cfg["pairs_reaction"] == "drain"


def test_the_budget_bounds_the_rounds_and_the_time_limit():
    cfg = config(budget_s=120, duration_s=2, rounds=50, node_health="/x")
    # 120 s - 30 s for the job - 30 s of checks = 60 s; 2 s tests + 2 s each: 15 rounds
    assert sweep.rounds_that_fit(cfg) == 15
    assert sweep.rounds_that_fit(config(budget_s=120, duration_s=2, rounds=3)) == 3
    assert sweep.time_limit(cfg) == "00:02:00"
    assert sweep.time_limit(config(budget_s=179)) == "00:02:00"  # down: never past the budget
    with pytest.raises(ValueError, match="budget_s=40 leaves no room for one round of 20 s tests"):
        sweep.rounds_that_fit(config(budget_s=40, duration_s=20))


def test_only_idle_nodes_and_ours_on_probation_are_taken():
    # n1 drained by our validation, n2 back in service, n3 down
    got = sweep.pick(nodes("show-node-ours-drained.txt", idle=["ibt-slurm-n2"]), sweep.empty_history(), config())
    assert (got["probation"], got["take"], got["why"]) == (["ibt-slurm-n1"], ["ibt-slurm-n2"], None)


def test_a_foreign_drain_a_down_node_and_a_busy_one_are_never_taken():
    got = sweep.pick(nodes("show-node-admin-drain-down.txt"), sweep.empty_history(), config())
    assert got["take"] == [] and got["probation"] == []
    assert got["why"].startswith("1 idle node(s) and 0 on probation in partition debug")
    busy = sweep.pick(nodes("show-node-drain-with-job.txt"), sweep.empty_history(), config())
    assert busy["probation"] == [] and busy["take"] == []  # ALLOCATED+DRAIN holds a job: not on probation


def test_the_health_checks_drains_are_not_the_sweeps_to_lift():
    health = "ibtune: node-health: mlx5_1 port 1 is DOWN/Polling 2026-12-01"
    got = nodes("show-node-ours-drained.txt", reasons={"ibt-slurm-n1": health})
    assert not sweep.on_probation([n for n in got if n["name"] == "ibt-slurm-n1"][0])


def test_max_share_is_of_the_whole_partition():
    three = nodes("show-node-ours-drained.txt")  # 3 nodes in debug
    got = sweep.pick(three, sweep.empty_history(), config(max_share=0.5))
    assert got["limit"] == 1 and got["take"] == [] and "at most 1 of its 3 nodes at once (max_share 0.5)" in got["why"]


def test_the_stalest_idle_nodes_go_first():
    idle = [
        {
            "name": n,
            "state": "IDLE",
            "flags": [],
            "reason": None,
            "partitions": ["debug"],
            "reason_time": None,
            "state_text": "IDLE",
            "reason_user": None,
            "fields": {},
        }
        for n in ("a", "b", "c", "d")
    ]
    history = sweep.empty_history()
    sweep.record(history, {"a": {"passed": True, "failures": []}, "b": {"passed": True, "failures": []}}, 100, {})
    sweep.record(history, {"a": {"passed": True, "failures": []}}, 200, {})
    got = sweep.pick(idle, history, config(max_share=0.75))
    assert got["take"] == ["c", "d", "b"]


def test_passes_count_since_the_drain_and_a_lost_measurement_counts_nothing():
    history = sweep.empty_history()
    for ts, passed in ((10, True), (20, False), (30, True), (40, None), (50, True)):
        outcome = None if passed is None else {"passed": passed, "failures": [] if passed else [{"reason": "x"}]}
        sweep.record(history, {"n1": outcome}, ts, {})
    assert sweep.passes_since(history, "n1", None) == 2  # 30 and 50; 40 was incomplete; 20 failed
    assert sweep.passes_since(history, "n1", 35) == 1
    assert history["nodes"]["n1"]["last_failure"] == "x" and history["nodes"]["n1"]["last_pass"] == 50


def _probation_case(passes_before, **cfg_extra):
    """n1 drained by us (reason at 2026-12-01T08:25:23), then ``passes_before`` passing sweeps, then this one."""
    before = nodes("show-node-ours-drained.txt")
    n1 = [n for n in before if n["name"] == "ibt-slurm-n1"][0]
    drained = time.mktime(time.strptime("2026-12-01T08:25:23", "%Y-%m-%dT%H:%M:%S"))
    history = sweep.empty_history()
    sweep.record(history, {"ibt-slurm-n1": {"passed": True, "failures": []}}, drained - 100, {})  # before: not counted
    for index in range(passes_before + 1):
        sweep.record(history, {"ibt-slurm-n1": {"passed": True, "failures": []}}, drained + 10 + index, {})
    # after the job: n1 undrained (IDLE), n2 idle
    now = nodes("show-node-admin-drain-down.txt")
    cfg = config(undrain_after=2, **cfg_extra)
    outcome = {"ibt-slurm-n1": {"passed": True, "failures": []}, "ibt-slurm-n2": {"passed": True, "failures": []}}
    return sweep.actions(now, {"ibt-slurm-n1": n1}, outcome, history, {}, cfg, "2026-12-02"), n1


def test_a_probation_node_short_of_its_passes_is_drained_again_exactly_as_it_was():
    decided, n1 = _probation_case(0)
    assert decided["resumed"] == []
    assert decided["restore"] == [{"node": "ibt-slurm-n1", "argv": remediate.drain_argv("ibt-slurm-n1", n1["reason"])}]
    assert n1["reason"] == "ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"


def test_a_probation_node_stays_in_service_after_undrain_after_passes():
    decided, _n1 = _probation_case(1)
    assert decided["resumed"] == ["ibt-slurm-n1"] and decided["restore"] == []
    assert decided["remediate"]["actions"] == []


def test_failures_go_through_remediate_and_each_check_reacts_its_own_way():
    now = nodes("show-node-admin-drain-down.txt", idle=["ibt-slurm-n2"])
    cfg = config(
        node_health="/x", phy=["/y"], reactions={"node_health": "drain", "phy": "comment"}, max_drain_fraction=0.34
    )
    report = {"failed_hosts": [{"host": "ibt-slurm-n1", "reason": "bad link mlx5_0 (183.0 Gb/s < 360.0 Gb/s)"}]}
    checks = {
        "ibt-slurm-n2": [{"check": "phy", "passed": False, "rc": 1, "output": "mlx5_0 raw BER 1e-9\nmore"}],
        "ibt-slurm-n1": [{"check": "node_health", "passed": True, "rc": 0, "output": "OK"}],
    }
    outcome = sweep.outcomes(["ibt-slurm-n1", "ibt-slurm-n2"], report, checks, cfg)
    assert not outcome["ibt-slurm-n1"]["passed"] and not outcome["ibt-slurm-n2"]["passed"]
    decided = sweep.actions(now, {}, outcome, sweep.empty_history(), report, cfg, "2026-12-02")
    drains = decided["remediate"]["actions"]
    assert [(a["node"], a["action"]) for a in drains] == [("ibt-slurm-n1", "drain")]
    assert drains[0]["reason"] == "ibtune: sweep: bad link mlx5_0 (183.0 Gb/s < 360.0 Gb/s) 2026-12-02"
    assert decided["comments"] == [
        {
            "node": "ibt-slurm-n2",
            "argv": ["scontrol", "update", "NodeName=ibt-slurm-n2", "Comment=ibtune sweep: phy: mlx5_0 raw BER 1e-9"],
        }
    ]


def test_the_guard_still_holds_and_a_failed_probation_node_goes_back_as_it_was():
    before = nodes("show-node-ours-drained.txt")
    n1 = [n for n in before if n["name"] == "ibt-slurm-n1"][0]
    now = nodes("show-node-admin-drain-down.txt", idle=["ibt-slurm-n2"])
    fail = {"passed": False, "failures": [{"check": "pairs", "reason": "bad node", "reaction": "drain"}]}
    outcome = {"ibt-slurm-n1": fail, "ibt-slurm-n2": fail}
    decided = sweep.actions(
        now, {"ibt-slurm-n1": n1}, outcome, sweep.empty_history(), {}, config(max_drain_fraction=0.34), "2026-12-02"
    )
    assert decided["remediate"]["refused"].startswith("Refusing to drain 2 of 3 nodes")
    assert decided["remediate"]["actions"] == []
    assert decided["restore"][0]["argv"][-1] == "Reason=" + n1["reason"]


def test_a_systemic_verdict_drains_nothing():
    now = nodes("show-node-admin-drain-down.txt", idle=["ibt-slurm-n2"])
    fail = {"passed": False, "failures": [{"check": "pairs", "reason": "slow", "reaction": "drain"}]}
    decided = sweep.actions(
        now,
        {},
        {"ibt-slurm-n1": fail, "ibt-slurm-n2": fail},
        sweep.empty_history(),
        {"systemic": "every pair is slow"},
        config(),
        "2026-12-02",
    )
    assert decided["remediate"]["actions"] == [] and "systemic" in decided["remediate"]["refused"]


def test_the_textfile_reports_stale_nodes_and_promtool_accepts_it(tmp_path):
    history = sweep.empty_history()
    sweep.record(history, {"n1": {"passed": True, "failures": []}}, 1000, {})
    sweep.record(history, {"n2": {"passed": False, "failures": [{"reason": "x"}]}}, 90000, {})
    text = sweep.prom_text(history, {"n1", "n2", "n3"}, 90000, 86400, {"outcome": "judged", "nodes": ["n2"]})
    assert 'ibtune_sweep_node_stale{host="n1"} 1' in text and 'ibtune_sweep_node_stale{host="n2"} 0' in text
    assert 'ibtune_sweep_node_stale{host="n3"} 1' in text and 'ibtune_sweep_node_passed{host="n2"} 0' in text
    assert 'ibtune_sweep_last_run_nodes{outcome="judged"} 1' in text
    if shutil.which("promtool") is None:
        pytest.skip("promtool (Debian package prometheus) not installed")
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
