"""slurm_name_problems: the launchers' Slurm-name check (common/slurm_args.check_name) for role variables."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.slurm import FilterModule

PROBLEMS = FilterModule().filters()["slurm_name_problems"]
FIX = " is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show"


def test_names_and_empty_values_pass():
    assert PROBLEMS({"p": "gpu", "q": "validation.hi", "a": "ml_team+1", "r": ""}) == []


def test_each_bad_value_is_named_in_order_with_the_fix():
    assert PROBLEMS({"nccl_check_slurm_qos": "high,low", "ok": "gpu", "nccl_check_slurm_partition": "gpu\n"}) == [
        "nccl_check_slurm_qos='high,low'" + FIX,
        "nccl_check_slurm_partition='gpu\\n'" + FIX,
    ]


def test_not_a_dict_is_refused():
    with pytest.raises(AnsibleFilterError, match="give {variable: value}"):
        PROBLEMS(["gpu"])
