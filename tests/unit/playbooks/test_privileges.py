"""Which plays and tasks escalate (issue 21): root only where root is needed, stated on every play.

A real run connects as a sudo-capable user: a play that needs root and does not say become fails on its first
root-only task, and one that escalates without need runs perftest and NCCL as root. The playbooks' own YAML is
the contract here (what ansible-playbook reads), so these read it as it is.
"""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
PLAYBOOKS = ROOT / "playbooks"

# play name -> become, for every play that names hosts (imports carry their own file's plays)
ROOT_PLAYS = {
    "Install the RDMA stack",
    "Write NCCL's environment",
    "Apply fabric QoS",
    "Monitor the fabric",
    "Install the node health check",
    "Act on the verdict where scontrol reaches slurmctld",
}


def _plays():
    for path in sorted(PLAYBOOKS.glob("*.yml")):
        for play in yaml.safe_load(path.read_text()):
            if "hosts" in play:
                yield path.name, play


def test_every_play_says_whether_it_escalates():
    unstated = ["%s: %s" % (name, play["name"]) for name, play in _plays() if "become" not in play]
    assert unstated == []


def test_root_exactly_where_the_play_changes_the_system():
    escalating = {play["name"] for _name, play in _plays() if play["become"] is True}
    assert escalating == ROOT_PLAYS


def _tasks(path):
    return yaml.safe_load((ROOT / path).read_text())


@pytest.mark.parametrize(
    "path", ["roles/fabric_topology/tasks/read.yml", "roles/fabric_topology/tasks/counters_after.yml"]
)
def test_the_subnet_manager_reads_escalate_by_the_role_variable(path):
    reads = [t for t in _tasks(path) if "ibtune.fabric.ib_topology" in t]
    assert reads, path
    assert all(t.get("become") == "{{ fabric_topology_become | bool }}" for t in reads)
    defaults = yaml.safe_load((ROOT / "roles/fabric_topology/defaults/main.yml").read_text())
    assert defaults["fabric_topology_become"] is True


def test_nccl_check_escalates_only_to_render_nccl_conf():
    [render] = _tasks("roles/nccl_check/tasks/render.yml")
    assert render["ansible.builtin.include_role"]["name"] == "ibtune.fabric.nccl_env"
    assert render["ansible.builtin.include_role"]["apply"]["become"] is True
