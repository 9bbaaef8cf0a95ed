"""The multi-node verdict end to end, in-process: the nccl_test module launches the lab's nccl-tests simulator
through the lab's mpirun (the launcher's real argv; hostfile from the hosts), on a fixture sysfs tree and a fabric
map; nccl_verdict judges the runs against recorded reference curves and the per-NIC floor, bisects, and
fabric_report writes the same five files as the fabric validation with the checks in them."""

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import plan, verdict
from ansible_collections.ibtune.fabric.plugins.modules import fabric_report, nccl_test
from tests.conftest import ROOT
from tests.lab.sysfs_tree import build_tree
from tests.unit.modules_harness import run_module

LAB = ROOT / "tests" / "lab"
# the lab mpirun runs every rank here; ranks named for these hosts (IBTUNE_LAB_NODE) speak for them
HOSTS = ["localhost", "127.0.0.1", "127.0.0.2", "127.0.0.3"]


@pytest.fixture
def lab(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for collective in ("all_reduce", "alltoall"):
        shutil.copy(LAB / "nccl_tests_sim.py", bindir / ("%s_perf" % collective))
    shutil.copy(LAB / "mpirun_sim.py", bindir / "mpirun")
    for path in bindir.iterdir():
        path.chmod(0o755)
    build_tree(str(tmp_path / "sys"), str(LAB / "fabric" / "nodes" / "default.json"))
    fabric = tmp_path / "fabric.json"
    monkeypatch.setenv("IBTUNE_LAB_SYSFS", str(tmp_path / "sys"))
    monkeypatch.setenv("IBTUNE_LAB_FABRIC", str(fabric))

    def run(run_spec, nccl=None):
        fabric.write_text(json.dumps({"nccl": nccl or {}}))
        result = run_module(
            nccl_test,
            {
                "tests_dir": str(bindir),
                "launch": "mpirun",
                "launch_executable": str(bindir / "mpirun"),
                "hosts": run_spec["hosts"],
                "ranks_per_node": run_spec["ranks_per_node"],
                "collectives": run_spec["collectives"],
                "min_bytes": "64M",
                "max_bytes": "4G",
                "env": dict(run_spec["env"], IBTUNE_LAB_SYSFS=str(tmp_path / "sys"), IBTUNE_LAB_FABRIC=str(fabric)),
                "expect": run_spec["expect"],
                "hostfile": str(tmp_path / ("hostfile-%s" % run_spec["id"].replace("/", "_").replace(":", "_"))),
            },
        )
        return dict(result, id=run_spec["id"])

    return run


def plan_of(plans, collectives=("all_reduce",)):
    ports = dict((h, ["mlx5_0:1", "mlx5_1:1"]) for h in HOSTS)
    return plan.build_runs(HOSTS, ports, dict((h, 2) for h in HOSTS), plans, list(collectives))


def round_of(lab, runs, nccl=None, **params):
    results = [lab(r, nccl) for r in runs]
    return results, verdict.verdict(dict({"runs": runs, "results": results, "rate_gbps": 400}, **params))


def test_per_rail_pairs_pass_at_47_5_gbs_and_record_their_curve(lab):
    runs = plan_of(["per_rail"])["runs"]
    results, out = round_of(lab, runs)
    assert all(r["passed"] for r in results), [r["msg"] for r in results]
    assert results[0]["cmd"][:9] == [results[0]["cmd"][0], "--allow-run-as-root", "--hostfile", results[0]["cmd"][3],
                                     "-np", "2", "--map-by", "ppr:1:node", "--bind-to"]  # fmt: skip
    assert results[0]["max_size_busbw"] == pytest.approx(47.5, abs=0.1)
    assert results[0]["ib_devices"] == ["mlx5_0:1/IB"]
    assert out["passed"], verdict.message(out)
    assert len(out["records"]) == 1  # every rail and pair shares one curve key (per_rail, 2 x 1)
    nic = [c for c in out["checks"] if c["kind"] == "nic"][0]
    assert nic["message"] == "busbw 47.5 GB/s at 4 GiB meets the expected 43.2 GB/s (1 NIC per node x 43.2 GB/s)"


def test_slow_node_is_found_by_bisection_of_the_allocation(lab):
    healthy = plan_of(["allocation"])["runs"]
    _results, first = round_of(lab, healthy)
    baseline = {
        "kind": "ibtune-nccl-curves",
        "version": 1,
        "curves": dict((k, {"points": v}) for k, v in first["records"].items()),
    }
    slow = {"slow_nodes": {HOSTS[2]: 0.5}}
    _results, out = round_of(lab, healthy, slow, baseline=baseline)
    assert not out["passed"]
    curve = [c for c in out["checks"] if c["kind"] == "curve"][0]
    assert not curve["passed"] and curve["figures"]["ratio"] == pytest.approx(0.5, abs=0.01)
    rounds = 0
    while not out["done"]:
        _results, out = round_of(lab, out["pending"], slow, baseline=baseline, bisections=out["bisections"])
        rounds += 1
    bisect = [c for c in out["checks"] if c["kind"] == "bisect"][0]
    assert bisect["culprits"][0]["host"] == HOSTS[2] and bisect["culprits"][0]["failure_kind"] == "nccl_node"
    assert bisect["message"].startswith("slow node %s: it fails with known-good" % HOSTS[2])
    assert rounds == 2


def test_socket_fallback_fails_the_transport_check_naming_the_host(lab):
    runs = plan_of(["per_rail"])["runs"][:1]
    results, out = round_of(lab, runs, {"socket_fallback": [HOSTS[1]]})
    assert results[0]["failed"]
    assert [p["host"] for p in results[0]["transport_problems"]] == [HOSTS[1]]
    assert "used Socket (NET/IB : No device found), the plan wants IB" in results[0]["msg"]
    transport = [c for c in out["checks"] if c["kind"] == "transport"][0]
    assert transport["culprits"] == [
        {"host": HOSTS[1], "reason": results[0]["transport_problems"][0]["message"], "failure_kind": "nccl_transport"}
    ]
    assert out["pending"] == []  # the culprit is named: nothing to bisect


def test_the_verdict_goes_into_the_fabric_report_files(lab, tmp_path):
    runs = plan_of(["per_rail"])["runs"][:2]
    _results, out = round_of(lab, runs, {"socket_fallback": [HOSTS[1]]})
    dest = tmp_path / "report"
    result = run_module(fabric_report, {"results": [], "checks": out["checks"], "dest": str(dest), "min_hosts": 1})
    assert result.failed and result["msg"].startswith("Fabric validation failed: NCCL did not do what the plan")
    report = json.loads((dest / "report.json").read_text())
    assert report["failed_hosts"][0]["host"] == HOSTS[1]
    assert report["failed_hosts"][0]["failure_kind"] == "nccl_transport"
    # localhost's only test failed for its partner's fallback: neither passed nor failed, and not drained
    assert sorted(report["passed_hosts"]) == sorted(HOSTS[2:])
    assert HOSTS[0] not in [h["host"] for h in report["failed_hosts"]]
    suite = ET.fromstring((dest / "junit.xml").read_text().split("?>", 1)[1]).find("testsuite[@name='nccl']")
    assert int(suite.get("failures")) == 1
    assert 'ibtune_host_passed{host="%s"} 0' % HOSTS[1] in (dest / "ibtune.prom").read_text()
    assert 'ibtune_check_passed{suite="nccl"' in (dest / "ibtune.prom").read_text()
    assert "## NCCL checks: 1 of" in (dest / "summary.md").read_text()
    assert '<table id="checks">' in (dest / "report.html").read_text()
