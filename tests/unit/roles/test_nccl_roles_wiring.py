"""nccl_check's and nccl_env's expressions put on one line (issue 26 part 5) render as the multi-line ones they
replaced (ansible-core's Templar, tests/unit/jinja_harness.py)."""

import itertools

from tests.unit.jinja_harness import UNSET, defined, render, task


def test_nccl_check_conf_and_version_fall_back_to_nccl_env_as_before():
    facts = task("nccl_check", "preflight.yml", "Name this run's files")["ansible.builtin.set_fact"]
    old_conf = (
        "{{ nccl_check_conf_path if nccl_check_conf_path | length > 0"
        " else nccl_env_conf_path | default('/etc/nccl.conf') }}"
    )
    old_version = (
        "{{ nccl_check_nccl_version if nccl_check_nccl_version | length > 0 else nccl_env_nccl_version | default('') }}"
    )
    values = ("", "/etc/nccl.conf", "/opt/x/nccl.conf")
    for own, env in itertools.product(values, (UNSET,) + values):
        variables = defined(nccl_check_conf_path=own, nccl_env_conf_path=env)
        assert render(facts["__nccl_check_conf"], **variables) == render(old_conf, **variables), variables
    versions = ("", "2.21.5", "2.18.3")
    for own, env in itertools.product(versions, (UNSET,) + versions):
        variables = defined(nccl_check_nccl_version=own, nccl_env_nccl_version=env)
        assert render(facts["__nccl_check_nccl_version"], **variables) == render(old_version, **variables), variables


def test_nccl_env_refusal_says_the_same():
    assert_ = task("nccl_env", "derive.yml", "Refuse an nccl.conf without NCCL_IB_HCA for a declared RDMA fabric")
    # The old fail_msg as YAML folded it (the expression's line break became a space inside the braces).
    old = (
        "ibtune_fabric declares a {{ ibtune_fabric.link_layer }} fabric, but {{ inventory_hostname }} has no ACTIVE"
        " LinkUp {{ __nccl_env_link_layer }} port (ib_facts: active {{ (ansible_facts.ibtune_rdma | default({}))"
        ".active_ports | default([]) }}), so NCCL_IB_HCA cannot be derived and NCCL would fall back to sockets:"
        " nccl_env writes no file. Bring the ports up (driver, cable, subnet manager), fix ibtune_fabric.link_layer,"
        " name the HCAs in nccl_env_vars.NCCL_IB_HCA, or set nccl_env_profile=socket for this host."
    )
    common = dict(ibtune_fabric={"link_layer": "ib"}, inventory_hostname="gpu1", __nccl_env_link_layer="InfiniBand")
    for facts in ({}, {"ibtune_rdma": {}}, {"ibtune_rdma": {"active_ports": ["mlx5_0/1"]}}):
        variables = dict(common, ansible_facts=facts)
        assert render(assert_["ansible.builtin.assert"]["fail_msg"], **variables) == render(old, **variables)
