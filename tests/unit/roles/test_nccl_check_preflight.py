"""nccl_check's preflight, run by a real ansible-playbook on localhost: a Slurm name srun cannot take fails the play
before any group runs (a failed run would be bisected and a node blamed for it)."""

import json

from tests.unit.role_tasks import run_role_tasks


def _preflight(tmp_path, extra):
    variables = {"nccl_check_plans": ["per_rail"], "nccl_check_launch": "srun"}
    variables.update(extra)
    return run_role_tasks(tmp_path, "nccl_check", "preflight", [json.dumps(variables)])


def test_slurm_names_pass_and_a_bad_one_fails_naming_it(tmp_path):
    good = {
        "nccl_check_slurm_partition": "gpu",
        "nccl_check_slurm_qos": "validation",
        "nccl_check_slurm_reservation": "m.1",
    }
    rc, out = _preflight(tmp_path, good)
    assert rc == 0, out[-3000:]
    rc, out = _preflight(tmp_path, dict(good, nccl_check_slurm_qos="high,low"))
    assert rc != 0
    assert "nccl_check_slurm_qos='high,low' is not a Slurm name (letters, digits, _ . + -)" in out, out[-3000:]
    assert "nccl_check_slurm_partition" not in out, out[-3000:]
    rc, out = _preflight(tmp_path, dict(good, nccl_check_slurm_partition="gpu\n"))
    assert rc != 0 and "nccl_check_slurm_partition='gpu\\n' is not a Slurm name" in out, out[-3000:]
