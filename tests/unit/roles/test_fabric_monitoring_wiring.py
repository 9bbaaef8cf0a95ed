"""fabric_monitoring's filter calls, put on one line with their inputs in the task's vars (issue 26 part 5), get the
same inputs as the multi-line calls they replaced (rendered by ansible-core, tests/unit/jinja_harness.py)."""

from ansible_collections.ibtune.fabric.plugins.filter.node_exporter import FilterModule
from tests.unit.jinja_harness import render, task_vars

FILTERS = FilterModule().filters()
DEVICES = {"files": [{"path": "/sys/class/infiniband/mlx5_0"}, {"path": "/sys/class/infiniband/mlx5_1"}]}


def test_node_exporter_args_inputs():
    variables = dict(
        fabric_monitoring_sysfs_root="/host/sys",
        fabric_monitoring_textfile_dir="/var/lib/node_exporter",
        fabric_monitoring_extra_args=["--collector.ethtool"],
    )
    wired = task_vars("fabric_monitoring", "configure.yml", "Assemble node_exporter's arguments", **variables)
    old = "{{ [fabric_monitoring_sysfs_root, fabric_monitoring_textfile_dir, fabric_monitoring_extra_args] }}"
    assert [wired["__sysfs_root"], wired["__textfile_dir"], wired["__extra_args"]] == render(old, **variables)


def test_expected_rates_inputs():
    name = "Publish the expected port rates (ibtune_port_expected_rate_gbps)"
    # The old call's input; the filter gets the same paths and overrides.
    old = "{{ __fabric_monitoring_ib_devices.files | default([]) | map(attribute='path') | list }}"
    for devices in (DEVICES, {"skipped": True, "changed": False}):
        variables = dict(
            __fabric_monitoring_ib_devices=devices,
            fabric_monitoring_expected_rate_gbps=400,
            fabric_monitoring_expected_rate_overrides={"mlx5_1": 200},
        )
        wired = task_vars(
            "fabric_monitoring", "configure.yml", name, only=("__device_paths", "__overrides"), **variables
        )
        paths = render(old, **variables)
        expected = FILTERS["node_exporter_expected_rates"](paths, 400, {"mlx5_1": 200})
        assert wired["__device_paths"] == paths
        assert wired["__overrides"] == {"mlx5_1": 200}
        assert FILTERS["node_exporter_expected_rates"](wired["__device_paths"], 400, wired["__overrides"]) == expected


def test_ib_verdict_inputs():
    variables = dict(fabric_monitoring_sysfs_root="/sys", __fabric_monitoring_ib_dirs=DEVICES)
    wired = task_vars("fabric_monitoring", "scrape_check.yml", "Judge the infiniband collector", **variables)
    old = (
        "{{ [fabric_monitoring_sysfs_root ~ '/class/infiniband',"
        " __fabric_monitoring_ib_dirs.files | map(attribute='path') | list] }}"
    )
    assert [wired["__class_root"], wired["__dir_paths"]] == render(old, **variables)
