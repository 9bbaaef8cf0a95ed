"""PHY readings joined with the real lab fabric (ibnetdiscover + dump_lfts from OpenSM on ibsim): every end named
as the topology names it, the switch end of every host cable, a pre-failure lane named by cable and serial."""

import copy

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import pairs
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import phy as VP
from tests.unit.plugins.module_utils.validate.test_fabric_lab import lab


def test_ends_are_named_as_the_topology_names_ports():
    ends = VP.ends(lab())
    host = ends["host:ibt-lab-node2/mlx5_0/1"]
    assert (
        host["label"] == "ibt-lab-node2 mlx5_0"
        and host["peer"].endswith(" p2")
        and host["peer_key"].startswith("switch:")
    )
    switch = ends[host["peer_key"]]
    assert switch["label"] == host["peer"] and switch["peer"] == "ibt-lab-node2 mlx5_0"
    assert switch["peer_key"] == "host:ibt-lab-node2/mlx5_0/1"


def test_switch_ports_lists_the_switch_end_of_every_host_cable():
    small = lab()
    ports = VP.switch_ports(small)
    assert len(ports) == 12  # 6 hosts x 2 rails
    assert all(set(p) == {"lid", "port", "switch", "guid"} and p["lid"] > 0 for p in ports)
    assert len(VP.switch_ports(small, ["ibt-lab-node1"])) == 2
    assert VP.switch_ports(None) == []


def reading(serial, lanes=(2e-10, 6e-10, 3e-10, 4e-10), errors=(0, 0, 0, 0), minutes=10.0):
    return {
        "format": "json",
        "link": {"state": "Active", "speed": "IB-NDR", "width": "4x", "speed_gbps": 400.0, "lanes": 4},
        "counters": {"time_since_clear_min": minutes, "effective_errors": 0, "effective_ber": 0.0,
                     "symbol_errors": 0, "symbol_ber": 0.0, "raw_errors_lanes": list(errors),
                     "raw_ber_lanes": list(lanes), "raw_ber": 4e-10, "link_down": 0, "link_recovery": 0},
        "fec_histogram": None,
        "module": {"serial": serial, "vendor": "Nvidia", "part_number": "MMA4Z00-NS", "temperature_c": 48.0,
                   "temperature_range": [-5.0, 75.0], "faults": {}},
        "unknown": [], "unparsed": [],
    }  # fmt: skip


def host_result(host, serials, bad_device=None):
    ports = []
    for device, serial in serials.items():
        lane_rate = [2e-10, 6e-10, 3e-10, 4e-10]
        if device == bad_device:
            lane_rate[2] = 2e-7
        errors = [int(r * 100e9 * 60) for r in lane_rate]  # one minute's worth at each lane's rate
        before = {"end": {"kind": "host", "device": device, "port": 1}, "reading": reading(serial), "read_at": 0.0}
        after = copy.deepcopy(before)
        after["reading"]["counters"]["raw_errors_lanes"] = errors
        after["reading"]["counters"]["time_since_clear_min"] = 11.0
        after["read_at"] = 60.0
        ports.append((before, after))
    return (
        {"ports": [a for a, _b in ports]},
        {"ports": [b for _a, b in ports]},
    )


def fabric_ports(bad=None):
    entries = []
    for i in range(1, 7):
        host = "ibt-lab-node%d" % i
        before, after = host_result(
            host, {"mlx5_0": "MT24N%d0" % i, "mlx5_1": "MT24N%d1" % i}, bad.get(host) if bad else None
        )
        entries += pairs.pair(after, before, host)
    return entries


def test_a_healthy_fabric_raises_nothing():
    verdict = VP.verdict(fabric_ports(), lab())
    assert verdict["findings"] == [] and len(verdict["ports"]) == 12 and verdict["unread"] == []


def test_a_climbing_lane_is_named_by_both_ends_and_the_serial():
    small = lab()
    verdict = VP.verdict(fabric_ports({"ibt-lab-node2": "mlx5_1"}), small)
    assert [(f["check"], f["severity"], f["lane"]) for f in verdict["findings"]] == [("raw_ber_outlier", "warning", 2)]
    finding = verdict["findings"][0]
    peer = VP.ends(small)["host:ibt-lab-node2/mlx5_1/1"]["peer"]
    assert finding["cable"] == "ibt-lab-node2 mlx5_1 <-> %s (serial MT24N21)" % peer
    assert finding["msg"].startswith(
        "cable ibt-lab-node2 mlx5_1 <-> %s (serial MT24N21): lane 2 raw (pre-FEC) BER 2e-07" % peer
    )
    assert (
        finding["host"] == "ibt-lab-node2"
        and finding["device"] == "mlx5_1"
        and finding["serials"] == {"ibt-lab-node2 mlx5_1": "MT24N21"}
    )


def test_the_switch_end_read_from_the_sm_host_names_the_same_cable():
    small = lab()
    peer = VP.ends(small)["host:ibt-lab-node2/mlx5_1/1"]["peer"]
    sw = [p for p in VP.switch_ports(small) if "%s p%d" % (p["switch"], p["port"]) == peer][0]
    ports = fabric_ports({"ibt-lab-node2": "mlx5_1"})
    end = {"kind": "switch", "lid": sw["lid"], "port": sw["port"], "switch": sw["switch"], "guid": sw["guid"]}
    r = reading("LABSW")
    ports.append({"end": end, "before": None, "after": r, "after_at": 60.0, "before_at": None, "error": None})
    verdict = VP.verdict(ports, small)
    cables = set(f["cable"] for f in verdict["findings"])
    assert len(cables) == 1
    assert cables.pop().endswith(
        "(serial MT24N21 at ibt-lab-node2 mlx5_1, serial LABSW at %s p%d)" % (sw["switch"], sw["port"])
    )


def test_without_a_topology_the_host_end_is_still_named():
    verdict = VP.verdict(fabric_ports({"ibt-lab-node2": "mlx5_1"}))
    assert (
        verdict["findings"][0]["cable"] == "ibt-lab-node2 mlx5_1 <-> its peer (unknown: no topology) (serial MT24N21)"
    )


def test_the_topology_carries_the_serials_the_phy_read():
    from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
    from tests.unit.plugins.module_utils.validate.test_fabric_lab import INVENTORY, TOPO

    result = analyse((TOPO / "lab-subnet.ibnetdiscover").read_text(), None, INVENTORY)
    verdict = VP.verdict(fabric_ports({"ibt-lab-node2": "mlx5_1"}), lab())
    assert VP.annotate_links(result, verdict) == 12
    link = [lk for lk in result["links"] if "ibt-lab-node2 mlx5_1" in (lk.get("serials") or {})][0]
    assert link["serials"] == {"ibt-lab-node2 mlx5_1": "MT24N21", link["cable"].split(" <-> ")[1].split(" (")[0]: None}
    finding = verdict["findings"][0]
    assert link["cable"] == finding["cable"]  # one name for the cable, in the topology and in the findings


def test_reading_is_the_result_of_a_read_that_ran():
    read = {"changed": False, "ports": []}
    assert VP.reading(read) is read
    assert VP.reading({"skipped": True, "changed": False}) is None
    assert VP.reading(None) is None


def test_switch_host_is_the_explicit_one_else_the_first_subnet_manager():
    assert VP.switch_host("sm9", ["sm1", "sm2"]) == "sm9"
    assert VP.switch_host("", ["sm1", "sm2"]) == "sm1"
    assert VP.switch_host("", ["node1"]) == "node1"
    with pytest.raises(ValueError, match="fabric_validate_phy_switch_host"):
        VP.switch_host("", [])
