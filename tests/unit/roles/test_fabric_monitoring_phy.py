"""fabric_monitoring's PHY part: the dashboard and the rules query only what phy/textfile.py writes, every query
parses (promtool), a row per cable, and the task file installs every module the exporter imports."""

import json
import re
import subprocess
from pathlib import Path

import yaml

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import textfile

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "fabric_monitoring"
DASHBOARD = json.loads((ROLE / "files" / "grafana" / "ibtune-phy.json").read_text())
RULES = yaml.safe_load((ROLE / "files" / "prometheus" / "phy.rules.yml").read_text())
METRIC_RE = re.compile(r"\b(ibtune_phy_[a-z0-9_]+)\b")


def queries():
    return [t["expr"] for p in DASHBOARD["panels"] for t in p.get("targets") or []]


def test_every_metric_queried_is_one_the_exporter_writes():
    used = set()
    for text in queries() + [r["expr"] for g in RULES["groups"] for r in g["rules"]]:
        used |= set(METRIC_RE.findall(text))
    assert used and used <= set(textfile.HELP), sorted(used - set(textfile.HELP))


def test_a_row_per_cable_and_every_query_parses(tmp_path):
    row = DASHBOARD["panels"][0]
    assert row["type"] == "row" and row["repeat"] == "serial" and "$serial" in row["title"]
    variable = [v for v in DASHBOARD["templating"]["list"] if v["name"] == "serial"][0]
    assert variable["query"]["query"] == "label_values(ibtune_phy_module_info, serial)"
    assert all('serial=~"$serial"' in q for q in queries())
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "q%d" % i, "expr": q.replace("$serial", "MT24X")} for i, q in enumerate(queries())]}]}  # fmt: skip
    path = tmp_path / "dashboard.rules.yml"
    path.write_text(yaml.safe_dump(rules))
    check = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_task_file_installs_every_module_the_exporter_imports():
    tasks = yaml.safe_load((ROLE / "tasks" / "phy_textfile.yml").read_text())
    listed = set(tasks[0]["vars"]["__fabric_monitoring_phy_modules"])
    pattern = re.compile(r"ansible_collections\.ibtune\.fabric\.plugins\.module_utils\.(\w+)(?:\.(\w+))? import (\w+)")
    needed, todo = set(), ["phy/textfile"]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        text = (ROOT / "plugins" / "module_utils" / ("%s.py" % name)).read_text()
        todo.extend("%s/%s" % (pkg, mod or first) for pkg, mod, first in pattern.findall(text))
    packages = {n.split("/")[0] for n in needed}
    assert needed | {"%s/__init__" % p for p in packages} <= listed, sorted(needed - listed)


def test_promtool_tests_cover_every_phy_alert_firing_and_not_firing():
    rules = {r["alert"] for g in RULES["groups"] for r in g["rules"]}
    doc = yaml.safe_load((ROOT / "tests" / "promtool" / "phy_test.yml").read_text())
    assert doc["rule_files"] == ["../../roles/fabric_monitoring/files/prometheus/phy.rules.yml"]
    firing, quiet = set(), set()
    for test in doc["tests"]:
        for check in test["alert_rule_test"]:
            assert check["alertname"] in rules
            (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    assert sorted(rules - firing) == [] and sorted(rules - quiet) == []
