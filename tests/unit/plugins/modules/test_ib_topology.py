"""ib_topology on saved outputs of the real tools (OpenSM + ibsim captures): model, rails, findings,
routes, switch counters, check mode; and its one-sentence errors."""

import gzip

from ansible_collections.ibtune.fabric.plugins.modules import ib_topology
from tests.conftest import FIXTURES
from tests.unit.modules_harness import run_module

TOPO = FIXTURES / "topology"


def _plain(tmp_path, name):
    src = TOPO / name
    if not name.endswith(".gz"):
        return str(src)
    dst = tmp_path / name[:-3]
    dst.write_bytes(gzip.decompress(src.read_bytes()))
    return str(dst)


def test_saved_outputs_healthy_with_rails_routes_and_counters(tmp_path):
    args = {
        "path": _plain(tmp_path, "ndr582-sim.ibnetdiscover"),
        "linkinfo_path": _plain(tmp_path, "ndr582-sim.iblinkinfo.gz"),
        "routes_path": _plain(tmp_path, "ndr582-sim.dump_lfts.gz"),
        "errors_path": _plain(tmp_path, "ndr582-sim.ibqueryerrors"),
        "golden_path": _plain(tmp_path, "ndr582-sim.ibnetdiscover"),
        "facts": {"a08-p1-dgx-04-c17": {"devices": {"mlx5_5": {"node_guid": "e09d:7303:007a:5a68"}}}, "nodev": {}},
        "checks": ["port_down", "drift", "missing_rail", "link_below_norm"],
        "fail_on_findings": True,
    }
    result = run_module(ib_topology, args, check_mode=True)
    assert not result.failed, result["msg"]
    assert result["changed"] is False
    assert result["summary"]["switches"] == 40 and result["summary"]["cas"] == 582
    assert result["rails"]["a08-p1-dgx-04-c17"]["mlx5_5"]["switch"] == "A09-P1-IBLEAF-04-04"
    assert result["rails"]["a08-p1-dgx-04-c17"]["mlx5_5"]["port"] == 17
    assert result["findings"] == [] and result["msg"] == "fabric checks passed: no finding"
    assert len(result["routes"]) == 40
    assert result["switch_counters"] == {} and result["switch_saturated"] == []
    assert result["warnings_seen"][0].startswith("ibwarn:")


def test_unlinked_cable_and_counters_fail_naming_switch_port_peer(tmp_path):
    golden = run_module(ib_topology, {"path": _plain(tmp_path, "ndr582-sim.ibnetdiscover")})
    before = run_module(
        ib_topology,
        {
            "path": _plain(tmp_path, "ndr582-sim.ibnetdiscover"),
            "errors_path": _plain(tmp_path, "ndr582-sim.ibqueryerrors"),
        },
    )
    args = {
        "path": _plain(tmp_path, "ndr582-sim-unlinked.ibnetdiscover"),
        "linkinfo_path": _plain(tmp_path, "ndr582-sim-unlinked.iblinkinfo-l.gz"),
        "errors_path": _plain(tmp_path, "ndr582-sim-errors.ibqueryerrors"),
        "golden": {k: golden[k] for k in ("switches", "cas", "links", "tiers")},
        "counters_previous": before["switch_counters"],
        "hosts": {"a08-p1-dgx-04-c17": {"mlx5_5": "0xe09d7303007a5a68"}},
        "checks": ["port_down", "drift", "missing_rail"],
        "fail_on_findings": True,
    }
    result = run_module(ib_topology, args)
    assert result.failed
    checks = sorted((f["check"], f["switch"], f["port"]) for f in result["findings"])
    assert ("drift_missing", "A09-P1-IBLEAF-04-04", 17) in checks
    assert ("port_down", "A09-P1-IBLEAF-04-04", 38) in checks
    assert ("missing_rail", None, None) in checks
    assert "A09-P1-IBLEAF-04-04 port 17 <-> a08-p1-dgx-04-c17 mlx5_5: SymbolErrorCounter +12" in result["msg"]
    assert [v["port"] for v in result["switch_counter_violations"]] == [36, 17, 35]


