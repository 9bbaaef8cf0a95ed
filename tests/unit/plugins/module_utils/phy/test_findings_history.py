"""The PHY verdict into a report, and the per-cable history that sees a trend before a threshold."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import findings, history


def port(host, device, lanes, serial="S1", temperature=48.0, before=None):
    after = {
        "link": {"state": "Active", "speed_gbps": 400.0, "lanes": 4, "speed": "IB-NDR"},
        "counters": {"raw_ber_lanes": lanes, "effective_ber": 0.0, "time_since_clear_min": 60.0},
        "module": {"serial": serial, "temperature_c": temperature, "temperature_range": [-5.0, 75.0], "faults": {}},
    }
    return {"end": {"kind": "host", "host": host, "device": device, "port": 1}, "before": before, "after": after}


HEALTHY = [2e-10, 6e-10, 3e-10, 4e-10]


def fabric(extra=None):
    ports = [port("n%d" % i, "mlx5_0", HEALTHY, "S%d" % i) for i in range(1, 6)]
    return ports + (extra or [])


def report():
    return {"passed": True, "totals": {}}


def test_warnings_are_listed_and_do_not_fail_the_report():
    verdict = findings.evaluate(fabric([port("n9", "mlx5_1", [2e-10, 6e-10, 3e-9 * 100, 4e-10], "S9", 70.0)]))
    checks = [(f["check"], f["severity"]) for f in verdict["findings"]]
    assert checks == [("raw_ber_outlier", "warning"), ("temperature", "warning")]
    out = findings.apply(report(), verdict)
    assert out["passed"] and out["totals"] == {"phy_errors": 0, "phy_warnings": 2}
    assert out["phy"]["ports"] == 6 and [f["host"] for f in out["phy_findings"]] == ["n9", "n9"]


def test_an_error_fails_the_report_and_is_in_its_failure_messages():
    verdict = findings.evaluate(fabric([port("n9", "mlx5_1", HEALTHY, "S9", 80.0)]))
    out = findings.apply(report(), verdict)
    assert not out["passed"] and out["totals"]["phy_errors"] == 1
    assert findings.error_messages(out) == [
        "cable n9 mlx5_1 <-> its peer (unknown: no topology) (serial S9): module at 80 C (limit 75 C, its alarm 75 C)"
    ]


def test_an_unreadable_port_is_a_warning_never_a_pass_in_silence():
    ports = fabric(
        [{"end": {"kind": "host", "host": "n9", "device": "mlx5_1", "port": 1}, "error": "mlxlink exited 1"}]
    )
    verdict = findings.evaluate(ports)
    assert [(f["check"], f["severity"]) for f in verdict["findings"]] == [("unread", "warning")]
    assert verdict["unread"][0]["error"] == "mlxlink exited 1"


def test_apply_refuses_what_is_not_a_verdict():
    with pytest.raises(ValueError, match="phy_verdict filter's result"):
        findings.apply(report(), {"findings": []})


def test_history_keeps_the_points_and_sees_a_trend():
    old = None
    for t in range(4):
        old = history.update(old, findings.evaluate(fabric()), now=1000 + t)
    assert len(old["cables"]["host:n1/mlx5_0/1"]["points"]) == 4
    # the worst lane climbs from 6e-10 to 9e-9 - below the outlier gate against this fabric? it is the same
    # cable's own history that sees it
    worse = fabric()
    worse[0] = port("n1", "mlx5_0", [2e-10, 9e-9, 3e-10, 4e-10], "S1")
    verdict = findings.evaluate(worse, history=old)
    trend = [f for f in verdict["findings"] if f["check"] == "raw_ber_trend"]
    assert len(trend) == 1 and trend[0]["host"] == "n1" and "15x its median" in trend[0]["msg"]


def test_history_of_another_shape_is_refused():
    with pytest.raises(ValueError, match="not a version 1 history"):
        history.update({"links": {}}, findings.evaluate(fabric()), now=1)


def test_history_is_bounded():
    old = None
    for t in range(7):
        old = history.update(old, findings.evaluate(fabric()), now=t, keep=5)
    assert [p[0] for p in old["cables"]["host:n1/mlx5_0/1"]["points"]] == [2.0, 3.0, 4.0, 5.0, 6.0]
