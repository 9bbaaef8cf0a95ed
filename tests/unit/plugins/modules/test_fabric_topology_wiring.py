"""fabric_plan (strategy cover_links) and fabric_report (suspect cables) take the fabric_validate topology:
the modules on the simulated 582-HCA subnet's real routes, through the validate_topology filter."""

import json

from ansible_collections.ibtune.fabric.plugins.filter.validate_topology import validate_topology
from ansible_collections.ibtune.fabric.plugins.modules import fabric_plan, fabric_report
from tests.unit.modules_harness import run_module
from tests.unit.plugins.module_utils.report.test_topology import CABLE, cover_links_run
from tests.unit.plugins.module_utils.validate.test_fabric import ib_topology_result, inventory, rails_by_index


def test_fabric_plan_cover_links(tmp_path):
    hosts = inventory()
    names = sorted(hosts)
    topo = json.loads(json.dumps(validate_topology(ib_topology_result())))
    res = run_module(
        fabric_plan,
        {
            "hosts": names,
            "rails": rails_by_index(hosts),
            "addresses": {h: h for h in names},
            "strategy": "cover_links",
            "topology": topo,
            "dest": str(tmp_path),
        },
    )
    assert not res.failed, res.get("msg")
    cov = res["isl_coverage"]
    assert res["rounds"] <= 8 and res["untested"] == []
    # the fabric's hosts with 2 or 3 named HCAs (of 4) are named, not dropped
    short = sorted(h for h, devs in hosts.items() if len(devs) < 4)
    assert sorted(f["host"] for f in res["host_failures"]) == short
    assert {f["failure_kind"] for f in res["host_failures"]} == {"missing_rail"}
    assert cov["isls"] == 1064 and cov["covered_isls"] == cov["coverable_isls"] == 1064 - len(res["uncovered_isls"])
    assert res["msg"].endswith(
        "; %d of 1064 directed inter-switch links covered, %d uncovered"
        % (cov["covered_isls"], len(res["uncovered_isls"]))
    )
    assert res["invocation"]["module_args"]["topology"] == "(the fabric's topology, not echoed)"
    plan = json.loads((tmp_path / "pass1.json").read_text())
    assert plan["strategy"] == "cover_links" and plan["rounds"] == res["rounds"]


def test_fabric_plan_cover_links_needs_the_topology(tmp_path):
    res = run_module(
        fabric_plan,
        {"hosts": ["a", "b"], "rails": {"a": [], "b": []}, "addresses": {"a": "a", "b": "b"},
         "strategy": "cover_links", "dest": str(tmp_path)},
    )  # fmt: skip
    assert res.failed and "fabric_validate_topology=true" in res["msg"]