def test_missing_tool_and_unreadable_file_are_one_sentence(tmp_path):
    result = run_module(ib_topology, {"bin_dir": str(tmp_path)})
    assert result.failed
    assert result["msg"] == (
        "ibnetdiscover not found on %s: install infiniband-diags there, run on the subnet manager host, "
        "or give a saved output." % tmp_path
    )
    result = run_module(ib_topology, {"path": str(tmp_path / "nope.txt")})
    assert result.failed and result["msg"].startswith("cannot read ibnetdiscover output %s" % (tmp_path / "nope.txt"))
    empty = tmp_path / "empty.txt"
    empty.write_text("ibwarn: [1] umad_init: can't open UMAD\n")
    result = run_module(ib_topology, {"path": str(empty)})
    assert result.failed and "has no node" in result["msg"]
    result = run_module(ib_topology, {"path": _plain(tmp_path, "ndr582-sim.ibnetdiscover"), "golden": {"links": []}})
    assert result.failed and result["msg"].startswith("golden topology lacks switches, cas")


def test_data_counters_prove_isl_traffic_from_saved_outputs(tmp_path):
    first = {
        "path": str(TOPO / "lab-subnet.ibnetdiscover"),
        "linkinfo": False,
        "data_counters_path": str(TOPO / "lab-subnet.ibqueryerrors-counters-before"),
    }
    before = run_module(ib_topology, first)
    assert not before.failed, before["msg"]
    assert "isl_traffic" not in before and len(before["switch_data_counters"]) == 46
    after = run_module(
        ib_topology,
        dict(
            first,
            data_counters_path=str(TOPO / "lab-subnet.ibqueryerrors-counters-after"),
            data_counters_previous=before["switch_data_counters"],
            traffic_min_bytes=1 << 29,
        ),
    )
    assert not after.failed, after["msg"]
    assert after["isl_traffic"]["carried"] == 2 and after["isl_traffic"]["total"] == 16
    assert after["isl_traffic"]["min_octets"] == 1 << 29


def test_the_design_ratio_and_a_dragonfly_from_saved_outputs():
    lab = {"path": str(TOPO / "lab-subnet.ibnetdiscover"), "linkinfo": False, "fail_on_findings": True}
    # the subnet scenario's 3 hosts on 2 uplinks per leaf: 1.5:1, an error at the default 1:1
    result = run_module(ib_topology, lab)
    assert result.failed and result["summary"]["oversubscribed"] == 4
    assert result["msg"].startswith("4 fabric finding(s), 4 error(s): lab-leaf1 (leaf, rail group mlx5_0) is ")
    result = run_module(ib_topology, dict(lab, max_oversubscription=1.5))
    assert not result.failed and result["summary"]["max_leaf_oversubscription"] == 1.5
    fly = run_module(ib_topology, {"path": str(TOPO / "dragonfly-unlinked.ibnetdiscover"), "linkinfo": False})
    assert fly["dragonfly"]["global_links"] == 5 and fly["summary"]["dragonfly_groups"] == 3
    assert [f["check"] for f in fly["findings"]] == ["oversubscription", "oversubscription", "dragonfly_global"]
    only = run_module(
        ib_topology,
        {"path": str(TOPO / "dragonfly-unlinked.ibnetdiscover"), "linkinfo": False, "checks": ["dragonfly_global"]},
    )
    assert [f["check"] for f in only["findings"]] == ["dragonfly_global"]


def test_a_design_ratio_that_is_not_positive_is_one_sentence():
    result = run_module(ib_topology, {"path": str(TOPO / "lab-subnet.ibnetdiscover"), "max_oversubscription": 0})
    assert result.failed and result["msg"] == (
        "max_oversubscription must be a ratio above 0 (1.0 = non-blocking, 2.0 = 2:1 by design), got 0.0: set "
        "fabric_topology_max_oversubscription to the fabric's design"
    )
