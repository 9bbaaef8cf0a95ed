"""The Grafana dashboard and the alert rules only query metrics that exist.

Where the names come from, for real:
- node_infiniband_*: the real node_exporter (Debian's prometheus-node-exporter) run against a fixture sysfs tree
  (tests/lab/sysfs_tree.py), its /metrics read over loopback;
- node_infiniband_* hw_counter metrics that only node_exporter >= 1.11.0 exports (Debian 12 ships 1.5.0): the
  list below, copied from node_exporter's collector/infiniband_linux.go (prometheus/node_exporter#2827);
- ibtune_* from fabric_report and nccl_check: docs/dev/CONTRACTS.md, the contract between the parts;
- ibtune_* from this role: the real output of files/ibtune-hw-counters.py and templates/ibtune_monitoring.prom.j2,
  both served by that same node_exporter through its textfile collector.
Every dashboard query is also parsed by promtool (as a recording rule), with Grafana's variables substituted.
"""

import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.lab.sysfs_tree import build_tree

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "fabric_monitoring"
DASHBOARD = ROLE / "files" / "grafana" / "ibtune-fabric.json"
RULES = ROLE / "files" / "prometheus" / "ibtune.rules.yml"
CONTRACTS = ROOT / "docs" / "dev" / "CONTRACTS.md"
MATRIX_TITLE = "Latest pair results: host x host matrix (% of threshold, worst selected rail)"
HISTORY_TITLE = "Pair results per validation run (pass / FAIL per link)"

# node_exporter >= 1.11.0 only (hw_counters); the names its collector gives the counters the rules use.
NODE_EXPORTER_1_11_HW = {
    "node_infiniband_np_cnp_packets_sent_total",
    "node_infiniband_np_ecn_marked_roce_packets_received_total",
    "node_infiniband_rp_cnp_packets_handled_total",
    "node_infiniband_rp_cnp_ignored_packets_received_total",
    "node_infiniband_out_of_sequence_packets_received_total",
    "node_infiniband_local_ack_timeout_errors_total",
}
PROMETHEUS_BUILTIN = {"ALERTS"}
METRIC_RE = re.compile(r"\b((?:node|ibtune)_[a-zA-Z0-9_]+|ALERTS)\b")

SPEC = {
    "devices": {
        "mlx5_0": {"ports": {1: {"hw_counters": {"out_of_sequence": 3, "np_cnp_sent": 1}}}},
        "mlx5_1": {"ports": {1: {"link_layer": "Ethernet", "state": "1: DOWN", "phys_state": "3: Disabled"}}},
    }
}


def _dashboard():
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def _panels(dash):
    for panel in dash["panels"]:
        yield panel
        yield from panel.get("panels", [])


def _exprs(dash):
    return [(p["title"], t["expr"]) for p in _panels(dash) for t in p.get("targets", [])]


def _substitute(expr):
    """The dashboard's variables as their "All" value (and Grafana's rate interval)."""
    return expr.replace("$__rate_interval", "5m").replace("$instance", ".*").replace("$rail", ".*")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served_metrics(tmp_path_factory):
    """Names the real node_exporter serves for a fixture tree plus this role's textfiles."""
    binary = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if binary is None:
        pytest.skip("node_exporter (Debian package prometheus-node-exporter) is not installed")
    base = tmp_path_factory.mktemp("ne")
    sysfs, textfile = base / "sys", base / "textfile"
    textfile.mkdir()
    build_tree(str(sysfs), SPEC)
    script = ROLE / "files" / "ibtune-hw-counters.py"
    out = textfile / "ibtune_hw_counters.prom"
    subprocess.run([sys.executable, str(script), "--sysfs-root", str(sysfs), "--output", str(out)], check=True)
    # the role's expected-rate file, rendered from its template the way the role does
    import jinja2

    template = jinja2.Environment(trim_blocks=True).from_string(
        (ROLE / "templates" / "ibtune_monitoring.prom.j2").read_text(encoding="utf-8")
    )
    (textfile / "ibtune_monitoring.prom").write_text(template.render(__fabric_monitoring_expected={"mlx5_0": 400}))
    port = _free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--web.listen-address=127.0.0.1:%d" % port,
            "--path.sysfs=%s" % sysfs,
            "--collector.disable-defaults",
            "--collector.infiniband",
            "--collector.textfile",
            "--collector.textfile.directory=%s" % textfile,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        body = None
        for _unused in range(100):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as resp:
                    body = resp.read().decode()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("node_exporter exited: %s" % proc.stderr.read().decode())
                time.sleep(0.1)
        assert body is not None, "node_exporter did not answer on 127.0.0.1:%d" % port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "node_textfile_scrape_error 0" in body, "node_exporter could not parse the role's textfiles"
    names = {line.split("{")[0].split(" ")[0] for line in body.splitlines() if line and not line.startswith("#")}
    return names, body


