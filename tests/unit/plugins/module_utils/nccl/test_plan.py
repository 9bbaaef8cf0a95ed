"""Test plans (per rail, full node, allocation) and the bisection that names a slow node, pair or group."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import plan

HOSTS = ["n1", "n2", "n3", "n4", "n5"]
PORTS = dict((h, ["mlx5_0:1", "mlx5_1:1"]) for h in HOSTS)
GPUS = dict((h, 8) for h in HOSTS)


def test_pairs_are_disjoint_and_an_odd_host_pairs_with_the_first():
    assert plan.pairs(HOSTS) == [["n1", "n2"], ["n3", "n4"], ["n5", "n1"]]
    assert plan.pairs(["a", "b"]) == [["a", "b"]]


def test_per_rail_runs_pin_the_nic_and_force_ring_simple():
    out = plan.build_runs(HOSTS, PORTS, GPUS, ["per_rail"], ["all_reduce"])
    assert [r["id"] for r in out["runs"]][:4] == [
        "per_rail/mlx5_0:n1+n2", "per_rail/mlx5_0:n3+n4", "per_rail/mlx5_0:n5+n1", "per_rail/mlx5_1:n1+n2",
    ]  # fmt: skip
    run = out["runs"][3]
    assert run["env"] == {"NCCL_IB_HCA": "=mlx5_1:1", "NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple",
                          "CUDA_VISIBLE_DEVICES": "1"}  # fmt: skip
    assert run["ranks_per_node"] == 1 and run["nics"] == 1
    assert run["expect"] == {"hosts": ["n1", "n2"], "transport": "IB", "hcas": ["mlx5_1"], "gdr": None}


def test_full_node_and_allocation_use_every_gpu_and_rail():
    out = plan.build_runs(HOSTS, PORTS, GPUS, ["full_node", "allocation"], ["all_reduce", "alltoall"], gdr=True)
    full = out["runs"][0]
    assert full["ranks_per_node"] == 8 and full["nics"] == 2 and full["env"] == {}
    assert full["expect"]["hcas"] == ["mlx5_0", "mlx5_1"] and full["expect"]["gdr"] is True
    assert out["runs"][-1]["id"] == "allocation:n1+n2+n3+n4+n5"


def test_nvlink_domains_split_the_allocation_and_expect_no_network():
    domains = {"n1": "rack1", "n2": "rack1", "n3": "rack2", "n4": "rack2", "n5": "rack3"}
    runs = plan.build_runs(HOSTS, PORTS, GPUS, ["allocation"], domains=domains)["runs"]
    assert [r["id"] for r in runs] == ["allocation:n1+n2@rack1", "allocation:n3+n4@rack2"]
    assert runs[0]["expect"]["transport"] is None


def test_missing_rail_and_missing_gpus_are_findings():
    ports = dict(PORTS, n3=["mlx5_0:1"])
    out = plan.build_runs(HOSTS, ports, dict(GPUS, n4=7), ["per_rail", "full_node"])
    assert [(f["kind"], f["host"]) for f in out["findings"]] == [("missing_rail", "n3"), ("gpu_count", "n4")]
    assert "n3 has no ACTIVE mlx5_1:1" in out["findings"][0]["message"]
    rail1 = [r for r in out["runs"] if r.get("rail") == "mlx5_1"]
    assert all("n3" not in r["hosts"] for r in rail1)
    assert [r["ranks_per_node"] for r in out["runs"] if r["plan"] == "full_node"] == [8, 7, 8]


@pytest.mark.parametrize(
    ("hosts", "plans", "needle"),
    [(["n1"], ["per_rail"], "at least two hosts"), (HOSTS, ["rail"], "unknown plan(s) rail")],
)
def test_bad_inputs_say_what_to_do(hosts, plans, needle):
    with pytest.raises(plan.PlanError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        plan.build_runs(hosts, PORTS, GPUS, plans)


def bisect(run, slow=(), slow_pair=None, good=()):
    """Drive a bisection with an oracle: a test fails when it holds a slow node or the slow pair."""
    state = plan.bisect_start(run, good)
    rounds = 0
    while not plan.bisect_done(state):
        outcomes = dict(
            (r["id"], not (set(r["hosts"]) & set(slow)) and not (slow_pair and set(slow_pair) <= set(r["hosts"])))
            for r in state["pending"]
        )
        state = plan.bisect_advance(state, outcomes)
        rounds += 1
    return state, rounds


@pytest.mark.parametrize("size", [2, 3, 4, 5, 8, 9, 16, 33])
def test_bisection_names_every_single_slow_node(size):
    hosts = ["h%02d" % i for i in range(size)]
    run = plan.build_runs(hosts, dict((h, ["mlx5_0:1"]) for h in hosts), dict((h, 8) for h in hosts), ["allocation"])
    for slow in hosts:
        state, rounds = bisect(run["runs"][0], slow=[slow], good=["g1"] if size == 2 else ())
        assert [v["kind"] for v in state["verdicts"]] == ["node"], (slow, state["verdicts"])
        assert state["verdicts"][0]["hosts"] == [slow]
        assert rounds <= size.bit_length() + 1


def test_two_slow_nodes_are_both_named():
    hosts = ["h%d" % i for i in range(8)]
    run = plan.build_runs(hosts, dict((h, ["mlx5_0:1"]) for h in hosts), dict((h, 8) for h in hosts), ["allocation"])
    state, _rounds = bisect(run["runs"][0], slow=["h1", "h6"])
    assert sorted(h for v in state["verdicts"] for h in v["hosts"]) == ["h1", "h6"]


def test_a_pair_that_fails_only_together_is_named_as_a_pair():
    run = {"id": "per_rail/mlx5_0:a+b", "plan": "per_rail", "hosts": ["a", "b"], "expect": {}}
    state, rounds = bisect(run, slow_pair=("a", "b"), good=["c", "d"])
    assert state["verdicts"] == [
        {"kind": "pair", "hosts": ["a", "b"], "why": "each passes with known-good c: the path between them"}
    ]
    assert rounds == 1 and [t["hosts"] for t in state["tested"]] == [["a", "c"], ["b", "c"]]


def test_a_fault_across_halves_is_a_group_and_no_good_host_names_a_pair():
    hosts = ["h%d" % i for i in range(6)]
    run = plan.build_runs(hosts, dict((h, ["mlx5_0:1"]) for h in hosts), dict((h, 8) for h in hosts), ["allocation"])
    state, _rounds = bisect(run["runs"][0], slow_pair=("h0", "h5"))
    assert state["verdicts"][0]["kind"] == "group"
    lone = plan.bisect_start({"id": "x", "plan": "per_rail", "hosts": ["a", "b"], "expect": {}})
    assert plan.bisect_done(lone) and lone["verdicts"][0]["kind"] == "pair"


def test_advance_needs_every_outcome():
    run = {"id": "x", "plan": "per_rail", "hosts": ["a", "b"], "expect": {}}
    state = plan.bisect_start(run, ["c"])
    with pytest.raises(plan.PlanError, match="lacks outcomes"):
        plan.bisect_advance(state, {})
