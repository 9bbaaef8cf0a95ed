"""The nccl_env_plan filter: the role's one entry into module_utils/nccl_env.plan_env."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.nccl_env import FilterModule

PLAN = FilterModule().filters()["nccl_env_plan"]
PROFILE_VARS = {"ib": {"NCCL_DEBUG": "WARN"}, "roce": {"NCCL_DEBUG": "WARN"}, "socket": {"NCCL_IB_DISABLE": 1}}


def test_empty_profile_follows_ibtune_fabric():
    plan = PLAN({"profile": "", "profile_vars": PROFILE_VARS, "fabric": {"link_layer": "Ethernet", "rails": 8}})
    assert plan["profile"] == "roce" and plan["link_layer"] == "Ethernet"


def test_errors_are_one_sentence_filter_errors():
    with pytest.raises(AnsibleFilterError, match="nccl_env: ibtune_fabric.link_layer='ROCE' is not InfiniBand"):
        PLAN({"profile": "", "profile_vars": PROFILE_VARS, "fabric": {"link_layer": "ROCE"}})
    with pytest.raises(AnsibleFilterError, match="nccl_env_profile_vars has no entry for profile roce"):
        PLAN({"profile": "roce", "profile_vars": {"ib": {}}})
    with pytest.raises(AnsibleFilterError, match="unknown key"):
        PLAN({"profile": "ib", "profile_vars": PROFILE_VARS, "hca": "x"})


PROFILE = FilterModule().filters()["nccl_env_profile"]


def test_profile_filter_is_the_one_line_the_role_uses():
    assert PROFILE("", {"link_layer": "Ethernet"}) == "roce"
    assert PROFILE("", {}) == "ib"
    assert PROFILE("socket", {"link_layer": "Ethernet"}) == "socket"
    with pytest.raises(AnsibleFilterError, match="nccl_env: ibtune_fabric.link_layer='ROCE'"):
        PROFILE("", {"link_layer": "ROCE"})


@pytest.mark.parametrize(("use_qos", "expected"), [(True, "106"), ("True", "106"), (False, None), ("False", None)])
def test_the_qos_model_gives_nccl_ib_tc_only_with_use_qos(use_qos, expected):
    model = {"mode": "roce_lossless"}
    plan = PLAN({"profile": "roce", "profile_vars": PROFILE_VARS, "qos_model": model, "use_qos": use_qos})
    assert plan["env"].get("NCCL_IB_TC") == expected
