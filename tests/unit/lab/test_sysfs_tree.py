"""tests/lab/sysfs_tree.py: a port spec'd with counters False has no counters/ at all (as on drivers without a PMA)."""

import os

from tests.lab.sysfs_tree import STANDARD_COUNTERS, build_tree


def test_counters_false_creates_no_counters_entry(tmp_path):
    root = build_tree(str(tmp_path), {"devices": {"mlx5_0": {"ports": {1: {"counters": False}}}}})
    port = os.path.join(root, "class", "infiniband", "mlx5_0", "ports", "1")
    assert os.path.isfile(os.path.join(port, "state"))
    # Neither a directory nor a file named counters (a file would still break readers that expect a directory).
    assert not os.path.lexists(os.path.join(port, "counters"))


def test_default_port_has_every_standard_counter(tmp_path):
    root = build_tree(str(tmp_path), {"devices": {"mlx5_0": {}}})
    counters = os.path.join(root, "class", "infiniband", "mlx5_0", "ports", "1", "counters")
    assert sorted(os.listdir(counters)) == sorted(STANDARD_COUNTERS)
