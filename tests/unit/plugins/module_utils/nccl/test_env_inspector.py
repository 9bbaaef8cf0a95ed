"""The NCCL Inspector in the NCCL environment: ibtune_nccl_inspector -> the variables nccl_env writes, checked
against what the real plugin (v2.28.9-1, built on the lent H200) printed it reads."""

import re
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import PLUGIN_VARIABLES

LOG = Path(__file__).resolve().parents[4] / "fixtures" / "monitoring" / "runs-h200" / "insp1s-rank0-nccl-info.log"
PROFILE_VARS = {"ib": {"NCCL_DEBUG": "WARN"}, "roce": {}, "socket": {"NCCL_IB_DISABLE": 1}}


def _printed_names():
    """The names the real plugin lists under "NCCL Inspector Environment Variables:"."""
    lines = LOG.read_text().splitlines()
    start = lines.index("NCCL Inspector Environment Variables:")
    names = []
    for line in lines[start + 1 :]:
        match = re.match(r"^  (NCCL_INSPECTOR_[A-Z_]+) = ", line)
        if not match:
            break
        names.append(match.group(1))
    return names


def test_the_schema_knows_every_variable_the_real_plugin_reads():
    printed = _printed_names()
    assert len(printed) == 5
    assert set(printed) <= set(PLUGIN_VARIABLES)
    enabled = nccl_env.inspector_env(nccl_env.inspector_settings({"enabled": True}))
    assert set(enabled) - {"NCCL_PROFILER_PLUGIN"} <= set(printed)


def test_the_real_nccl_loaded_the_plugin_from_these_variables():
    text = LOG.read_text()
    assert "NCCL_PROFILER_PLUGIN set by environment to /tmp/ibtune-nccl-inspector/v2.28.9-1/" in text
    assert "PROFILER/Plugin: Loaded Inspector (v5)" in text
    assert "NCCL Inspector Plugin - Version: v2.28.9-1" in text  # the version.cc the build writes


def test_defaults_and_variables():
    settings = nccl_env.inspector_settings(None)
    assert settings == nccl_env.INSPECTOR_DEFAULTS and not settings["enabled"]
    assert nccl_env.inspector_env(settings) == {}
    on = nccl_env.inspector_settings({"enabled": True, "dump_dir": "/scratch/insp", "verbose": True})
    assert nccl_env.inspector_env(on) == {
        "NCCL_PROFILER_PLUGIN": "/opt/ibtune/nccl-inspector/libnccl-profiler-inspector.so",
        "NCCL_INSPECTOR_ENABLE": "1",
        "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS": "1000000",
        "NCCL_INSPECTOR_DUMP_DIR": "/scratch/insp",
        "NCCL_INSPECTOR_DUMP_VERBOSE": "1",
    }


@pytest.mark.parametrize(
    ("raw", "version", "words"),
    [
        ({"enabeld": True}, None, "unknown key(s) enabeld"),
        ({"plugin": "lib.so"}, None, "plugin='lib.so' must be an absolute path"),
        ({"dump_dir": "/a b"}, None, "absolute path without whitespace"),
        ({"dump_interval_us": 0}, None, "positive number of microseconds"),
        ({"dump_interval_us": "1000000"}, None, "positive number of microseconds"),
        ({"enabled": "yes"}, None, "must be true or false"),
        ({"dump_interval_us": 500}, "v2.28.9-1", "sleeps the part below one second as nanoseconds"),
        ({"dump_interval_us": 1500000}, "v2.28.3-1", "use 1000000 (1 s)"),
        ("on", None, "must be a dict"),
    ],
)
def test_bad_settings_say_which_key_and_how_to_fix_it(raw, version, words):
    with pytest.raises(nccl_env.NcclEnvPlanError) as info:
        nccl_env.inspector_settings(raw, version)
    assert words in str(info.value)


def test_sub_second_intervals_are_fine_from_2_30_and_when_the_tag_is_unknown():
    assert nccl_env.inspector_settings({"dump_interval_us": 500}, "v2.30.7-1")["dump_interval_us"] == 500
    assert nccl_env.inspector_settings({"dump_interval_us": 500})["dump_interval_us"] == 500
    assert nccl_env.inspector_settings({"dump_interval_us": 3000000}, "v2.28.9-1")["dump_interval_us"] == 3000000


def test_plan_env_lays_the_inspector_under_the_overrides():
    plan = nccl_env.plan_env("socket", PROFILE_VARS, inspector={"enabled": True})
    assert plan["env"]["NCCL_INSPECTOR_ENABLE"] == "1"
    assert plan["sources"]["NCCL_PROFILER_PLUGIN"] == "inspector"
    overridden = nccl_env.plan_env(
        "socket",
        PROFILE_VARS,
        overrides={"NCCL_INSPECTOR_DUMP_VERBOSE": None, "NCCL_INSPECTOR_DUMP_DIR": "/scratch"},
        inspector={"enabled": True},
    )
    assert "NCCL_INSPECTOR_DUMP_VERBOSE" not in overridden["env"]
    assert overridden["env"]["NCCL_INSPECTOR_DUMP_DIR"] == "/scratch"
    assert overridden["sources"]["NCCL_INSPECTOR_DUMP_DIR"] == "override"
    assert "NCCL_PROFILER_PLUGIN" not in nccl_env.plan_env("socket", PROFILE_VARS)["env"]
    with pytest.raises(nccl_env.NcclEnvPlanError):
        nccl_env.plan_env("socket", PROFILE_VARS, inspector={"enabled": True, "plugin": "x"})


@pytest.mark.parametrize("strict", [False, True])
def test_the_lint_accepts_the_inspector_variables(strict):
    env = nccl_env.inspector_env(nccl_env.inspector_settings({"enabled": True}))
    errors, warnings = nccl_env.lint(env, nccl_version="2.28.9", strict=strict)
    assert errors == [] and warnings == []


def test_the_lint_catches_a_typo_and_a_bad_value_of_an_inspector_variable():
    errors, _warnings = nccl_env.lint({"NCCL_INSPECTOR_ENABEL": "1", "NCCL_INSPECTOR_DUMP_VERBOSE": "yes"})
    messages = " | ".join(e["message"] for e in errors)
    assert "did you mean NCCL_INSPECTOR_ENABLE" in messages
    assert "NCCL_INSPECTOR_DUMP_VERBOSE=yes must be 0 or 1" in messages


def test_the_rendered_conf_reads_back():
    env = nccl_env.plan_env("ib", PROFILE_VARS, inspector={"enabled": True})["env"]
    parsed, problems = nccl_env.parse_conf(nccl_env.render_conf(env))
    assert parsed == env and not problems
