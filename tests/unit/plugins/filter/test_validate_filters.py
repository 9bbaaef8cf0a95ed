"""The fabric_validate wiring filters."""

from ansible_collections.ibtune.fabric.plugins.filter import validate, validate_topology
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan


def test_unreachable_and_preflight_failed_hosts_are_reported_never_dropped():
    out = validate.host_failures(
        ["n1", "n2", "n3"],
        ["n1", "n2"],
        {"n1": [], "n2": [{"failure_kind": "rate", "reason": "rail mlx5_0:1: expected rate 400 Gb/s, found 200 Gb/s"}]},
        [{"host": "n1", "failure_kind": "missing_rail", "reason": "rail mlx5_1:1 not ACTIVE"}],
    )
    assert [(f["host"], f["failure_kind"]) for f in out] == [
        ("n2", "rate"),
        ("n3", "unreachable"),
        ("n1", "missing_rail"),
    ]


def test_only_our_ports_are_leftovers():
    lines = [
        "101 /opt/bin/ib_write_bw -d mlx5_0 -p 18516 -D 10",
        "102 ib_write_bw -d mlx5_0 -p 12000 -D 900",
        "103 ib_read_lat -d mlx5_1 -p 18530 10.0.0.2",
    ]
    assert validate.own_leftovers(lines, range(18515, 18600)) == [lines[0], lines[2]]


def test_leftovers_by_base_port_use_the_plans_window():
    lines = ["101 ib_write_bw -d mlx5_0 -p 18515", "102 ib_write_bw -p 22611", "103 ib_write_bw -p 22610"]
    # [base, base + 4096): what the role's Jinja computed before the window moved into plan.own_ports
    assert validate.own_leftovers(lines, 18515) == [lines[0], lines[2]]
    assert validate.own_leftovers(lines, "18515") == [lines[0], lines[2]]
    assert list(plan.own_ports(65000))[-1] == 65535


def test_preflight_summary_names_the_rails_or_every_reason():
    rails = [{"rail": "mlx5_0:1"}, {"rail": "mlx5_1:1"}]
    assert validate.preflight_summary("n1", rails, []) == "n1: 2 rail(s) mlx5_0:1, mlx5_1:1 as expected"
    problems = [{"reason": "rail mlx5_0:1 is DOWN"}, {"reason": "expected 2 rails, found 1"}]
    assert validate.preflight_summary("n2", rails[1:], problems) == (
        "n2: FAILED preflight, not tested: rail mlx5_0:1 is DOWN; expected 2 rails, found 1"
    )


def test_the_report_judges_the_switch_counters_read_after_the_passes():
    stage = {"version": 1, "links": [1], "switch_counter_violations": [{"delta": 1}], "isl_traffic": {"total": 2}}
    after = {"switch_counter_violations": [], "switch_saturated": [{"port": 3}], "msg": "ok"}
    out = validate_topology.topology_after_passes(stage, after)
    assert out == dict(stage, switch_counter_violations=[])  # only the two keys; isl_traffic absent after: kept
    assert stage["switch_counter_violations"] == [{"delta": 1}]  # the input is not changed
    assert validate_topology.topology_after_passes(stage, {}) == stage


def test_slice_sides_makes_the_sides_of_a_written_slice_file_and_names_itself_on_a_bad_one(tmp_path):
    """What pass.yml hands perftest_schedule: the sides of a slice file as plan.write_plan wrote it (read back as
    JSON, as from_json does), the plan's own; a slice that is not ours fails the task naming the filter."""
    import json

    import pytest
    from ansible.errors import AnsibleFilterError

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    hosts = ["n1", "n2", "n3"]
    rails = dict((h, [{"rail": "mlx5_0:1", "device": "mlx5_0", "port": 1, "rate_gbps": 400.0}]) for h in hosts)
    planned = plan.plan_pass(hosts, rails, dict((h, "10.0.0.%d" % i) for i, h in enumerate(hosts)))
    _plan_file, slice_dir = plan.write_plan(str(tmp_path), planned, hosts, rails, 1)
    with open("%s/n2.json" % slice_dir) as handle:
        sides = validate.slice_sides(json.load(handle))
    assert sides == sidefiles.slice_sides(planned["slices"]["n2"])
    assert len(sides) == 2 and {s["role"] for s in sides} == {"server", "client"}
    assert all(s["host"] == "n2" and s["tcp_port"] >= 18515 for s in sides)
    with pytest.raises(AnsibleFilterError, match="slice_sides: a slice is a list of sides or a format-2 slice"):
        validate.slice_sides({"format": 9})
    assert "slice_sides" in validate.FilterModule().filters()
