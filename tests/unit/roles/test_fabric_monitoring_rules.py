"""The shipped rules file is the role's rules template rendered with the role defaults.

promtool tests (tests/promtool/) exercise roles/fabric_monitoring/files/prometheus/ibtune.rules.yml; the role
installs the template rendered with the operator's thresholds. These tests keep the two from drifting and
check that non-default thresholds really land in the expressions.

Regenerate the static file after editing the template or the defaults:
    .venv/bin/python tests/unit/roles/test_fabric_monitoring_rules.py --write
"""

import ast
import re
import sys
from pathlib import Path

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "fabric_monitoring"
TEMPLATE = ROLE / "templates" / "ibtune.rules.yml.j2"
STATIC = ROLE / "files" / "prometheus" / "ibtune.rules.yml"
DEFAULTS = ROLE / "defaults" / "main.yml"

_HEADER = re.compile(r"^#jinja2:(?P<opts>.*)\n")


def render(overrides=None):
    """Render the template the way ansible.builtin.template does: honour its '#jinja2:' header line."""
    text = TEMPLATE.read_text(encoding="utf-8")
    # ansible.builtin.template renders with trim_blocks=True; the static file keeps its final newline.
    env_opts = {"keep_trailing_newline": True, "trim_blocks": True, "undefined": jinja2.StrictUndefined}
    header = _HEADER.match(text)
    if header:
        for item in header.group("opts").split(","):
            key, value = item.split(":", 1)
            env_opts[key.strip()] = ast.literal_eval(value.strip())
        text = text[header.end() :]
    env = jinja2.Environment(**env_opts)
    variables = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    variables.update(overrides or {})
    return env.from_string(text).render(**variables)


def _rules(text):
    groups = yaml.safe_load(text)["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


def test_static_file_is_the_template_rendered_with_defaults():
    assert STATIC.read_text(encoding="utf-8") == render(), (
        "files/prometheus/ibtune.rules.yml is out of date: run %s --write" % Path(__file__).relative_to(ROOT)
    )


def test_every_alert_has_severity_summary_description():
    rules = _rules(render())
    assert len(rules) >= 25
    for name, rule in rules.items():
        assert rule["labels"]["severity"] in ("critical", "warning"), name
        assert rule["annotations"]["summary"].strip(), name
        # the description tells the operator what to check: a real sentence, not a placeholder
        assert len(rule["annotations"]["description"].split()) >= 12, name
        assert "<<" not in rule["expr"] and ">>" not in rule["expr"], name


def test_thresholds_reach_the_expressions():
    rules = _rules(
        render(
            {
                "fabric_monitoring_alert_validation_max_age_seconds": 3600,
                "fabric_monitoring_alert_error_window": "30m",
                "fabric_monitoring_alert_congestion_fraction": 0.2,
                "fabric_monitoring_alert_cnp_per_second": 123,
                "fabric_monitoring_alert_port_for": "2m",
            }
        )
    )
    assert rules["FabricValidationStale"]["expr"] == "time() - ibtune_validation_timestamp_seconds > 3600"
    assert "[30m]" in rules["FabricSymbolErrors"]["expr"]
    assert "in 30m" in rules["FabricSymbolErrors"]["annotations"]["summary"]
    assert rules["FabricPortCongested"]["expr"].endswith("> 0.2")
    assert rules["RoCECNPStorm"]["expr"].endswith("> 123")
    assert rules["FabricPortNotActive"]["for"] == "2m"


def test_symbol_error_and_link_downed_have_their_own_thresholds_and_error_alerts_a_for():
    rules = _rules(
        render(
            {
                "fabric_monitoring_alert_symbol_error_increase": 20,
                "fabric_monitoring_alert_link_downed_increase": 1,
                "fabric_monitoring_alert_physical_error_increase": 3,
                "fabric_monitoring_alert_error_for": "4m",
            }
        )
    )
    assert rules["FabricSymbolErrors"]["expr"].endswith("> 20")
    assert rules["FabricLinkDowned"]["expr"].endswith("> 1")
    assert rules["FabricLinkErrorRecovery"]["expr"].endswith("> 3")
    errors = [n for n, r in rules.items() if r["expr"].startswith("increase(node_infiniband_")]
    assert len(errors) == 8
    assert all(rules[n].get("for") == "4m" for n in errors), errors


def test_saturated_alert_covers_every_width_counters_py_knows():
    from ansible_collections.ibtune.fabric.plugins.module_utils.host.counters import COUNTER_WIDTHS

    expr = _rules(render())["FabricErrorCounterSaturated"]["expr"]
    watched = {counter: int(value) for value, counter in re.findall(r'>= (\d+), "counter", "(\w+)"', expr)}
    # every counter the rule watches is pinned at 2**width - 1 of its sysfs width (module_utils/host/counters.py)
    assert watched == {c: (1 << COUNTER_WIDTHS[c]) - 1 for c in watched}
    assert watched["port_xmit_wait"] == 4294967295 and len(watched) == 9


def test_ignore_devices_filters_every_port_selector():
    text = render({"fabric_monitoring_alert_ignore_devices": "mlx5_bond_.*"})
    rules = _rules(text)
    selectors = re.findall(r"node_infiniband_\w+(\{[^}]*\})?", "\n".join(r["expr"] for r in rules.values()))
    assert selectors, "no node_infiniband selectors found"
    for name in ("FabricPortNotActive", "FabricSymbolErrors", "FabricPortCongested", "RoCECNPStorm"):
        assert '{device!~"mlx5_bond_.*"}' in rules[name]["expr"], name
    # with the default (empty) pattern no selector is added at all
    assert "device!~" not in render()


def test_promtool_tests_cover_every_alert_firing_and_not_firing():
    rules = _rules(STATIC.read_text(encoding="utf-8"))
    firing, quiet = set(), set()
    for path in sorted((ROOT / "tests" / "promtool").glob("*_test.yml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if doc["rule_files"] != ["../../roles/fabric_monitoring/files/prometheus/ibtune.rules.yml"]:
            continue  # another rule file's tests (phy.rules.yml: tests/unit/roles/test_fabric_monitoring_phy.py)
        for test in doc["tests"]:
            for check in test.get("alert_rule_test", []):
                assert check["alertname"] in rules, "%s tests an alert the rules do not define" % check["alertname"]
                (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    assert sorted(set(rules) - firing) == [], "alerts without a firing test"
    assert sorted(set(rules) - quiet) == [], "alerts without a not-firing test"


@pytest.mark.parametrize("missing", ["fabric_monitoring_alert_port_for", "fabric_monitoring_alert_cnp_per_second"])
def test_template_fails_on_missing_variable(missing):
    env_defaults = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    assert missing in env_defaults
    with pytest.raises(jinja2.UndefinedError):
        text = TEMPLATE.read_text(encoding="utf-8")
        text = text[_HEADER.match(text).end() :]
        env = jinja2.Environment(variable_start_string="<<", variable_end_string=">>", undefined=jinja2.StrictUndefined)
        env_defaults.pop(missing)
        env.from_string(text).render(**env_defaults)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        STATIC.write_text(render(), encoding="utf-8")
        print("wrote %s" % STATIC)
    else:
        sys.exit("usage: %s --write" % sys.argv[0])
