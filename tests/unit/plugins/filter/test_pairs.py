"""Filters pair_rounds / retest_rounds: the FilterModule, errors, and real Ansible runs (templating, ansible-doc)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.pairs import FilterModule

ROOT = Path(__file__).resolve().parents[4]
BIN = Path(sys.executable).parent


def ansible_env():
    env = dict(os.environ)
    env.update(
        PATH="%s:%s" % (BIN, env.get("PATH", "")),
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_LOCALHOST_WARNING="False",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="False",
    )
    return env


def test_filters_are_registered():
    filters = FilterModule().filters()
    assert set(filters) == {"pair_rounds", "retest_rounds"}
    assert filters["pair_rounds"](["a", "b", "c", "d"], "ring") == [[["a", "b"], ["c", "d"]], [["b", "c"], ["d", "a"]]]


def test_value_errors_become_filter_errors():
    filters = FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match="pair_rounds: unknown pair strategy 'mesh'"):
        filters["pair_rounds"](["a", "b"], "mesh")
    with pytest.raises(AnsibleFilterError, match="pair_rounds: host b is missing from groups"):
        filters["pair_rounds"](["a", "b"], "cross_group", groups={"a": "leaf1"})
    with pytest.raises(AnsibleFilterError, match="retest_rounds: partners must be >= 1"):
        filters["retest_rounds"]([], partners=0)


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    nodes: [n0, n1, n2, n3, n4]
    leaf: {n0: l1, n1: l1, n2: l2, n3: l2, n4: l3}
    first_pass:
      - {server: n0, client: n1, passed: true}
      - {server: n2, client: n3, passed: true}
      - {server: n4, client: n0, passed: false}
      - {server: n1, client: n4, passed: false}
      - {server: n3, client: n4, passed: false}
  tasks:
    - name: Plans
      ansible.builtin.debug:
        msg:
          all_pairs: "{{ nodes | ibtune.fabric.pair_rounds }}"
          ring: "{{ nodes | ibtune.fabric.pair_rounds('ring') }}"
          random: "{{ nodes | ibtune.fabric.pair_rounds('random', rounds=2, seed=3) }}"
          cross: "{{ nodes | ibtune.fabric.pair_rounds('cross_group', groups=leaf) }}"
          explicit: "{{ nodes | ibtune.fabric.pair_rounds('explicit', pairs=[['n0', 'n1'], ['n1', 'n2']]) }}"
          retest: "{{ first_pass | ibtune.fabric.retest_rounds(nodes) }}"
"""


@pytest.fixture(scope="module")
def play_output(tmp_path_factory):
    path = tmp_path_factory.mktemp("play") / "play.yml"
    path.write_text(PLAYBOOK)
    env = ansible_env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.builtin.json"
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    return data["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"]


def test_filters_run_in_a_real_play(play_output):
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds

    nodes = ["n0", "n1", "n2", "n3", "n4"]
    assert play_output["all_pairs"] == pair_rounds(nodes)
    assert len(play_output["all_pairs"]) == 5
    assert play_output["ring"] == pair_rounds(nodes, "ring")
    assert play_output["random"] == pair_rounds(nodes, "random", rounds=2, seed=3)
    leaf = {"n0": "l1", "n1": "l1", "n2": "l2", "n3": "l2", "n4": "l3"}
    for rnd in play_output["cross"]:
        for a, b in rnd:
            assert leaf[a] != leaf[b]
    assert play_output["explicit"] == [[["n0", "n1"]], [["n1", "n2"]]]
    # n4 failed with three partners: retested against known-good n2 (n0, n1, n3 only failed with n4)
    pairs = [p for r in play_output["retest"] for p in r]
    assert len(pairs) == 1 and "n4" in pairs[0]


def test_bad_strategy_fails_the_play_with_the_sentence(tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - name: Plan\n      ansible.builtin.debug:\n"
        "        msg: \"{{ ['a', 'b'] | ibtune.fabric.pair_rounds('mesh') }}\"\n"
    )
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path)],
        capture_output=True,
        text=True,
        env=ansible_env(),
        timeout=300,
        check=False,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "unknown pair strategy 'mesh': use one of all_pairs, ring, random, halves, cross_group, explicit" in out


@pytest.mark.parametrize("name", ["pair_rounds", "retest_rounds"])
def test_ansible_doc_renders(name):
    proc = subprocess.run(
        [str(BIN / "ansible-doc"), "-t", "filter", "--json", "ibtune.fabric.%s" % name],
        capture_output=True,
        text=True,
        env=ansible_env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["ibtune.fabric.%s" % name]
    assert doc["doc"]["name"] == name
    assert "_input" in doc["doc"]["options"]
    assert doc["examples"].strip()
    assert doc["return"]["_value"]["type"] == "list"
