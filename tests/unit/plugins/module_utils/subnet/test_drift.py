"""Drift against a golden topology on real OpenSM + ibsim outputs before/after cables were unlinked, and a
cable moved in the corpus NDR dump (drift.py; port_down and missing_rail on the same captures)."""

import gzip

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.checks import check_missing, check_ports_down
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import check_drift
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_iblinkinfo, parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import map_rails
from tests.conftest import FIXTURES, read_corpus

TOPO = FIXTURES / "topology"
NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def _sim(name):
    path = TOPO / name
    return gzip.decompress(path.read_bytes()).decode() if name.endswith(".gz") else path.read_text()


def test_unlinked_cables_from_the_simulated_subnet():
    golden = parse_ibnetdiscover(_sim("ndr582-sim.ibnetdiscover"))
    current = parse_ibnetdiscover(_sim("ndr582-sim-unlinked.ibnetdiscover"))
    drift = check_drift(golden, current)
    assert [(f["check"], f["switch"], f["port"], f["peer"]) for f in drift] == [
        ("drift_missing", "A09-P1-IBLEAF-04-04", 17, "a08-p1-dgx-04-c17 mlx5_5"),
        ("drift_missing", "A09-P1-IBLEAF-04-04", 38, "A10-P1-IBSPINE-03 port 32"),
    ]
    for name in ("ndr582-sim-unlinked.iblinkinfo.gz", "ndr582-sim-unlinked.iblinkinfo-l.gz"):
        down = check_ports_down(parse_iblinkinfo(_sim(name)), current, golden)
        assert sorted((f["switch"], f["port"], f["peer"], f["state"]) for f in down) == [
            ("A09-P1-IBLEAF-04-04", 17, "a08-p1-dgx-04-c17 mlx5_5", "Down/Polling"),
            ("A09-P1-IBLEAF-04-04", 38, "A10-P1-IBSPINE-03 port 32", "Down/Polling"),
            ("A10-P1-IBSPINE-03", 32, "A09-P1-IBLEAF-04-04 port 38", "Down/Polling"),
        ]
    # the host whose cable went is missing from the fabric
    rail_map = map_rails(current, {"a08-p1-dgx-04-c17": {"mlx5_5": "e09d:7303:007a:5a68"}})
    (miss,) = check_missing(rail_map)
    assert "a08-p1-dgx-04-c17 mlx5_5 (node GUID 0xe09d7303007a5a68) is not in the fabric" in miss["msg"]


def test_healthy_subnet_has_no_drift_and_no_port_down():
    golden = parse_ibnetdiscover(read_corpus(NDR))
    current = parse_ibnetdiscover(_sim("ndr582-sim.ibnetdiscover"))
    assert check_drift(golden, current) == []
    linkinfo = parse_iblinkinfo(_sim("ndr582-sim.iblinkinfo.gz"))
    assert check_ports_down(linkinfo, current, golden) == []


def test_moved_cable_is_one_finding():
    text = read_corpus(NDR)
    # exchange two host cables between leaves in the dump, the way ibnetdiscover would print them
    x, y = "e09d7303007a5a68", "e09d730300857d78"  # A09-...-04-04 port 17, A09-...-04-02 port 1
    swapped = (
        text.replace('"H-%s"[1](%s)' % (x, x), "@X@")
        .replace('"H-%s"[1](%s)' % (y, y), '"H-%s"[1](%s)' % (x, x))
        .replace("@X@", '"H-%s"[1](%s)' % (y, y))
        .replace('"S-2c5eab0300b87b40"[17]', "@P@")
        .replace('"S-2c5eab0300b87bc0"[1]\t', '"S-2c5eab0300b87b40"[17]\t')
        .replace("@P@", '"S-2c5eab0300b87bc0"[1]')
    )
    drift = check_drift(parse_ibnetdiscover(text), parse_ibnetdiscover(swapped))
    assert sorted((f["check"], f["peer"], f["was"], f["switch"], f["port"]) for f in drift) == [
        ("drift_moved", "a06-p1-dgx-02-c01 HCA-6", "A09-P1-IBLEAF-04-02 port 1", "A09-P1-IBLEAF-04-04", 17),
        ("drift_moved", "a08-p1-dgx-04-c17 mlx5_5", "A09-P1-IBLEAF-04-04 port 17", "A09-P1-IBLEAF-04-02", 1),
    ]


def test_extra_cables_against_an_older_golden():
    # the golden was taken while two cables were out; now they are back: two extra cables, warnings
    golden = parse_ibnetdiscover(_sim("ndr582-sim-unlinked.ibnetdiscover"))
    current = parse_ibnetdiscover(_sim("ndr582-sim.ibnetdiscover"))
    drift = check_drift(golden, current)
    assert sorted((f["check"], f["severity"], f["switch"], f["port"], f["peer"]) for f in drift) == [
        ("drift_extra", "warning", "A09-P1-IBLEAF-04-04", 17, "a08-p1-dgx-04-c17 mlx5_5"),
        ("drift_extra", "warning", "A09-P1-IBLEAF-04-04", 38, "A10-P1-IBSPINE-03 port 32"),
    ]