def contract_names():
    return set(re.findall(r"\bibtune_[a-z0-9_]+\b", CONTRACTS.read_text(encoding="utf-8")))


def test_node_exporter_serves_the_fixture_ports_and_role_textfiles(served_metrics):
    names, body = served_metrics
    assert 'node_infiniband_state_id{device="mlx5_0",port="1"} 4' in body
    assert 'node_infiniband_state_id{device="mlx5_1",port="1"} 1' in body
    assert 'node_infiniband_rate_bytes_per_second{device="mlx5_0",port="1"} 5e+10' in body
    assert 'ibtune_rdma_hw_events_total{counter="out_of_sequence",device="mlx5_0",port="1"} 3' in body
    assert 'ibtune_port_expected_rate_gbps{device="mlx5_0"} 400' in body
    # the metrics the physical-error alerts are built on really come from node_exporter
    for name in (
        "node_infiniband_symbol_error_total",
        "node_infiniband_link_downed_total",
        "node_infiniband_port_transmit_wait_total",
    ):
        assert name in names


@pytest.mark.parametrize("source", ["dashboard", "rules"])
def test_every_queried_metric_exists(served_metrics, source):
    names, _unused = served_metrics
    known = names | NODE_EXPORTER_1_11_HW | PROMETHEUS_BUILTIN | contract_names()
    if source == "dashboard":
        exprs = _exprs(_dashboard())
        for var in _dashboard()["templating"]["list"]:
            if var.get("definition"):
                exprs.append((var["name"], var["definition"]))
    else:
        doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
        rules = [r for g in doc["groups"] for r in g["rules"]]
        exprs = [(r.get("alert") or r["record"], r["expr"]) for r in rules]
        known |= {r["record"] for r in rules if "record" in r}  # recording rules make the series they name
    assert exprs
    unknown = sorted({(title, m) for title, expr in exprs for m in METRIC_RE.findall(expr) if m not in known})
    assert unknown == [], "queries of metrics nobody exports: %s" % unknown


def test_dashboard_shape():
    dash = _dashboard()
    assert dash["schemaVersion"] == 39
    assert dash["uid"] == "ibtune-fabric"
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    ids = [p["id"] for p in _panels(dash)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    titles = {p["title"] for p in _panels(dash)}
    for wanted in (
        "Port state",
        "Link rate vs expected (Gb/s)",
        "Physical error counters (increase per interval)",
        "Time waiting for credits (port_xmit_wait)",
        "Validation bandwidth per link (Gb/s)",
        "NCCL transport, fallback and WARNs",
        MATRIX_TITLE,
        HISTORY_TITLE,
    ):
        assert wanted in titles
    for panel in _panels(dash):
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]


def test_panels_do_not_overlap():
    cells = {}
    for panel in _panels(_dashboard()):
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, "%s overlaps %s" % (panel["title"], cells[(x, y)])
                cells[(x, y)] = panel["title"]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_every_dashboard_query_parses(tmp_path):
    rules = []
    for i, (title, expr) in enumerate(_exprs(_dashboard())):
        expr = _substitute(expr)
        assert "$" not in expr, "unsubstituted Grafana variable in %r: %s" % (title, expr)
        rules.append({"record": "ibtune:dashboard_query_%d" % i, "expr": expr})
    path = tmp_path / "dashboard.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    check = subprocess.run(["promtool", "check", "rules", str(path)], check=False, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_provider_template_renders_a_file_provider_for_the_dashboard_dir():
    import jinja2

    env = jinja2.Environment(trim_blocks=True)
    env.filters["to_json"] = json.dumps
    text = env.from_string((ROLE / "templates" / "grafana-dashboards.yml.j2").read_text(encoding="utf-8")).render(
        ansible_managed="managed",
        fabric_monitoring_grafana_folder="Fabric: RDMA",
        fabric_monitoring_grafana_dashboards_dir="/srv/grafana dashboards/ibtune",
    )
    doc = yaml.safe_load(text)
    assert doc["apiVersion"] == 1
    (provider,) = doc["providers"]
    assert provider["type"] == "file"
    assert provider["folder"] == "Fabric: RDMA"
    assert provider["options"]["path"] == "/srv/grafana dashboards/ibtune"


# ---------------------------------------------------------------- the pair-results panels on real ibtune.prom


def _panel(title):
    (panel,) = [p for p in _panels(_dashboard()) if p["title"] == title]
    return panel


