"""Inventory rails mapped to leaf ports on the corpus NDR fabric (rails.py)."""

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import host_order, hosts_from_facts, map_rails
from tests.conftest import read_corpus

NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def test_map_rails_and_host_order():
    topo = parse_ibnetdiscover(read_corpus(NDR))
    hosts = {
        "a08-p1-dgx-04-c17": {"mlx5_5": "e09d:7303:007a:5a68"},
        "a06-p1-dgx-02-c01": {"mlx5_5": "e09d:7303:0085:7d78", "mlx5_9": "0000:0000:0000:0001"},
    }
    mapped = map_rails(topo, hosts)
    rail = mapped["rails"]["a08-p1-dgx-04-c17"]["mlx5_5"]
    assert (rail["switch"], rail["port"], rail["tier"]) == ("A09-P1-IBLEAF-04-04", 17, "leaf")
    assert mapped["missing"] == [{"host": "a06-p1-dgx-02-c01", "device": "mlx5_9", "guid": "0x0000000000000001"}]
    assert host_order(mapped) == ["a06-p1-dgx-02-c01", "a08-p1-dgx-04-c17"]


def test_hosts_from_ib_facts():
    facts = {
        "node1": {"devices": {"mlx5_0": {"node_guid": "a088:c203:0035:6f3a"}, "mlx5_bond_0": {}}},
        "node2": {},
    }
    assert hosts_from_facts(facts) == {"node1": {"mlx5_0": "a088:c203:0035:6f3a"}}
