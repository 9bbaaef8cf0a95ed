"""fabric_validate phy.yml's gates and its switch-reading host, moved from multi-line Jinja into the phy filters
(issue 26 part 5): the same values as the old expressions rendered by ansible-core (tests/unit/jinja_harness.py)."""

import itertools

import pytest
from ansible.errors import AnsibleError

from ansible_collections.ibtune.fabric.plugins.filter.phy import FilterModule
from tests.unit.jinja_harness import UNSET, defined, render, task, task_vars

FILTERS = FilterModule().filters()
SKIPPED = {"skipped": True, "changed": False, "false_condition": "fabric_validate_phy_switch_ports | bool"}


def _read(value, cleared=False):
    end = {"kind": "host", "device": "mlx5_0", "port": 1}
    return {"changed": cleared, "cleared": cleared, "ports": [{"end": end, "reading": {"ber": value}, "read_at": 1.0}]}


def test_switch_host_is_the_old_delegate_to():
    old = (
        "{{ fabric_validate_phy_switch_host if fabric_validate_phy_switch_host | length > 0"
        " else (groups['subnet_managers'] | default([inventory_hostname]))[0] }}"
    )
    new = task(
        "fabric_validate",
        "phy.yml",
        "Read the switch end of every host cable from the subnet manager - {{ __fabric_validate_phy_stage }}",
    )
    args = new["delegate_to"].split("phy_switch_host(", 1)[1]
    assert args.startswith("groups['subnet_managers'] | default([inventory_hostname])")
    for explicit, groups in itertools.product(("", "sm9"), ({}, {"subnet_managers": ["sm1", "sm2"]})):
        variables = dict(fabric_validate_phy_switch_host=explicit, groups=groups, inventory_hostname="node1")
        candidates = render("{{ groups['subnet_managers'] | default([inventory_hostname]) }}", **variables)
        assert FILTERS["phy_switch_host"](explicit, candidates) == render(old, **variables)
    # An empty subnet_managers group failed before (an undefined host) and fails now, saying what to set.
    with pytest.raises(AnsibleError):
        render(old, fabric_validate_phy_switch_host="", groups={"subnet_managers": []}, inventory_hostname="n")
    with pytest.raises(AnsibleError, match="fabric_validate_phy_switch_host"):
        FILTERS["phy_switch_host"]("", [])


def test_readings_kept_before_the_passes_are_the_old_ones():
    old = (
        "{{ __fabric_validate_phy_switch_read if __fabric_validate_phy_switch_read is defined"
        " and __fabric_validate_phy_switch_read is not skipped else none }}"
    )
    for read in (UNSET, SKIPPED, _read(1e-12, cleared=True)):
        variables = defined(__fabric_validate_phy_switch_read=read)
        assert FILTERS["phy_reading"](None if read is UNSET else read) == render(old, **variables)


def test_paired_ports_are_the_old_ones():
    gate = "{{ __fabric_validate_phy_read is not skipped }}"
    for read, before in itertools.product((SKIPPED, _read(2e-12)), (None, _read(1e-12, cleared=True))):
        variables = dict(__fabric_validate_phy_read=read)
        old = FILTERS["phy_ports"](read, before, "node1") if render(gate, **variables) else []
        assert FILTERS["phy_ports"](FILTERS["phy_reading"](read), before, "node1") == old


def test_switch_ports_and_history_inputs_are_the_old_ones():
    gate = "{{ __fabric_validate_phy_switch_read is defined and __fabric_validate_phy_switch_read is not skipped }}"
    name = "Judge the physical layer of every cable once (phy_verdict)"
    switch_read = task("fabric_validate", "phy.yml", name)["vars"]["__switch_read"]
    assert switch_read == "{{ __fabric_validate_phy_switch_read | default(none) | ibtune.fabric.phy_reading }}"
    for read in (UNSET, SKIPPED, _read(3e-12)):
        variables = defined(__fabric_validate_phy_switch_read=read, fabric_validate_phy_history_path="")
        wired = task_vars("fabric_validate", "phy.yml", name, only=("__history",), **variables)
        old = FILTERS["phy_ports"](read, None) if render(gate, **variables) else []
        assert FILTERS["phy_ports"](FILTERS["phy_reading"](None if read is UNSET else read), None) == old
        # No history path: no history, and the file is not looked up.
        assert wired["__history"] is None