def test_pair_matrix_panel_is_a_server_by_client_matrix_with_the_gate_at_100_percent():
    panel = _panel(MATRIX_TITLE)
    (target,) = panel["targets"]
    assert target["instant"] is True and target["format"] == "table"
    (transform,) = panel["transformations"]
    assert transform["id"] == "groupingToMatrix"
    assert (transform["options"]["rowField"], transform["options"]["columnField"]) == ("server", "client")
    assert transform["options"]["valueField"] == "Value"
    defaults = panel["fieldConfig"]["defaults"]
    assert defaults["unit"] == "percentunit"  # the cell text reads 50%: failing is not told by colour alone
    steps = defaults["thresholds"]["steps"]
    assert steps[0]["color"] == "red" and steps[0]["value"] is None and steps[1]["value"] == 1
    rail = {v["name"]: v for v in _dashboard()["templating"]["list"]}["rail"]
    assert rail["includeAll"] and rail["allValue"] == ".*"
    assert "server_device" in rail["definition"]
    history = _panel(HISTORY_TITLE)
    assert history["type"] == "status-history"
    mapped = history["fieldConfig"]["defaults"]["mappings"][0]["options"]
    assert (mapped["0"]["text"], mapped["1"]["text"]) == ("FAIL", "pass")


def _faulty_prom():
    """ibtune.prom of a lab-shaped faulty run (4 hosts, 2 rails, node2/mlx5_0 <-> node3/mlx5_0 at 180 Gb/s),
    written by the real report code, and the report it came from."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds

    hosts = ["ibt-lab-node%d" % i for i in range(1, 5)]

    def measure(server, client, round_, pass_):
        out = []
        for dev in ("mlx5_0", "mlx5_1"):
            bw = 180.0 if {server, client} == {"ibt-lab-node2", "ibt-lab-node3"} and dev == "mlx5_0" else 392.0
            out.append({"server": server, "server_device": dev, "client": client, "client_device": dev,
                        "test": "write", "bw_avg_gbps": bw, "threshold_gbps": 360.0, "passed": bw >= 360.0,
                        "failure": None, "round": round_, "pass": pass_})  # fmt: skip
        return out

    results = [r for i, rnd in enumerate(pair_rounds(hosts)) for a, b in rnd for r in measure(a, b, i, 1)]
    results += [r for i, rnd in enumerate(retest_rounds(results, hosts)) for a, b in rnd for r in measure(a, b, i, 2)]
    report = R.build_report(results, run_id="dash", now=1796119200.0)
    return report, RR.to_prometheus(report)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_pair_panels_evaluated_by_prometheus_on_a_real_report(tmp_path):
    """promtool evaluates the two panel queries on the samples fabric_report writes: the matrix holds the
    worst rail of every measured host pair as a share of its threshold, the history one 0/1 per link."""
    report, prom = _faulty_prom()
    series = []
    for line in prom.splitlines():
        if line.startswith("ibtune_link_") and not line.startswith("#"):
            name_labels, value = line.rsplit(" ", 1)
            series.append({"series": name_labels, "values": "%sx3" % value})
    # expected from the report, not from the file: the last pass of each label set, worst rail per pair
    latest = {}
    for res in sorted(report["results"], key=lambda r: (r["pass"], r["round"])):
        latest[(res["server"], res["server_device"], res["client"], res["client_device"], res["test"])] = res
    worst = {}
    for (server, _sdev, client, _cdev, _test), res in latest.items():
        ratio = res["bw_avg_gbps"] / res["threshold_gbps"]
        worst[(server, client)] = min(ratio, worst.get((server, client), ratio))
    assert worst[("ibt-lab-node2", "ibt-lab-node3")] == 0.5
    assert sorted(v for k, v in worst.items() if k != ("ibt-lab-node2", "ibt-lab-node3")) == [392.0 / 360.0] * (
        len(worst) - 1
    )
    matrix = [
        {"labels": '{client="%s",server="%s"}' % (client, server), "value": value}
        for (server, client), value in sorted(worst.items())
    ]
    passed = [
        {
            "labels": 'ibtune_link_passed{client="%s",client_device="%s",server="%s",server_device="%s",test="%s"}'
            % (key[2], key[3], key[0], key[1], key[4]),
            "value": 1 if res["passed"] else 0,
        }
        for key, res in sorted(latest.items())
    ]
    assert [p["value"] for p in passed].count(0) == 1
    (rules := tmp_path / "empty.rules.yml").write_text("groups: []\n")
    test = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": _substitute(_panel(MATRIX_TITLE)["targets"][0]["expr"]),
                        "eval_time": "2m",
                        "exp_samples": matrix,
                    },
                    {
                        "expr": _substitute(_panel(HISTORY_TITLE)["targets"][0]["expr"]),
                        "eval_time": "2m",
                        "exp_samples": passed,
                    },
                ],  # fmt: skip
            }
        ],
    }
    path = tmp_path / "panels_test.yml"
    path.write_text(yaml.safe_dump(test))
    check = subprocess.run(["promtool", "test", "rules", str(path)], check=False, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
