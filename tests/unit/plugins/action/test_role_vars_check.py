"""The role_vars_check action plugin, run by a real ansible-playbook on localhost inside a real role's preflight."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]


def _run(tmp_path, role, extra):
    playbook = tmp_path / "pb.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: ibtune.fabric.%s\n        tasks_from: preflight\n"
        "      vars:\n        ansible_facts: {distribution: Debian, distribution_major_version: '12',"
        " os_family: Debian, kernel: 6.1.0, distribution_version: '12'}\n" % role
    )
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_NOCOLOR="True",
    )
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(playbook)]
    for item in extra:
        argv += ["-e", item]
    # --check: the preflight of a role must be harmless; the typo check fails it before anything else runs.
    proc = subprocess.run(argv + ["--check"], check=False, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_typo_of_a_strict_variable_fails_the_play_naming_it(tmp_path):
    rc, out = _run(tmp_path, "rdma_stack", ["rdma_stack_gdrr=dmabuf"])
    assert rc != 0
    assert "rdma_stack_gdrr is not a variable of role rdma_stack" in out
    assert "did you mean rdma_stack_gdr?" in out
    # It failed at the first preflight task, before anything looked at the host.
    assert "Gather the facts preflight needs" not in out


def test_typo_of_another_variable_warns_and_the_preflight_goes_on(tmp_path):
    rc, out = _run(tmp_path, "fabric_monitoring", ["fabric_monitoring_alert_port_fro=5m"])
    assert "[WARNING]: fabric_monitoring_alert_port_fro is not a variable of role fabric_monitoring" in out
    assert "did you mean fabric_monitoring_alert_port_for?" in out
    assert "Assert the install method is valid" in out


def test_bad_value_fails_in_one_sentence_without_the_spec_dump(tmp_path):
    rc, out = _run(tmp_path, "rdma_stack", ["rdma_stack_gdr=peermemm"])
    assert rc != 0
    assert re.search(
        r"Role rdma_stack: value of rdma_stack_gdr must be one of: [a-z, ]*peermem[a-z, ]*, got: peermemm;"
        r" set an allowed value in the inventory \(see roles/rdma_stack/meta/argument_specs.yml\)\.",
        out,
    ), out
    # Ansible's own role validation (which prints every option of the spec) never ran.
    assert "rdma_stack : Validating arguments against arg spec" not in out
    assert "argument_spec_data" not in out and "rdma_stack_perftest_source_sha256" not in out
    assert len(out.splitlines()) < 40, out


def _validate_fabric(tmp_path, extra):
    """fabric_validate's preflight on localhost against a fixture tree (its expectations left at their defaults,
    which follow ibtune_fabric and are null when it is not declared)."""
    sys.path.insert(0, str(ROOT / "tests" / "lab"))
    import json

    import sysfs_tree

    root = tmp_path / "sys"
    sysfs_tree.build_tree(
        str(root), json.loads((ROOT / "tests" / "lab" / "fabric" / "nodes" / "default.json").read_text())
    )
    playbook = tmp_path / "validate.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: ibtune.fabric.fabric_validate\n"
    )
    env = dict(
        os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections")
    )
    env["ANSIBLE_NOCOLOR"] = "True"
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(playbook)]
    argv += ["--check", "--tags", "fabric_validate_preflight", "-e", "ibtune_sysfs_root=%s" % root]
    # the modules run with this interpreter, not one that discovery might find on the machine
    argv += ["-e", "ansible_python_interpreter=%s" % sys.executable]
    for item in extra:
        argv += ["-e", item]
    proc = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_nullable_templated_defaults_pass_like_ansibles_own_validation(tmp_path):
    rc, out = _validate_fabric(tmp_path, [])
    assert rc == 0, out
    assert "2 rail(s) mlx5_0:1, mlx5_1:1 as expected" in out


def test_a_typo_of_a_fabric_validate_gate_fails_naming_it(tmp_path):
    rc, out = _validate_fabric(tmp_path, ["fabric_validate_min_link_fractoin=0.5"])
    assert rc != 0
    assert "did you mean fabric_validate_min_link_fraction?" in out


def test_the_issues_own_typo_nccl_env_var_fails_naming_nccl_env_vars(tmp_path):
    rc, out = _run(tmp_path, "nccl_env", ["nccl_env_var={}"])
    assert rc != 0
    assert "nccl_env_var is not a variable of role nccl_env" in out
    assert "did you mean nccl_env_vars?" in out
