"""fabric_report runs in-process, writing its report files into tmp_path."""

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds
from ansible_collections.ibtune.fabric.plugins.modules import fabric_report
from tests.unit.modules_harness import run_module

PROMTOOL = shutil.which("promtool")
FILES = ["ibtune.prom", "junit.xml", "report.html", "report.json", "results.json", "summary.md"]


def measure(server, client, round_, pass_, slow=()):
    bad = server in slow or client in slow or {server, client} in [set(p) for p in slow if isinstance(p, tuple)]
    bw = 180.1 if bad else 392.4
    return {
        "server": server,
        "server_device": "mlx5_0",
        "server_port": 1,
        "client": client,
        "client_device": "mlx5_0",
        "client_port": 1,
        "test": "write",
        "bw_avg_gbps": bw,
        "bw_peak_gbps": None,
        "threshold_gbps": 360.0,
        "passed": not bad,
        "failure": None if not bad else "%.1f Gb/s is below the threshold 360.0 Gb/s" % bw,
        "round": round_,
        "pass": pass_,
        "duration_s": 5.0,
    }


def run_fabric(hosts, slow=()):
    first = [measure(s, c, i, 1, slow) for i, rnd in enumerate(pair_rounds(hosts)) for s, c in rnd]
    second = [measure(s, c, i, 2, slow) for i, rnd in enumerate(retest_rounds(first, hosts)) for s, c in rnd]
    return first + second


HOSTS = ["node1", "node2", "node3", "node4", "node5", "node6"]
VIOLATION = {"host": "node4", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "before": 3, "after": 8,
             "delta": 5, "allowed": 0, "category": "physical"}  # fmt: skip


def promtool_findings(path):
    with open(path) as handle:
        proc = subprocess.run([PROMTOOL, "check", "metrics"], stdin=handle, capture_output=True, text=True, check=False)
    lines = [x for x in (proc.stdout + proc.stderr).splitlines() if x.strip()]
    # only finding allowed: the contract's metric name ibtune_counter_violations trips promtool's naming lint
    return [x for x in lines if "ibtune_counter_violations metric name should not include type 'counter'" not in x]


def test_healthy_fabric_writes_the_report(tmp_path):
    dest = tmp_path / "reports"
    res = run_module(fabric_report, {"results": run_fabric(HOSTS), "dest": str(dest), "run_id": "healthy"})
    assert not res.failed, res.get("msg")
    # the report files are output, not managed state: no change without a baseline update
    assert res["passed"] is True and res["changed"] is False
    assert res["failed_pairs"] == [] and res["suspect_nodes"] == [] and res["suspect_links"] == []
    assert sorted(p.name for p in dest.iterdir()) == FILES
    assert res["files"] == [str(dest / f) for f in FILES]
    assert res["msg"] == "Fabric validation passed: 0 of 15 pair results failed on 6 hosts, " + (
        "0 suspect nodes, 0 suspect links, 0 counter violations, 0 regressions"
    )
    assert (dest / "summary.md").read_text() == res["summary"]
    report = json.loads((dest / "report.json").read_text())
    assert report["run_id"] == "healthy" and len(report["results"]) == 15
    root = ET.parse(str(dest / "junit.xml")).getroot()
    assert root.get("failures") == "0" and root.get("tests") == str(15 + 6 + 6)  # pairs, counters, hosts
    if PROMTOOL:
        assert promtool_findings(dest / "ibtune.prom") == []
    assert "ibtune_validation_passed 1" in (dest / "ibtune.prom").read_text().splitlines()


def test_faulty_fabric_fails_naming_node_link_and_counter(tmp_path):
    dest = tmp_path / "reports"
    results = run_fabric(HOSTS, slow=("node4", ("node2", "node3")))
    res = run_module(fabric_report, {"results": results, "counter_violations": [VIOLATION], "dest": str(dest)})
    assert res.failed
    msg = res["msg"]
    assert msg.startswith("Fabric validation failed: bad link node2/mlx5_0<->node3/mlx5_0 (180.1 Gb/s < 360.0 Gb/s); ")
    assert "bad node node4 (failed with node1, node2, node3, node5, node6; failed again with known-good node" in msg
    assert msg.endswith("; node4 mlx5_0 port 1 symbol_error +5")
    assert [n["host"] for n in res["suspect_nodes"]] == ["node4"]
    assert res["counter_violations"][0]["delta"] == 5
    # the report is written before the task fails, so CI keeps the evidence
    assert sorted(p.name for p in dest.iterdir()) == FILES
    root = ET.parse(str(dest / "junit.xml")).getroot()
    counters = [s for s in root.findall("testsuite") if s.get("name") == "counters"][0]
    failing = [c.get("name") for c in counters.findall("testcase") if c.find("failure") is not None]
    assert failing == ["node4 counters"]
    summary = (dest / "summary.md").read_text()
    assert summary.startswith("# Fabric validation: FAILED")
    assert "| node4 | mlx5_0 | 1 | symbol_error | physical | 3 | 8 | 5 | 0 |" in summary
    if PROMTOOL:
        assert promtool_findings(dest / "ibtune.prom") == []
    prom = (dest / "ibtune.prom").read_text()
    assert 'ibtune_suspect_node{host="node4"} 1' in prom


