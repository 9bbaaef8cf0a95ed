"""The fabric_validate wiring filters."""

from ansible_collections.ibtune.fabric.plugins.filter import validate


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
