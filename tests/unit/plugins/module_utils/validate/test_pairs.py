"""pair_rounds / retest_rounds: the pair planner, with property tests for every strategy."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import (
    STRATEGIES,
    first_pass_suspects,
    pair_rounds,
    retest_rounds,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import switches


def hosts_of(n):
    return ["node%03d" % i for i in range(n)]


def assert_disjoint(rounds):
    for index, rnd in enumerate(rounds):
        seen = [h for pair in rnd for h in pair]
        assert len(seen) == len(set(seen)), "round %d uses a host twice: %r" % (index, rnd)
        for pair in rnd:
            assert isinstance(pair, list) and len(pair) == 2
            assert pair[0] != pair[1], "self pair %r" % pair


def unordered(rounds):
    return [frozenset(p) for rnd in rounds for p in rnd]


sizes = st.integers(min_value=0, max_value=70)


# ---------------------------------------------------------------- all_pairs


@given(sizes)
@settings(deadline=None)
def test_all_pairs_every_pair_exactly_once_in_minimal_rounds(n):
    hosts = hosts_of(n)
    rounds = pair_rounds(hosts, "all_pairs")
    assert_disjoint(rounds)
    if n < 2:
        assert rounds == []
        return
    pairs = unordered(rounds)
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    assert set(pairs) == set(frozenset(p) for p in itertools.combinations(hosts, 2))
    # minimal: a round holds at most floor(n/2) pairs, so n-1 rounds (even) / n (odd) is optimal
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    for rnd in rounds:
        assert len(rnd) == n // 2


@given(st.integers(min_value=2, max_value=60))
@settings(deadline=None)
def test_all_pairs_servers_are_balanced(n):
    serves = dict((h, 0) for h in hosts_of(n))
    for rnd in pair_rounds(hosts_of(n)):
        for server, _client in rnd:
            serves[server] += 1
    # each host meets n-1 partners; it serves in about half of them
    assert max(serves.values()) - min(serves.values()) <= 2


def test_all_pairs_small_known_plan():
    rounds = pair_rounds(["a", "b", "c", "d"])
    assert len(rounds) == 3
    assert sorted(sorted(p) for r in rounds for p in r) == [
        ["a", "b"], ["a", "c"], ["a", "d"], ["b", "c"], ["b", "d"], ["c", "d"]
    ]  # fmt: skip


@pytest.mark.parametrize("n", [1000, 1001])
def test_all_pairs_large_shape(n):
    rounds = pair_rounds(hosts_of(n))
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    assert all(len(r) == n // 2 for r in rounds)
    # every round disjoint, and node000 meets every other host exactly once
    partners = []
    for rnd in rounds:
        flat = [h for p in rnd for h in p]
        assert len(set(flat)) == len(flat) == 2 * (n // 2)
        for a, b in rnd:
            if a == "node000":
                partners.append(b)
            elif b == "node000":
                partners.append(a)
    assert sorted(partners) == sorted(hosts_of(n)[1:])


# ---------------------------------------------------------------- ring


@given(sizes)
@settings(deadline=None)
def test_ring_covers_neighbours_in_at_most_three_rounds(n):
    hosts = hosts_of(n)
    rounds = pair_rounds(hosts, "ring")
    assert_disjoint(rounds)
    if n < 2:
        assert rounds == []
        return
    expected = set(frozenset((hosts[i], hosts[(i + 1) % n])) for i in range(n))
    got = unordered(rounds)
    assert set(got) == expected
    assert len(got) == len(expected)  # each neighbour pair once
    assert len(rounds) <= 3
    if n % 2 == 0:
        assert len(rounds) <= 2


def test_ring_orientation_each_host_serves_once():
    hosts = hosts_of(6)
    servers = [s for r in pair_rounds(hosts, "ring") for s, _c in r]
    assert sorted(servers) == hosts


# ---------------------------------------------------------------- random


@given(st.integers(min_value=0, max_value=60), st.integers(min_value=1, max_value=5), st.integers())
@settings(max_examples=60, deadline=None)
def test_random_matchings_reproducible(n, count, seed):
    hosts = hosts_of(n)
    first = pair_rounds(hosts, "random", rounds=count, seed=seed)
    again = pair_rounds(list(hosts), "random", rounds=count, seed=seed)
    assert first == again
    assert_disjoint(first)
    if n < 2:
        assert first == []
        return
    assert len(first) == count
    for rnd in first:
        # a perfect matching (one host idle when n is odd)
        assert len(rnd) == n // 2
        assert set(h for p in rnd for h in p) <= set(hosts)


def test_random_seed_changes_plan_and_default_is_stable():
    hosts = hosts_of(32)
    a = pair_rounds(hosts, "random", rounds=3, seed=1)
    b = pair_rounds(hosts, "random", rounds=3, seed=2)
    assert a != b
    # no seed: derived from the host list, so every host evaluating the filter gets the same plan
    assert pair_rounds(hosts, "random", rounds=3) == pair_rounds(hosts, "random", rounds=3)


def test_random_avoids_repeating_pairs_when_it_can():
    hosts = hosts_of(8)
    rounds = pair_rounds(hosts, "random", rounds=3, seed=7)
    pairs = unordered(rounds)
    assert len(pairs) == len(set(pairs))


def test_random_rounds_validation():
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        pair_rounds(hosts_of(4), "random", rounds=0)
    with pytest.raises(ValueError, match="whole number"):
        pair_rounds(hosts_of(4), "random", rounds="many")
    assert len(pair_rounds(hosts_of(4), "random")) == 1
    with pytest.raises(ValueError, match="seed must be a number or a string"):
        pair_rounds(hosts_of(4), "random", seed={"a": 1})


# ---------------------------------------------------------------- halves


@given(sizes)
@settings(deadline=None)
def test_halves_one_round_upper_vs_lower(n):
    hosts = hosts_of(n)
    rounds = pair_rounds(hosts, "halves")
    if n < 2:
        assert rounds == []
        return
    assert_disjoint(rounds)
    lower, upper = set(hosts[: n // 2]), set(hosts[n // 2 :])
    for server, client in rounds[0]:
        assert server in lower and client in upper
    assert len(rounds[0]) == n // 2
    # odd N: the host left over meets the first host in a second round, so nobody goes untested
    assert len(rounds) == (1 if n % 2 == 0 else 2)
    assert set(h for rnd in rounds for pair in rnd for h in pair) == set(hosts)


# ---------------------------------------------------------------- cross_group


@given(st.lists(st.integers(min_value=1, max_value=6), min_size=2, max_size=9))
@settings(deadline=None)
def test_cross_group_never_pairs_within_a_group(group_sizes):
    hosts, groups = [], {}
    for g, size in enumerate(group_sizes):
        for i in range(size):
            name = "g%d-n%d" % (g, i)
            hosts.append(name)
            groups[name] = "leaf%d" % g
    rounds = pair_rounds(hosts, "cross_group", groups=groups)
    assert_disjoint(rounds)
    met = []
    for rnd in rounds:
        for a, b in rnd:
            assert groups[a] != groups[b]
            met.append(frozenset((groups[a], groups[b])))
    k = len(group_sizes)
    # every pair of groups exercised, in a round-robin of the groups (k-1 rounds even k, k odd)
    assert set(met) == set(frozenset(p) for p in itertools.combinations(set(groups.values()), 2))
    # a round-robin of the groups (k-1 group-rounds even k, k odd), each split into as many rounds as
    # the larger group needs so that every member of it meets someone
    assert len(rounds) >= (k - 1 if k % 2 == 0 else k)
    size_of = dict(("leaf%d" % g, s) for g, s in enumerate(group_sizes))
    for pair in set(met):
        a, b = sorted(pair)
        small, large = sorted((size_of[a], size_of[b]))
        assert met.count(pair) == small * -(-large // small)
    # every host is tested at least once
    assert set(h for rnd in rounds for pair in rnd for h in pair) == set(hosts)


def test_cross_group_equal_leaves_keep_every_host_busy():
    hosts = hosts_of(16)
    groups = dict((h, "leaf%d" % (i // 4)) for i, h in enumerate(hosts))
    rounds = pair_rounds(hosts, "cross_group", groups=groups)
    assert len(rounds) == 3
    for rnd in rounds:
        assert len(rnd) == 8


def test_cross_group_errors_name_the_culprit():
    hosts = ["a", "b", "c"]
    with pytest.raises(ValueError, match="host c is missing from groups"):
        pair_rounds(hosts, "cross_group", groups={"a": "l1", "b": "l2"})
    with pytest.raises(ValueError, match="at least two groups, all 3 hosts are in group l1"):
        pair_rounds(hosts, "cross_group", groups={"a": "l1", "b": "l1", "c": "l1"})
    with pytest.raises(ValueError, match="needs groups"):
        pair_rounds(hosts, "cross_group")


# ---------------------------------------------------------------- explicit


@given(st.integers(min_value=2, max_value=20), st.data())
@settings(deadline=None)
def test_explicit_keeps_every_pair_in_disjoint_rounds(n, data):
    hosts = hosts_of(n)
    candidates = [list(p) for p in itertools.permutations(hosts, 2)]
    chosen = data.draw(st.lists(st.sampled_from(candidates), unique_by=tuple, max_size=40))
    rounds = pair_rounds(hosts, "explicit", pairs=chosen)
    assert_disjoint(rounds)
    assert sorted(p for r in rounds for p in r) == sorted(chosen)
    # greedy first fit never needs more rounds than the busiest host has pairs, doubled
    if chosen:
        degree = max(sum(1 for p in chosen if h in p) for h in hosts)
        assert len(rounds) <= 2 * degree - 1


def test_explicit_greedy_split_and_dict_pairs():
    rounds = pair_rounds(
        ["a", "b", "c", "d"], "explicit", pairs=[["a", "b"], ["b", "c"], {"server": "c", "client": "d"}]
    )
    assert rounds == [[["a", "b"], ["c", "d"]], [["b", "c"]]]


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([["a", "x"]], r"pairs\[0\] names host x, which is not in hosts"),
        ([["a", "b"], ["c", "c"]], r"pairs\[1\] pairs host c with itself"),
        ([["a", "b"], ["a", "b"]], r"pairs\[1\] \[a, b\] is listed twice"),
        ([["a", "b", "c"]], r"exactly two hosts"),
        (["ab"], r"must be a \[server, client\] list"),
        (None, r"needs pairs"),
    ],
)
def test_explicit_validation(pairs, message):
    with pytest.raises(ValueError, match=message):
        pair_rounds(["a", "b", "c"], "explicit", pairs=pairs)


# ---------------------------------------------------------------- input checks


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("hosts", [[], ["only"], None])
def test_empty_and_single_host_give_no_rounds(strategy, hosts):
    assert pair_rounds(hosts, strategy) == []


def test_unknown_strategy_lists_the_valid_ones():
    with pytest.raises(ValueError) as err:
        pair_rounds(["a", "b"], "mesh")
    text = str(err.value)
    assert "unknown pair strategy 'mesh'" in text
    for name in STRATEGIES:
        assert name in text


def test_bad_hosts():
    with pytest.raises(ValueError, match="host a appears twice"):
        pair_rounds(["a", "b", "a"])
    with pytest.raises(ValueError, match="must be a list of host names"):
        pair_rounds("node1,node2")
    with pytest.raises(ValueError, match="non-empty host name strings"):
        pair_rounds(["a", 3])


# ---------------------------------------------------------------- second pass


def run_first_pass(hosts, bad_nodes=(), bad_links=(), strategy="all_pairs"):
    results = []
    for index, rnd in enumerate(pair_rounds(hosts, strategy)):
        for server, client in rnd:
            bad = server in bad_nodes or client in bad_nodes or frozenset((server, client)) in bad_links
            results.append(
                {"server": server, "client": client, "passed": not bad, "round": index, "pass": 1,
                 "bw_avg_gbps": 150.0 if bad else 390.0}
            )  # fmt: skip
    return results


def test_first_pass_rule_separates_node_and_link():
    hosts = hosts_of(8)
    results = run_first_pass(hosts, bad_nodes={"node004"}, bad_links={frozenset(("node002", "node003"))})
    nodes, links, good, failed = first_pass_suspects(results)
    assert nodes == ["node004"]
    # node002 and node003 each failed with two partners (node004 and each other), but node004 explains one
    assert links == [("node002", "node003")]
    assert good == ["node000", "node001", "node005", "node006", "node007"]
    assert failed["node004"] == set(hosts) - {"node004"}


def test_first_pass_ring_bad_node_has_two_partners():
    hosts = hosts_of(6)
    nodes, links, _good, _failed = first_pass_suspects(run_first_pass(hosts, bad_nodes={"node003"}, strategy="ring"))
    assert nodes == ["node003"] and links == []


def test_first_pass_two_bad_nodes():
    nodes, links, _g, _f = first_pass_suspects(run_first_pass(hosts_of(8), bad_nodes={"node001", "node006"}))
    assert nodes == ["node001", "node006"] and links == []


def test_retest_pairs_suspects_with_known_good_partners():
    hosts = hosts_of(8)
    results = run_first_pass(hosts, bad_nodes={"node004"}, bad_links={frozenset(("node002", "node003"))})
    rounds = retest_rounds(results, hosts)
    assert_disjoint(rounds)
    good = {"node000", "node001", "node005", "node006", "node007"}
    subjects = {}
    for rnd in rounds:
        for a, b in rnd:
            subject = a if a not in good else b
            partner = b if subject == a else a
            assert partner in good and subject not in good
            subjects.setdefault(subject, set()).add(partner)
    assert set(subjects) == {"node002", "node003", "node004"}
    assert all(len(p) == 1 for p in subjects.values())
    # three subjects, five good partners: one round
    assert len(rounds) == 1


def test_retest_two_partners_each_and_both_roles():
    hosts = hosts_of(8)
    results = run_first_pass(hosts, bad_nodes={"node004"})
    rounds = retest_rounds(results, hosts, partners=2)
    assert_disjoint(rounds)
    pairs = [p for r in rounds for p in r]
    assert len(pairs) == 2
    assert {"server", "client"} == set("server" if p[0] == "node004" else "client" for p in pairs)
    assert len(set(p[0] if p[1] == "node004" else p[1] for p in pairs)) == 2


@given(st.integers(min_value=4, max_value=24), st.data())
@settings(max_examples=40, deadline=None)
def test_retest_rounds_properties(n, data):
    hosts = hosts_of(n)
    bad_nodes = set(data.draw(st.lists(st.sampled_from(hosts), max_size=2)))
    links = data.draw(st.lists(st.sampled_from([frozenset(p) for p in itertools.combinations(hosts, 2)]), max_size=3))
    results = run_first_pass(hosts, bad_nodes=bad_nodes, bad_links=set(links))
    nodes, slinks, good, _failed = first_pass_suspects(results)
    rounds = retest_rounds(results, hosts)
    assert_disjoint(rounds)
    subjects = set(nodes) | set(h for link in slinks for h in link)
    for rnd in rounds:
        for a, b in rnd:
            assert (a in subjects) != (b in subjects)
            assert (a in good) or (b in good)
    if good:
        retested = set(h for rnd in rounds for p in rnd for h in p if h in subjects)
        assert retested == subjects


def test_retest_nothing_to_do_or_no_partner():
    hosts = hosts_of(4)
    assert retest_rounds(run_first_pass(hosts), hosts) == []
    # two hosts, their only pair failed: a suspect link, but nobody known-good to retest with
    assert retest_rounds(run_first_pass(["a", "b"], bad_links={frozenset("ab")}), ["a", "b"]) == []
    # hosts restricts who may take part
    results = run_first_pass(hosts_of(6), bad_nodes={"node001"})
    rounds = retest_rounds(results, ["node001", "node005"])
    assert [sorted(p) for r in rounds for p in r] == [["node001", "node005"]]


def test_retest_ignores_second_pass_and_validates():
    results = run_first_pass(hosts_of(4), bad_nodes={"node001"})
    plan = retest_rounds(results)
    results.append({"server": "node001", "client": "node000", "passed": False, "pass": 2})
    assert retest_rounds(results) == plan
    with pytest.raises(ValueError, match=r"results\[0\] must be a dict"):
        retest_rounds(["x"])
    with pytest.raises(ValueError, match="partners must be >= 1"):
        retest_rounds(results, partners=0)


def peer_gated_first_pass(hosts, slow, bw_slow=300.0):
    """all_pairs pass 1 where every pair passes its absolute gate (240 Gb/s) and ``slow``'s pairs run at bw_slow."""
    results = []
    for index, rnd in enumerate(pair_rounds(hosts)):
        for server, client in rnd:
            bw = bw_slow if slow in (server, client) else 390.0
            results.append(
                {"server": server, "client": client, "server_device": "mlx5_0", "client_device": "mlx5_0",
                 "rail": "mlx5_0:1", "test": "write", "kind": "bandwidth", "bw_avg_gbps": bw,
                 "threshold_gbps": 240.0, "line_rate_gbps": 400.0, "passed": True, "failure": None,
                 "failure_kind": None, "round": index, "pass": 1}
            )  # fmt: skip
    return results