def test_fail_on_failure_false_reports_without_failing(tmp_path):
    results = run_fabric(HOSTS, slow=("node4",))
    res = run_module(fabric_report, {"results": results, "dest": str(tmp_path), "fail_on_failure": False})
    assert not res.failed
    assert res["passed"] is False
    assert res["msg"].startswith("Fabric validation failed: bad node node4")


def test_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "reports"
    baseline = tmp_path / "baseline.json"
    args = {"results": run_fabric(HOSTS), "dest": str(dest), "baseline_path": str(baseline), "update_baseline": True}
    res = run_module(fabric_report, args, check_mode=True)
    assert not res.failed
    assert res["changed"] is True and res["baseline_updated"] is True
    assert res["files"] == [str(dest / f) for f in FILES]
    assert not dest.exists() and not baseline.exists()


def test_min_gbps_is_checked_not_reapplied(tmp_path):
    # the join applied the gate (threshold_gbps 360): the report keeps its verdict
    res = run_module(fabric_report, {"results": run_fabric(HOSTS), "dest": str(tmp_path), "min_gbps": 395.0})
    assert not res.failed and res["passed"] is True
    # above the line rate no link can pass: one systemic sentence, no culprit
    args = {"results": run_fabric(HOSTS), "dest": str(tmp_path), "min_gbps": 500.0, "line_rate_gbps": 400.0}
    res = run_module(fabric_report, args)
    assert res.failed and res["systemic"] == "min_gbps 500 is above the 400 Gb/s line rate: no link can pass"
    assert res["msg"] == "Fabric validation failed: " + res["systemic"]
    assert res["suspect_nodes"] == [] and res["suspect_links"] == []
    res = run_module(fabric_report, {"results": [], "dest": str(tmp_path), "min_gbps": -1.0})
    assert res.failed and res["msg"] == "fabric_report: min_gbps=-1.0 must be a finite number >= 0"


def test_baseline_created_then_regression_detected(tmp_path):
    baseline = tmp_path / "state" / "baseline.json"
    args = {"results": run_fabric(HOSTS), "dest": str(tmp_path / "r1"), "baseline_path": str(baseline)}
    args["min_peer_fraction"] = 0.8  # 345 Gb/s is 0.88 of its peers: this test is about the baseline
    # no baseline yet and no update: nothing created
    res = run_module(fabric_report, args)
    assert res["passed"] and res["baseline_updated"] is False and not baseline.exists()
    # update_baseline creates it with every passed link
    res = run_module(fabric_report, dict(args, update_baseline=True))
    assert res["baseline_updated"] is True
    data = json.loads(baseline.read_text())
    assert len(data["links"]) == 15
    assert data["links"]["node1/mlx5_0<->node2/mlx5_0"]["history"][0]["gbps"] == 392.4
    before = baseline.read_text()
    # a link that dropped 12% but still clears its threshold is a regression against the baseline
    results = run_fabric(HOSTS)
    for r in results:
        if {r["server"], r["client"]} == {"node1", "node2"}:
            r["bw_avg_gbps"] = 345.0
            r["threshold_gbps"] = 300.0
    res = run_module(fabric_report, dict(args, results=results, dest=str(tmp_path / "r2")))
    assert res.failed
    assert res["regressions"][0]["link"] == "node1/mlx5_0<->node2/mlx5_0"
    assert "regression node1/mlx5_0<->node2/mlx5_0 write (345.0 Gb/s < 90% of baseline 392.4 Gb/s)" in res["msg"]
    assert baseline.read_text() == before  # update_baseline false: untouched
    # a looser tolerance accepts it
    res = run_module(fabric_report, dict(args, results=results, dest=str(tmp_path / "r3"), regression_tolerance=0.2))
    assert not res.failed and res["regressions"] == []


