"""role_vars: misspelled role variables against the roles' real meta/argument_specs.yml."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.ibtune.fabric.plugins.module_utils.common.role_vars import (
    check,
    spec_options,
    suggest,
    summary,
)

ROOT = Path(__file__).resolve().parents[5]


def _options(role):
    return spec_options(yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text()))


def test_every_declared_variable_passes():
    options = _options("rdma_stack")
    assert check(dict.fromkeys(options, "x"), options, "rdma_stack_", "rdma_stack") == []


@pytest.mark.parametrize(
    "role,typo,meant",
    [
        ("rdma_stack", "rdma_stack_gdrr", "rdma_stack_gdr"),
        ("rdma_stack", "rdma_stack_allow_reboots", "rdma_stack_allow_reboot"),
        ("fabric_qos", "fabric_qos_apply_switch", "fabric_qos_apply_switches"),
        ("fabric_validate", "fabric_validate_expect_rate", "fabric_validate_expect_rate_gbps"),
        ("nccl_env", "nccl_env_var", "nccl_env_vars"),
    ],
)
def test_typo_is_reported_with_the_name_meant(role, typo, meant):
    found = check({typo: 1}, _options(role), role + "_", role)
    assert [(f["name"], f["suggestion"], f["severity"]) for f in found] == [(typo, meant, "warning")]
    assert "did you mean %s?" % meant in found[0]["msg"] and typo in found[0]["msg"]


def test_strict_names_turn_the_typo_into_an_error():
    options = _options("rdma_stack")
    found = check(
        {"rdma_stack_gdrr": "dmabuf", "rdma_stack_work_dirr": "/x"},
        options,
        "rdma_stack_",
        "rdma_stack",
        ["rdma_stack_gdr"],
    )
    by_name = {f["name"]: f["severity"] for f in found}
    assert by_name == {"rdma_stack_gdrr": "error", "rdma_stack_work_dirr": "warning"}
    assert summary(found, "rdma_stack").startswith("rdma_stack_gdrr is not a variable")
    assert "rdma_stack_gdr decides" in summary(found, "rdma_stack")


def test_other_prefixes_internal_and_ignored_names_are_not_checked():
    options = _options("fabric_qos")
    variables = {"__fabric_qos_model": {}, "fabric_validate_foo": 1, "fabric_qos_extra": 1, "ibtune_qos": {}}
    assert check(variables, options, "fabric_qos_", "fabric_qos", ignore=["fabric_qos_extra"]) == []


def test_nothing_close_gives_no_suggestion():
    found = check({"rdma_stack_zzzzzzzzzzzz": 1}, _options("rdma_stack"), "rdma_stack_", "rdma_stack")
    assert found[0]["suggestion"] is None and "did you mean" not in found[0]["msg"]


SPEC = {
    "argument_specs": {
        "main": {
            "options": {
                "x_limits": {
                    "type": "dict",
                    "options": {"symbol_error": {"type": "int"}, "nested": {"type": "dict", "options": {"depth": {}}}},
                },
                "x_free": {"type": "dict"},
            }
        }
    }
}


def test_unknown_keys_of_dict_options_that_declare_them():
    options = spec_options(SPEC)
    found = check(
        {"x_limits": {"symbol_errors": 1, "nested": {"dept": 2}}, "x_free": {"anything": 1}},
        options,
        "x_",
        "x",
        strict=["x_limits"],
    )
    assert [(f["name"], f["suggestion"], f["severity"]) for f in found] == [
        ("x_limits.nested.dept", "x_limits.nested.depth", "error"),
        ("x_limits.symbol_errors", "x_limits.symbol_error", "error"),
    ]


def test_missing_entry_point_names_what_exists():
    with pytest.raises(ValueError, match="no entry point 'other'.*main"):
        spec_options(SPEC, "other")


def test_suggest_uses_closeness():
    assert suggest("rdma_stack_memlok", ["rdma_stack_memlock", "rdma_stack_gdr"]) == "rdma_stack_memlock"