def test_fabric_report_names_the_cable(tmp_path):
    results, small = cover_links_run()
    res = run_module(
        fabric_report,
        {"results": results, "topology": small, "dest": str(tmp_path), "fail_on_failure": False},
    )
    assert not res.failed and not res["passed"]
    assert [(c["a"], c["b"]) for c in res["suspect_cables"]] == [("A09-P1-IBLEAF-04-04 p38", "A10-P1-IBSPINE-03 p32")]
    assert CABLE in res["msg"] and CABLE in res["summary"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["suspect_cables"] == res["suspect_cables"] and report["host_order"] == small["host_order"]
    html = (tmp_path / "report.html").read_text()
    assert "<b>A09-P1-IBLEAF-04-04 p38</b> &harr; <b>A10-P1-IBSPINE-03 p32</b>" in html
    assert CABLE in (tmp_path / "junit.xml").read_text().replace("&lt;", "<").replace("&gt;", ">")
    assert res["invocation"]["module_args"]["topology"] == "(the fabric's topology, not echoed)"


PLAY = """
- name: fabric_validate's topology stage on the subnet scenario's saved outputs, then a cover_links plan
  hosts: all
  gather_facts: false
  vars:
    fabric_topology_source: file
    fabric_topology_host: localhost
    fabric_topology_ibnetdiscover_path: "{{ fixtures }}/lab-subnet.ibnetdiscover"
    fabric_topology_routes_path: "{{ fixtures }}/lab-subnet.dump_lfts"
    fabric_topology_linkinfo: false
    fabric_topology_use_facts: false
    fabric_topology_hosts: "{{ inventory_rails }}"
    # switch counters as fabric_validate reads them (fabric_validate_switch_counters: true): before and after
    fabric_topology_errors_path: "{{ fixtures }}/lab-subnet.ibqueryerrors-before"
    fabric_topology_data_counters_path: "{{ fixtures }}/lab-subnet.ibqueryerrors-counters-before"
    fabric_topology_errors_after_path: "{{ fixtures }}/lab-subnet.ibqueryerrors-after"
    fabric_topology_data_counters_after_path: "{{ fixtures }}/lab-subnet.ibqueryerrors-counters-after"
  tasks:
    - name: Topology stage
      ansible.builtin.include_role:
        name: ibtune.fabric.fabric_validate
        tasks_from: topology
    - name: Plan
      ibtune.fabric.fabric_plan:
        hosts: "{{ ansible_play_hosts }}"
        rails: "{{ plan_rails }}"
        addresses: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts)) }}"
        strategy: cover_links
        topology: "{{ __fabric_validate_topology }}"
        dest: "{{ dest }}"
      delegate_to: localhost
      run_once: true
      register: plan
    - name: Same fabric on every host
      ansible.builtin.assert:
        that: __fabric_validate_topology == hostvars['ibt-lab-node1'].__fabric_validate_topology
    - name: Switch counters after the passes (fabric_validate's run.yml task)
      ansible.builtin.include_role:
        name: ibtune.fabric.fabric_topology
        tasks_from: counters_after
      vars:
        fabric_topology_switch_data_counters: true
    - name: Show the switch counters after
      ansible.builtin.debug:
        var: fabric_topology_counters_after
      run_once: true
    - name: Show
      ansible.builtin.debug:
        var: plan
      run_once: true
"""


def test_topology_stage_and_cover_links_in_a_real_play(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import FIXTURES, ROOT
    from tests.unit.plugins.module_utils.validate.test_fabric_lab import HOSTS, INVENTORY, RAILS

    bin_dir = os.path.dirname(sys.executable)
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "vars.json").write_text(
        json.dumps(
            {
                "fixtures": str(FIXTURES / "topology"),
                "inventory_rails": INVENTORY,
                "plan_rails": RAILS,
                "dest": str(tmp_path / "plan"),
                "ansible_python_interpreter": sys.executable,
            }
        )
    )
    env = dict(os.environ)
    env.update(
        PATH="%s:%s" % (bin_dir, env.get("PATH", "")),
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOCALHOST_WARNING="False",
    )
    argv = [os.path.join(bin_dir, "ansible-playbook"), "-i", ",".join(HOSTS + ["localhost"]) + ",", "-c", "local"]
    argv += ["-l", ",".join(HOSTS), "-e", "@%s" % (tmp_path / "vars.json"), str(tmp_path / "play.yml")]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    (show,) = [t for t in data["plays"][0]["tasks"] if t["task"]["name"] == "Show"]
    plan = show["hosts"]["ibt-lab-node1"]["plan"]
    assert plan["rounds"] == 2 and plan["untested"] == []
    assert plan["isl_coverage"] == {"isls": 16, "coverable_isls": 16, "covered_isls": 16}
    assert plan["msg"].endswith("; 16 of 16 directed inter-switch links covered, 0 uncovered")
    (after,) = [t for t in data["plays"][0]["tasks"] if t["task"]["name"] == "Show the switch counters after"]
    after = after["hosts"]["ibt-lab-node1"]["fabric_topology_counters_after"]
    (violation,) = after["switch_counter_violations"]
    assert violation["msg"] == "lab-leaf2 port 1 <-> ibt-lab-node4 mlx5_0: SymbolErrorCounter +12"
    assert after["isl_traffic"]["carried"] == 2 and after["isl_traffic"]["total"] == 16