def test_bad_inputs_fail_with_one_sentence(tmp_path):
    res = run_module(fabric_report, {"results": [{"server": "a"}], "dest": str(tmp_path)})
    assert res.failed and res["msg"] == (
        "fabric_report: results[0] has no client host name: every pair result needs server and client"
    )
    res = run_module(fabric_report, {"results": [], "dest": str(tmp_path), "update_baseline": True})
    assert res.failed and "baseline_path is not set" in res["msg"]
    broken = tmp_path / "baseline.json"
    broken.write_text("{not json")
    res = run_module(fabric_report, {"results": [], "dest": str(tmp_path / "r"), "baseline_path": str(broken)})
    assert res.failed and res["msg"].startswith("baseline %s: the baseline is not valid JSON" % broken)
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = run_module(fabric_report, {"results": [], "dest": str(blocker)})
    assert res.failed and "is not a directory" in res["msg"]
    res = run_module(fabric_report, {"results": [], "dest": str(tmp_path / "r"), "regression_tolerance": 2.0})
    assert res.failed and "regression_tolerance must be >= 0 and < 1" in res["msg"]


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_would_fail_on_a_bad_file(tmp_path):
    bad = tmp_path / "bad.prom"
    bad.write_text("ibtune_validation_passed{host=} 1\n")
    assert promtool_findings(bad) != []


def test_no_results_fails_with_a_warning(tmp_path, monkeypatch):
    # Once anything in this pytest process imported Ansible's controller side (the filter tests do),
    # module warnings go to the controller's display instead of the result: act as a module process.
    # (ansible-core 2.19's switch; older ones have no such state)
    try:
        from ansible.module_utils import _internal
    except ImportError:
        _internal = None
    if _internal:
        monkeypatch.setattr(_internal, "is_controller", False)
    res = run_module(fabric_report, {"results": [], "dest": str(tmp_path), "expected_hosts": ["gpu1", "gpu2"]})
    # "PASSED: 0 of 0" was a lie: no pair result fails the validation
    assert res.failed and res["passed"] is False
    assert res["msg"].startswith("Fabric validation failed: no pair result: no link was measured (2 expected hosts)")
    assert [h["failure_kind"] for h in res["failed_hosts"]] == ["unmeasured", "unmeasured"]
    # ansible-core 2.19 returns structured warnings ({"event": {"msg": ...}}); older ones plain strings
    assert "no pair results: no link was measured" in json.dumps(res.get("warnings", []))


def test_large_result_lists_are_not_echoed_back(tmp_path):
    hosts = ["n%02d" % i for i in range(16)]  # 120 pairs
    res = run_module(fabric_report, {"results": run_fabric(hosts), "dest": str(tmp_path)})
    assert res["passed"] is True
    assert res["invocation"]["module_args"]["results"] == "120 entries (not echoed, see report.json)"
    assert res["invocation"]["module_args"]["dest"] == str(tmp_path)
    small = run_module(fabric_report, {"results": run_fabric(HOSTS), "dest": str(tmp_path)})
    assert len(small["invocation"]["module_args"]["results"]) == 15


PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    nodes: [node1, node2, node3, node4, node5, node6]
    plan: "{{ nodes | ibtune.fabric.pair_rounds('all_pairs') }}"
  tasks:
    - name: Results as the role gathers them (node4's rail is slow)
      ansible.builtin.set_fact:
        results: >-
          {%- set out = [] -%}
          {%- for round in plan -%}{%- set r = loop.index -%}{%- for pair in round -%}
          {%- set slow = 'node4' in pair -%}
          {%- set _ = out.append({'server': pair[0], 'server_device': 'mlx5_0', 'server_port': 1,
                'client': pair[1], 'client_device': 'mlx5_0', 'client_port': 1, 'test': 'write',
                'bw_avg_gbps': 170.5 if slow else 391.2, 'bw_peak_gbps': none, 'threshold_gbps': 360.0,
                'passed': not slow, 'failure': none, 'round': r, 'pass': 1, 'duration_s': 5}) -%}
          {%- endfor -%}{%- endfor -%}
          {{ out }}
    - name: Judge
      ibtune.fabric.fabric_report:
        results: "{{ results }}"
        counter_violations: []
        dest: "{{ dest }}"
      register: verdict
      ignore_errors: true
    - name: Show
      ansible.builtin.debug:
        msg: "{{ verdict }}"
"""


def test_in_a_real_play(tmp_path):
    import os
    import sys

    bin_dir = os.path.dirname(sys.executable)
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    )
    play = tmp_path / "play.yml"
    play.write_text(PLAY)
    env = dict(os.environ)
    env.update(
        PATH="%s:%s" % (bin_dir, env.get("PATH", "")),
        ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=os.path.join(root, ".collections"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOCALHOST_WARNING="False",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="False",
    )
    dest = tmp_path / "out"
    for check in (True, False):
        argv = [os.path.join(bin_dir, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(play)]
        argv += ["-e", "dest=%s" % dest, "-e", "ansible_python_interpreter=%s" % sys.executable]
        argv += ["--check"] if check else []
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
        data = json.loads(proc.stdout)
        verdict = data["plays"][0]["tasks"][2]["hosts"]["localhost"]["msg"]
        assert verdict["failed"] is True and verdict["passed"] is False
        assert verdict["msg"].startswith(
            "Fabric validation failed: suspect node node4 (failed with node1, node2, node3"
        )
        assert dest.exists() is not check  # check mode writes nothing
    assert sorted(p.name for p in dest.iterdir()) == FILES


def test_results_paths_expected_hosts_and_host_failures(tmp_path):
    # the join writes each pass's pair results to a JSON file on the controller
    results = run_fabric(HOSTS)
    first = tmp_path / "pass1.json"
    first.write_text(json.dumps(results[:10]))
    rest = tmp_path / "pass1b.json"
    rest.write_text(json.dumps(results[10:]))
    dest = tmp_path / "reports"
    args = {
        "results_paths": [str(first), str(rest)],
        "expected_hosts": HOSTS + ["node7"],
        "host_failures": [
            {"host": "node7", "reason": "no ACTIVE port on mlx5_0: check the cable", "failure_kind": "preflight"}
        ],
        "dest": str(dest),
    }
    res = run_module(fabric_report, args)
    assert res.failed and res["passed"] is False and res["systemic"] is None
    assert res["failed_hosts"] == [
        {
            "host": "node7",
            "failure_kind": "preflight",
            "reason": "no ACTIVE port on mlx5_0: check the cable",
            "culprit": True,
        }
    ]
    assert res["passed_hosts"] == HOSTS
    assert res["msg"] == "Fabric validation failed: node7 (preflight): no ACTIVE port on mlx5_0: check the cable"
    report = json.loads((dest / "report.json").read_text())
    assert len(report["results"]) == 15 and report["expected_hosts"] == sorted(HOSTS + ["node7"])
    root = ET.parse(str(dest / "junit.xml")).getroot()
    node7 = [c for c in root.iter("testcase") if c.get("name") == "node7 host"][0]
    assert node7.find("failure").get("type") == "preflight"
    assert 'ibtune_host_passed{host="node7"} 0' in (dest / "ibtune.prom").read_text()
    assert "| node7 | FAILED | preflight |" in (dest / "summary.md").read_text()
    assert "node7" in (dest / "report.html").read_text()
    # a file that is not a list of pair results fails with one sentence naming it
    first.write_text('{"results": []}')
    res = run_module(fabric_report, dict(args, results_paths=[str(first)]))
    assert res.failed and res["msg"] == "results_paths[0] %s holds a JSON dict, not a list of pair results" % first
    res = run_module(fabric_report, dict(args, results_paths=[str(tmp_path / "absent.json")]))
    assert res.failed and res["msg"].startswith("cannot read results_paths[0] %s" % (tmp_path / "absent.json"))
    # an item that is not a pair result is named by its place among every result, the module's own first
    first.write_text(json.dumps(results[:2] + [7]))
    res = run_module(fabric_report, dict(args, results=results[10:13], results_paths=[str(rest), str(first)]))
    assert res.failed and res["msg"] == "fabric_report: results[%d] must be a dict (a pair result), got 7" % (3 + 5 + 2)


def test_the_cyclic_collector_sleeps_while_the_files_are_written_and_wakes_after(tmp_path, monkeypatch):
    """No full collection over a report's millions of objects between its steps: the collector is off while the
    files are made and written (and while building), and on again once the module is done."""
    import gc

    from ansible_collections.ibtune.fabric.plugins.module_utils.report import module as report_module

    seen = []
    real_write, real_render = report_module.write_atomic, report_module.render_files
    monkeypatch.setattr(report_module, "write_atomic", lambda *a: seen.append(gc.isenabled()) or real_write(*a))
    monkeypatch.setattr(
        report_module, "render_files", lambda *a, **k: seen.append(gc.isenabled()) or real_render(*a, **k)
    )
    assert gc.isenabled()
    res = run_module(fabric_report, {"results": run_fabric(HOSTS), "dest": str(tmp_path / "r")})
    assert not res.failed and seen == [False, False] and gc.isenabled()
