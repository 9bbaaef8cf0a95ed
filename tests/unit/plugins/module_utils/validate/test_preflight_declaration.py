"""The fabric as declared against what the hosts report (validate/preflight.py): one sentence per wrong
declaration, naming the variable, what the hosts report and the fix; and the install stage's batch size."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import preflight

FABRIC = {"link_layer": "InfiniBand", "rate_gbps": 400, "rails": 2}


def _facts(rate=400.0, layer="InfiniBand", state="ACTIVE", ports=2, lane_speed="NDR"):
    port = {"state": state, "phys_state": "LinkUp", "link_layer": layer, "rate_gbps": rate, "lanes": 4}
    port["lane_speed"] = lane_speed
    return {"devices": {"mlx5_%d" % i: {"ports": {"1": dict(port)}} for i in range(ports)}}


def _problems(fabric, facts_by_host, **expect):
    declarations = dict((h, dict({"ibtune_fabric": fabric}, **expect)) for h in facts_by_host)
    return preflight.declaration_problems(declarations, facts_by_host)


def test_a_declaration_the_hosts_agree_with_has_no_problem():
    assert _problems(FABRIC, {"n1": _facts(), "n2": _facts()}) == []
    # Nothing declared: nothing to compare.
    assert _problems({}, {"n1": _facts()}) == []


def test_a_rate_most_ports_trained_away_from_is_one_sentence_not_one_per_rail():
    hosts = dict(("n%d" % i, _facts()) for i in range(4))
    problems = _problems(dict(FABRIC, rate_gbps=200), hosts)
    assert problems == [
        "ibtune_fabric.rate_gbps is 200 Gb/s, but 8 of 8 ACTIVE port(s) on 4 host(s) trained at 400 Gb/s (4X NDR), "
        "none of them a cable fault: set ibtune_fabric.rate_gbps: 400 (a port below it is then named by preflight)"
    ]


def test_a_minority_of_slow_ports_is_left_to_the_per_port_preflight():
    hosts = {"n1": _facts(), "n2": _facts(), "n3": _facts(rate=200.0, lane_speed="HDR")}
    assert _problems(FABRIC, hosts) == []


def test_the_role_variable_that_departs_from_the_fabric_is_the_one_named():
    problems = _problems(FABRIC, {"n1": _facts(rate=200.0, lane_speed="HDR")}, fabric_validate_expect_rate_gbps=100)
    assert problems[0].startswith("fabric_validate_expect_rate_gbps is 100 Gb/s, but 2 of 2 ACTIVE port(s)")
    assert problems[0].endswith(
        "set fabric_validate_expect_rate_gbps: 200 (a port below it is then named by preflight)"
    )


def test_a_link_layer_no_port_has_says_what_they_have():
    problems = _problems(dict(FABRIC, link_layer="Ethernet"), {"n1": _facts(), "n2": _facts(state="DOWN")})
    assert problems == [
        "ibtune_fabric.link_layer is Ethernet, but no RDMA port of any host has that link layer: they report "
        "InfiniBand on 4 port(s) of 2 host(s). Set ibtune_fabric.link_layer: InfiniBand"
    ]
    problems = _problems(FABRIC, {"n1": _facts(layer="Ethernet")})
    assert problems[0].endswith("Set ibtune_fabric.link_layer: Ethernet (RoCE)")


@pytest.mark.parametrize(
    "fabric,sentence",
    [
        (
            {"link_layer": "InfiniBand", "rate_gpbs": 400},
            "ibtune_fabric.rate_gpbs is not a key of ibtune_fabric (link_layer, rate_gbps, rails): did you mean "
            "rate_gbps?",
        ),
        ({"speed": 400}, "ibtune_fabric.speed is not a key of ibtune_fabric (link_layer, rate_gbps, rails): remove it"),
        ({"rate_gbps": 4000}, "ibtune_fabric.rate_gbps=4000 is not a number from 1 to 1600 Gb/s per port"),
        ({"rate_gbps": "fast"}, "ibtune_fabric.rate_gbps='fast' is not a number from 1 to 1600 Gb/s per port"),
        ({"rails": 2.5}, "ibtune_fabric.rails=2.5 is not a whole number from 1 to 64 ports per host"),
        ({"link_layer": "IB"}, "ibtune_fabric.link_layer='IB': use InfiniBand or Ethernet (RoCE)"),
        (
            "InfiniBand",
            "ibtune_fabric='InfiniBand' must be a dict such as {link_layer: InfiniBand, rate_gbps: 400, rails: 8}",
        ),
    ],
)
def test_the_declaration_itself_is_checked_like_role_variables(fabric, sentence):
    assert preflight.fabric_problems(fabric) == [sentence]
    # And it is said once, however many hosts share it, before any comparison with the hosts.
    assert _problems(fabric, {"n1": _facts(), "n2": _facts()}) == [sentence]


def test_hosts_without_facts_are_left_to_their_own_failure():
    assert _problems(dict(FABRIC, rate_gbps=200), {"n1": None}) == []


@pytest.mark.parametrize(
    "value,items",
    [("25%", ["25%"]), (2, ["2"]), ("100%", ["100%"]), ([1, "25%"], ["1", "25%"]), (None, ["100%"])],
)
def test_install_serial_takes_what_ansibles_serial_takes(value, items):
    assert preflight.install_serial({"n1": value, "n2": value}) == (items, None)
    group = preflight.serial_group(items)
    assert group.startswith(preflight.SERIAL_GROUP_PREFIX) and "%" not in group
    # The group carries it to the play; numbers come back as numbers.
    expected = [i if i.endswith("%") else int(i) for i in items]
    assert preflight.serial_from_groups(["all", "gpu_nodes", group]) == expected


@pytest.mark.parametrize("value", ["0", "150%", "quarter", True, [], [0]])
def test_install_serial_refuses_what_serial_cannot_honour(value):
    items, problem = preflight.install_serial({"n1": value})
    assert items is None
    assert problem.startswith("ibtune_install_serial=%r is not a batch size" % (value,)) or value == []


def test_install_serial_must_be_one_value_for_every_node():
    items, problem = preflight.install_serial({"n1": "25%", "n2": "25%", "n3": 1})
    assert items is None
    assert problem == (
        "ibtune_install_serial differs between the GPU nodes ('25%' on n1, n2; 1 on n3): the install play batches "
        "them all with one size, so set it once (group_vars/gpu_nodes.yml or all.yml, or -e ibtune_install_serial=...)"
    )
    assert preflight.serial_from_groups(["all"]) == ["100%"]
