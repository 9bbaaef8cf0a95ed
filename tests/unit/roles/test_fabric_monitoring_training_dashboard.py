"""The training dashboard (roles/fabric_monitoring/files/grafana/ibtune-training.json): every query parses and asks
for metrics that exist, and the correlation panel, run by a real Prometheus (promtool) over what the training
exporter wrote every 2 s on the lent H200 while a job ran collectives and a copy loop filled PCIe, shows both.

Metric names come from: the exporter's real output (tests/fixtures/monitoring/exporter-h200), the real
node_exporter (test_fabric_monitoring_dashboard's served_metrics), the recording rules, and CONTRACTS.md.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import samples
from tests.unit.roles.test_fabric_monitoring_dashboard import contract_names, served_metrics  # noqa: F401 pylint: disable=unused-import

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "roles" / "fabric_monitoring" / "files" / "grafana" / "ibtune-training.json"
RULES = ROOT / "roles" / "fabric_monitoring" / "files" / "prometheus" / "ibtune.rules.yml"
LIVE = ROOT / "tests" / "fixtures" / "monitoring" / "exporter-h200" / "with-pcie-load"
EXPORTER = ROOT / "tests" / "fixtures" / "monitoring" / "exporter-h200"
METRIC_RE = re.compile(r"\b((?:node|ibtune)_[a-zA-Z0-9_]+|ibtune:[a-z0-9_:]+|DCGM_[A-Z0-9_]+)\b")
CORRELATION = "Correlation: NCCL time, PCIe saturation, link errors, socket fallback, NCCL WARNs"
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian prometheus) missing")


def _dashboard():
    return json.loads(DASHBOARD.read_text())


def _panels():
    return [p for p in _dashboard()["panels"] if p["type"] != "row"]


def _substitute(expr, instance=".*", job_id=".*"):
    return expr.replace("$__rate_interval", "10s").replace("$instance", instance).replace("$job_id", job_id)


def _exporter_names():
    names = set()
    for path in EXPORTER.rglob("*.prom"):
        names |= {n for n, _lab, _v in samples(path.read_text())}
    return names


def _recorded():
    doc = yaml.safe_load(RULES.read_text())
    return {r["record"] for g in doc["groups"] for r in g["rules"] if "record" in r}


def test_every_query_asks_for_a_metric_that_exists(served_metrics):  # noqa: F811
    node_names, _body = served_metrics
    known = node_names | _exporter_names() | _recorded() | contract_names()
    exprs = [(p["title"], t["expr"]) for p in _panels() for t in p["targets"]]
    exprs += [(v["name"], v["definition"]) for v in _dashboard()["templating"]["list"] if v.get("definition")]
    unknown = sorted({(title, m) for title, e in exprs for m in METRIC_RE.findall(e) if m not in known})
    assert unknown == []
    # the exporter's own names are what docs/dev/CONTRACTS.md promises
    assert {n for n in _exporter_names() if n.startswith("ibtune_")} <= contract_names()


def test_shape_variables_and_layout():
    dash = _dashboard()
    assert dash["uid"] == "ibtune-training" and dash["schemaVersion"] == 39
    names = [v["name"] for v in dash["templating"]["list"]]
    assert names == ["DS_PROMETHEUS", "instance", "job_id"]  # a board per node and per job
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    cells = {}
    for panel in dash["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, "%s overlaps %s" % (panel["title"], cells[(x, y)])
                cells[(x, y)] = panel["title"]
    for panel in _panels():
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}"
        assert all(t["datasource"]["uid"] == "${DS_PROMETHEUS}" for t in panel["targets"])
        queries = " ".join(t["expr"] for t in panel["targets"])
        assert "$instance" in queries, "%s ignores the node chosen" % panel["title"]


def test_the_correlation_panel_holds_the_five_signals_of_one_node():
    (panel,) = [p for p in _panels() if p["title"] == CORRELATION]
    exprs = [t["expr"] for t in panel["targets"]]
    wanted = (
        "ibtune_nccl_collective_seconds_total",
        "ibtune:pcie_saturation_ratio",
        "node_infiniband_symbol_error_total",
        "ibtune_nccl_fallback",
        "ibtune_nccl_warnings",
    )
    for name in wanted:
        assert any(name in e for e in exprs), name
    assert all(e.startswith(("sum by(instance)", "max by(instance)")) for e in exprs)  # one line per node
    assert panel["gridPos"]["w"] == 24 and panel["gridPos"]["y"] <= 1


@needs_promtool
def test_every_query_parses(tmp_path):
    rules = [
        {"record": "ibtune:training_dashboard_query_%d" % i, "expr": _substitute(t["expr"])}
        for i, t in enumerate(t for p in _panels() for t in p["targets"])
    ]
    path = tmp_path / "q.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]}))
    check = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def _live_series():
    """The exporter's 2 s snapshots of the H200 run as promtool input series (instance h200:9100)."""
    series = {}
    for kind in ("ibtune_nccl_inspector", "ibtune_pcie"):
        files = sorted(LIVE.glob(kind + "-*.prom"))
        for index, path in enumerate(files):
            for name, labels, value in samples(path.read_text()):
                labels = dict(labels, instance="h200:9100", job="node")
                key = name + "{" + ",".join('%s="%s"' % kv for kv in sorted(labels.items())) + "}"
                series.setdefault(key, ["_"] * len(files))[index] = value
    return [{"series": key, "values": " ".join(values)} for key, values in sorted(series.items())]


@needs_promtool
def test_the_correlation_panel_on_the_real_run_shows_collectives_and_pcie_together(tmp_path):
    (panel,) = [p for p in _panels() if p["title"] == CORRELATION]
    nccl, pcie = (_substitute(panel["targets"][i]["expr"], "h200:9100", "4244") for i in (0, 1))

    # t=0 is the exporter's first window. The copy loop filled PCIe from ~14 s to ~22 s. The job alternates a 4-byte
    # Broadcast and a 64 MiB AllReduce on one communicator, so at 1 s the 2.28 Inspector almost always samples the
    # Broadcast: the AllReduce time (19 s) lands when its next sample does, at 20 s (docs/fabric_monitoring.md).
    def both(time, nccl_high, pcie_high):
        return [
            {
                "expr": "(%s) > bool 1" % nccl,
                "eval_time": time,
                "exp_samples": [{"labels": '{instance="h200:9100"}', "value": int(nccl_high)}],
            },
            {
                "expr": "(%s) > bool 0.9" % pcie,
                "eval_time": time,
                "exp_samples": [{"labels": '{instance="h200:9100"}', "value": int(pcie_high)}],
            },
        ]

    tests = [
        {
            "interval": "2s",
            "input_series": _live_series(),
            "promql_expr_test": both("8s", False, False) + both("16s", False, True) + both("20s", True, True),
        }
    ]
    (tmp_path / "t.yml").write_text(
        yaml.safe_dump({"rule_files": [str(RULES)], "evaluation_interval": "2s", "tests": tests})
    )
    run = subprocess.run(
        ["promtool", "test", "rules", "t.yml"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
