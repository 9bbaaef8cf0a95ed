"""The Slurm filters. slurm_topology_leaves: slurm_remediate topology.yml's leaf map, moved from multi-line Jinja
(issue 26 part 5), the same map as the old expression rendered by ansible-core (tests/unit/jinja_harness.py).
slurm_name_problems: the launchers' Slurm-name check (common/slurm_args.check_name) for role variables."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.slurm import FilterModule
from tests.unit.jinja_harness import render, task

FILTERS = FilterModule().filters()
GROUPS = {"all": ["n1", "n2", "n3"], "ungrouped": [], "leaf1": ["n1", "n2"], "leaf2": ["n3"], "empty": []}


def test_leaves_are_the_old_expression():
    old = (
        "{{ slurm_remediate_topology_leaves if slurm_remediate_topology_leaves | length > 0 else"
        " dict(slurm_remediate_topology_leaf_groups | zip(slurm_remediate_topology_leaf_groups"
        " | map('extract', groups))) }}"
    )
    cases = [({}, ["leaf1", "leaf2"]), ({}, []), ({}, ["leaf2", "empty"]), ({"sw": ["n9"]}, ["leaf1"])]
    for explicit, leaf_groups in cases:
        variables = dict(
            slurm_remediate_topology_leaves=explicit, slurm_remediate_topology_leaf_groups=leaf_groups, groups=GROUPS
        )
        assert FILTERS["slurm_topology_leaves"](explicit, leaf_groups, GROUPS) == render(old, **variables)
    wired = task("slurm_remediate", "topology.yml", "Write topology.conf (tree) from the leaf switches")["vars"]
    assert wired["__slurm_remediate_leaves"] == (
        "{{ slurm_remediate_topology_leaves | ibtune.fabric.slurm_topology_leaves("
        "slurm_remediate_topology_leaf_groups, groups) }}"
    )


def test_a_group_not_in_the_inventory_fails_naming_it():
    # preflight.yml refuses it first; the filter names it too rather than hand an undefined leaf on.
    with pytest.raises(AnsibleFilterError, match="nope"):
        FILTERS["slurm_topology_leaves"]({}, ["leaf1", "nope"], GROUPS)


PROBLEMS = FILTERS["slurm_name_problems"]
FIX = " is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show"


def test_names_and_empty_values_pass():
    assert PROBLEMS({"p": "gpu", "q": "validation.hi", "a": "ml_team+1", "r": ""}) == []


def test_each_bad_value_is_named_in_order_with_the_fix():
    assert PROBLEMS({"nccl_check_slurm_qos": "high,low", "ok": "gpu", "nccl_check_slurm_partition": "gpu\n"}) == [
        "nccl_check_slurm_qos='high,low'" + FIX,
        "nccl_check_slurm_partition='gpu\\n'" + FIX,
    ]


def test_not_a_dict_is_refused():
    with pytest.raises(AnsibleFilterError, match="give {variable: value}"):
        PROBLEMS(["gpu"])
