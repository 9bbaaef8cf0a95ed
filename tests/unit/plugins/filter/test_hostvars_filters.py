"""The hostvar_map / hosts_with / hosts_without filters on a real play's hostvars (ansible-playbook, local)."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Each host's variables
      ansible.builtin.set_fact:
        problems: "{{ [] if inventory_hostname != 'n2' else [{'reason': 'rail mlx5_0:1 is DOWN'}] }}"
        address: "{{ inventory_hostname ~ '.lab' }}"
    - name: A task that runs on n1 only (the others' registered result is a skip)
      ansible.builtin.set_fact:
        counters: {violations: [{counter: symbol_error}]}
      when: inventory_hostname == 'n1'
    - name: Gather
      ansible.builtin.set_fact:
        gathered:
          addresses: "{{ ansible_play_hosts | ibtune.fabric.hostvar_map(hostvars, 'address') }}"
          measured: "{{ ansible_play_hosts | ibtune.fabric.hosts_without(hostvars, 'problems') }}"
          failed: "{{ ansible_play_hosts | ibtune.fabric.hosts_with(hostvars, 'problems') }}"
          barred: "{{ ansible_play_hosts | ibtune.fabric.hosts_with(hostvars, 'counters.violations') }}"
          counted: "{{ ansible_play_hosts | ibtune.fabric.hostvar_map(hostvars, 'counters.violations', []) }}"
      run_once: true
    - name: Show
      ansible.builtin.debug:
        var: gathered
      run_once: true
    - name: A host without the variable
      ansible.builtin.debug:
        msg: "{{ ansible_play_hosts | ibtune.fabric.hostvar_map(hostvars, 'counters') }}"
      run_once: true
"""


def test_the_filters_on_real_hostvars(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    bin_dir = os.path.dirname(sys.executable)
    env = dict(
        os.environ,
        PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "")),
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
    )
    argv = [os.path.join(bin_dir, "ansible-playbook"), "-i", "n1,n2,n3,", "-c", "local"]
    argv += ["-e", "ansible_python_interpreter=%s" % sys.executable, str(tmp_path / "play.yml")]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]  # the last task fails, by design
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"]
    (show,) = [t for t in tasks if t["task"]["name"] == "Show"]
    assert show["hosts"]["n1"]["gathered"] == {
        "addresses": {"n1": "n1.lab", "n2": "n2.lab", "n3": "n3.lab"},
        "measured": ["n1", "n3"],
        "failed": ["n2"],
        "barred": ["n1"],
        "counted": {"n1": [{"counter": "symbol_error"}], "n2": [], "n3": []},
    }
    (missing,) = [t for t in tasks if t["task"]["name"] == "A host without the variable"]
    assert "hostvar_map: host n2 has no variable counters" in missing["hosts"]["n1"]["msg"]
