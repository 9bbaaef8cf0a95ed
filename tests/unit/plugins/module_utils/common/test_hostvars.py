"""One variable of many hosts (common/hostvars.py): the maps and selections fabric_validate hands its modules.

The pure functions on dicts; tests/unit/plugins/filter/test_hostvars_filters.py runs the filters on a real
play's hostvars (whose missing variables are Undefined objects, not KeyErrors)."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common import hostvars

HOSTVARS = {
    "n1": {"problems": [], "rails": ["mlx5_0:1"], "mid": {"violations": [{"counter": "symbol_error"}]}},
    "n2": {"problems": [{"reason": "rail mlx5_0:1 is DOWN"}], "rails": [], "mid": {"changed": False}},
    "n3": {"problems": [], "rails": ["mlx5_0:1"], "mid": {"violations": []}},
    "n4": {"rails": None},
}


def test_value_map_keeps_the_hosts_order_and_follows_dotted_paths():
    assert hostvars.value_map(["n3", "n1"], HOSTVARS, "rails") == {"n3": ["mlx5_0:1"], "n1": ["mlx5_0:1"]}
    assert hostvars.value_map(["n1", "n3"], HOSTVARS, "mid.violations") == {
        "n1": [{"counter": "symbol_error"}],
        "n3": [],
    }


def test_a_host_without_the_variable_is_named_unless_a_default_is_given():
    with pytest.raises(KeyError, match="host n4 has no variable problems"):
        hostvars.value_map(["n1", "n4"], HOSTVARS, "problems")
    with pytest.raises(KeyError, match="host n2 has no variable mid.violations"):
        hostvars.value_map(["n2"], HOSTVARS, "mid.violations")
    assert hostvars.value_map(["n1", "n4"], HOSTVARS, "problems", []) == {"n1": [], "n4": []}


def test_hosts_with_and_without_never_count_a_host_that_lacks_the_variable():
    hosts = ["n1", "n2", "n3", "n4"]
    # the hosts preflight passed: n4 never ran preflight, so it is not "without problems"
    assert hostvars.hosts_without(hosts, HOSTVARS, "problems") == ["n1", "n3"]
    assert hostvars.hosts_with(hosts, HOSTVARS, "problems") == ["n2"]
    # a skipped registered result has no violations: the host is no suspect
    assert hostvars.hosts_with(hosts, HOSTVARS, "mid.violations") == ["n1"]
    assert hostvars.hosts_without(hosts, HOSTVARS, "rails") == ["n2"]  # None is "not set", [] is "empty"


def test_an_undefined_value_counts_as_missing():
    class AnsibleUndefined:  # what HostVars hands back for an unknown host
        pass

    assert hostvars.value_map(["x"], {"x": AnsibleUndefined()}, "rails", "none") == {"x": "none"}
    assert hostvars.hosts_without(["x"], {"x": {"rails": AnsibleUndefined()}}, "rails") == []
