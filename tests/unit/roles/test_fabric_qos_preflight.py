"""fabric_qos's preflight, run by a real ansible-playbook on localhost: a bad variable fails naming that one only."""

import pytest

from tests.unit.role_tasks import run_role_tasks


def _preflight(tmp_path, extra):
    return run_role_tasks(tmp_path, "fabric_qos", "preflight", extra)


def test_defaults_pass(tmp_path):
    rc, out = _preflight(tmp_path, [])
    assert rc == 0, out[-3000:]


@pytest.mark.parametrize(
    "extra,name,want",
    [
        (
            '{"fabric_qos_switch_roce_bw_percent": 150}',
            "fabric_qos_switch_roce_bw_percent=150",
            "must be 1..99 (traffic class 0 gets the rest)",
        ),
        ("fabric_qos_opensm_conf=opensm.conf", 'fabric_qos_opensm_conf="opensm.conf"', "must be an absolute path"),
    ],
)
def test_a_bad_variable_is_named_alone(tmp_path, extra, name, want):
    rc, out = _preflight(tmp_path, [extra])
    assert rc != 0
    failed = [line for line in out.splitlines() if line.startswith("[ERROR]")]
    assert len(failed) == 1, out[-3000:]
    assert "fabric_qos: %s on localhost %s." % (name, want) in failed[0]
    # the message names no other variable of the role
    others = {w for w in failed[0].replace("=", " ").split() if w.startswith("fabric_qos_")} - {name.split("=")[0]}
    assert others == set(), failed[0]