def test_pairs_that_fail_only_the_peer_gate_are_retested_too():
    # issue 20 part 2: node004 passes min_gbps with everyone but runs at 77% of its peers: the report fails it as
    # slow_vs_peers, so the retest must measure it again with a known-good partner it did not fail with
    hosts = hosts_of(8)
    results = peer_gated_first_pass(hosts, "node004")
    rounds = retest_rounds(results, hosts)
    pairs = [sorted(p) for rnd in rounds for p in rnd]
    assert len(pairs) == 1 and "node004" in pairs[0], pairs
    # the peer gate is what makes it a subject: turned off, every pair passed and there is nothing to retest
    assert retest_rounds(results, hosts, min_peer_fraction=0) == []


def test_the_retest_partner_comes_from_the_subjects_own_switch_when_the_groups_know_it():
    # issue 20 part 2: a pass behind the same leaf proves the node (its failures across could be above it)
    hosts = hosts_of(8)
    results = run_first_pass(hosts, bad_nodes={"node004"})
    leaf_of = dict((h, "leaf%d" % (i // 4)) for i, h in enumerate(hosts))  # node000-003 leaf0, node004-007 leaf1
    groups = switches.from_group_var(leaf_of)
    [[pair]] = retest_rounds(results, hosts, groups=(groups, "inventory"))
    partner = [h for h in pair if h != "node004"][0]
    assert leaf_of[partner] == "leaf1", pair
