"""qos/module.py: the RoCE ports fabric_qos picks from real ib_facts (on a fixture sysfs tree) and the shape
check of an explicit list. (tests/unit/plugins/modules/test_qos_roce_module.py runs roce_qos itself.)"""

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs
from ansible_collections.ibtune.fabric.plugins.module_utils.qos import module
from tests.conftest import FIXTURES


def roce_facts(tmp_path):
    import sys

    sys.path.insert(0, str(FIXTURES / "qos"))
    import roce_tree

    spec = json.loads((FIXTURES / "qos" / "roce-host.json").read_text())
    roce_tree.build(str(tmp_path / "sys"), str(tmp_path / "cfg"), spec)
    return sysfs.discover(str(tmp_path / "sys"))


def test_every_active_ethernet_port_with_a_netdev_is_picked(tmp_path):
    facts = roce_facts(tmp_path)
    found = module.roce_interfaces([], facts)
    assert found == [
        {"netdev": "ens1f0np0", "rdma_device": "mlx5_0", "port": 1},
        {"netdev": "ens2f0np0", "rdma_device": "mlx5_1", "port": 1},
    ]
    facts["devices"]["mlx5_1"]["ports"]["1"]["state"] = "DOWN"
    facts["devices"]["mlx5_0"]["ports"]["1"]["link_layer"] = "InfiniBand"
    assert module.roce_interfaces([], facts) == []


def test_an_explicit_list_wins_and_its_shape_is_checked(tmp_path):
    explicit = [{"netdev": "ens9"}]
    assert module.roce_interfaces(explicit, roce_facts(tmp_path)) == explicit
    assert module.valid_interfaces(explicit) and module.valid_interfaces([])
    assert not module.valid_interfaces("ens9") and not module.valid_interfaces([{"rdma_device": "mlx5_0"}])
