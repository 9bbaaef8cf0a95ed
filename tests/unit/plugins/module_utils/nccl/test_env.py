"""nccl_env: lint a dict of NCCL variables; parse and render NCCL's KEY=VALUE files as NCCL reads them."""

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import VARIABLES
from tests.conftest import FIXTURES

# The seed's advice, as a cluster would write it (NCCL_IB_TC=41: DSCP 10 + ECT1, see FACTS.md).
SEED = {
    "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1",
    "NCCL_IB_QPS_PER_CONNECTION": 4,
    "NCCL_IB_TIMEOUT": 22,
    "NCCL_NET_GDR_LEVEL": "PXB",  # the seed wrote the legacy 2, which NCCL reads as PXB
    "NCCL_IB_TC": 41,
    "NCCL_IB_SL": 0,
    "NCCL_SOCKET_IFNAME": "=eth0",
    "NCCL_CROSS_NIC": 0,
    "NCCL_IB_RETRY_CNT": 7,
    "NCCL_IB_SPLIT_DATA_ON_QPS": 0,
    "NCCL_DEBUG": "WARN",
}


def messages(items, variable=None):
    return [i["message"] for i in items if variable is None or i["variable"] == variable]


def test_seed_configuration_passes_clean():
    errors, warnings = nccl_env.lint(SEED, nccl_version="2.28.9", link_layer="Ethernet")
    assert errors == []
    assert warnings == []


def test_a_close_typo_of_a_known_name_is_an_error():
    errors, _unused = nccl_env.lint({"NCCL_IB_TIMOUT": "22", "NCCL_SOCKET_IFNAMES": "eth0", "NCCL_IBHCA": "x"})
    by_var = {e["variable"]: e["message"] for e in errors}
    assert "did you mean NCCL_IB_TIMEOUT? (one typo away)" in by_var["NCCL_IB_TIMOUT"]
    assert "did you mean NCCL_SOCKET_IFNAME? (one typo away)" in by_var["NCCL_SOCKET_IFNAMES"]
    assert "did you mean NCCL_IB_HCA? (one typo away)" in by_var["NCCL_IBHCA"]


def test_an_unknown_name_far_from_any_known_one_is_a_warning_with_did_you_mean():
    """NCCL may be newer than the schema: a name that is no typo of a known one only warns."""
    errors, warnings = nccl_env.lint({"NCCL_IB_FUTURE_KNOB": "1", "NCCL_ZZZZZZZZZZZZ": "1"})
    assert errors == []
    by_var = {w["variable"]: w["message"] for w in warnings}
    assert "is not read by NCCL 2.30.7" in by_var["NCCL_ZZZZZZZZZZZZ"]
    assert "did you mean" not in by_var["NCCL_ZZZZZZZZZZZZ"]
    assert "did you mean" in by_var["NCCL_IB_FUTURE_KNOB"] or "a newer NCCL" in by_var["NCCL_IB_FUTURE_KNOB"]


def test_did_you_mean_on_a_far_name():
    _errors, warnings = nccl_env.lint({"NCCL_SOCKET_IFNAME_LIST": "eth0"})
    assert "did you mean NCCL_SOCKET_IFNAME" in warnings[0]["message"]


def test_strict_mode_makes_every_unknown_name_an_error():
    errors, warnings = nccl_env.lint({"NCCL_ZZZZZZZZZZZZ": "1"}, strict=True)
    assert warnings == []
    assert "strict mode" in errors[0]["message"]
    _env, errors, _warnings = nccl_env.lint_conf("NCCL_ZZZZZZZZZZZZ=1\n", strict=True)
    assert errors and errors[0]["line"] == 1


@pytest.mark.parametrize(
    "name",
    ["NCCL_IB_PKEY", "NCCL_IB_USE_INLINE", "NCCL_IB_MERGE_VFS", "NCCL_SOCKET_RCVBUF", "NCCL_IB_DATA_DIRECT"],
)
def test_variables_nccl_2_30_reads_are_accepted(name):
    """These were hard errors ("not an NCCL variable") before the schema was completed from NCCL's source."""
    errors, warnings = nccl_env.lint({name: "1"}, strict=True)
    assert errors == []
    assert warnings == []


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("NCCL_IB_TIMEOUT", 40, "out of range: use 0..31 (NCCL's default is 20)"),
        ("NCCL_IB_TIMEOUT", "-1", "out of range"),
        ("NCCL_IB_RETRY_CNT", 8, "0..7"),
        ("NCCL_IB_QPS_PER_CONNECTION", 0, "1..128"),
        ("NCCL_IB_QPS_PER_CONNECTION", "four", "is not an integer"),
        ("NCCL_IB_SL", 16, "-1..15"),
        ("NCCL_IB_SL", -2, "-1..15"),
        ("NCCL_IB_TC", 256, "-1..255"),
        ("NCCL_IB_TC", "0400", "out of range (read as 256)"),
        ("NCCL_IB_TC", "089", "octal and stops at '8'"),
        ("NCCL_IB_TC", "106abc", "NCCL reads only '106'"),
        ("NCCL_NET_GDR_LEVEL", "NODE", "0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS"),
        ("NCCL_NET_GDR_LEVEL", "pxb", "case-sensitively (strcmp), so it ignores 'pxb'"),
        ("NCCL_P2P_LEVEL", "nvl", "write NVL"),
        ("NCCL_NET_MERGE_LEVEL", "pxb", "case-sensitively"),
        ("NCCL_IB_GDR_LEVEL", "PHB", "NCCL_IB_GDR_LEVEL was removed in NCCL 2.4.0: use NCCL_NET_GDR_LEVEL"),
        ("NCCL_IB_HCA", "=mlx5", "no device has that name"),
        ("NCCL_IB_HCA", "=mlx5:1", "fall back to sockets"),
        ("NCCL_CROSS_NIC", 3, "0, 1, 2"),
        ("NCCL_DEBUG", "DEBUG", "VERSION, WARN, INFO"),
        ("NCCL_IB_DISABLE", 2, "must be 0 or 1"),
        ("NCCL_IB_ADAPTIVE_ROUTING", "yes", "must be 0 or 1"),
        ("NCCL_DEBUG_SUBSYS", "INIT,NETWORK", "'NETWORK'"),
        ("NCCL_ALGO", "ring,fast", "'fast'"),
        ("NCCL_PROTO", "allreduce:LL256", "'LL256'"),
        ("NCCL_ALGO", "allgathr:ring", "function 'allgathr'"),
        ("NCCL_IB_HCA", "=mlx5_0:x", "dev[:port[:rail[:plane]]]"),
        ("NCCL_SOCKET_IFNAME", "eth0,,eth1", "interface names"),
        ("NCCL_IB_ADDR_RANGE", "10.0.0.0/33", "CIDR"),
        ("NCCL_TOPO_FILE", "~/topo.xml", "does not expand"),
        ("NCCL_NETDEVS_POLICY", "MAX:0", "MAX:N"),
        ("NCCL_CTA_POLICY", "FAST", "CTA policy"),
        ("NCCL_NTHREADS", 1024, "64, 128, 256, 512"),
        ("NCCL_SOCKET_IFNAME", " eth0", "whitespace"),
        ("NCCL_DEBUG", "", "is empty"),
    ],
)
def test_type_and_range_errors(name, value, needle):
    errors, _unused = nccl_env.lint({name: value})
    assert errors, (name, value)
    assert needle in errors[0]["message"]
    assert errors[0]["variable"] == name


def test_removed_variable_is_an_error_naming_the_replacement():
    errors, _unused = nccl_env.lint({"NCCL_IB_CUDA_SUPPORT": 1, "NCCL_LL_THRESHOLD": 0})
    text = " ".join(messages(errors))
    assert "NCCL_IB_CUDA_SUPPORT was removed in NCCL 2.4.0: use NCCL_NET_GDR_LEVEL" in text
    assert "NCCL_LL_THRESHOLD was removed in NCCL 2.5" in text


def test_removed_variable_only_warns_for_an_nccl_that_still_reads_it():
    errors, warnings = nccl_env.lint({"NCCL_LL_THRESHOLD": 0}, nccl_version="2.4.8")
    assert errors == []
    assert "still reads it" in warnings[0]["message"]


def test_deprecated_names_warn_with_replacement():
    errors, warnings = nccl_env.lint({"NCCL_MAX_NCHANNELS": 16, "NCCL_MIN_NRINGS": 4})
    assert errors == []
    text = " ".join(messages(warnings))
    assert "NCCL_MAX_NCHANNELS is deprecated since NCCL 2.17: use NCCL_MAX_CTAS" in text
    assert "NCCL_MIN_NRINGS is deprecated" in text


@pytest.mark.parametrize(
    ("env", "variable", "needle"),
    [
        ({"NCCL_DEBUG": "INFO"}, "NCCL_DEBUG", "debugging setting"),
        ({"NCCL_DEBUG": "trace"}, "NCCL_DEBUG", "debugging setting"),
        ({"NCCL_DEBUG_SUBSYS": "INIT,NET"}, "NCCL_DEBUG_SUBSYS", "debugging setting left on"),
        ({"NCCL_DEBUG_FILE": "/tmp/nccl.%h.%p"}, "NCCL_DEBUG_FILE", "debugging setting left on"),
        ({"NCCL_P2P_DISABLE": 1}, "NCCL_P2P_DISABLE", "debugging setting"),
        ({"NCCL_ALGO": "Ring"}, "NCCL_ALGO", "is forced to Ring"),
        ({"NCCL_PROTO": "^LL128"}, "NCCL_PROTO", "is forced to ^LL128"),
        ({"NCCL_ALGO": "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"}, "NCCL_ALGO", "forced"),
        ({"NCCL_IB_HCA": "mlx5_1"}, "NCCL_IB_HCA", "mlx5_10..mlx5_19"),
        ({"NCCL_IB_HCA": "^mlx5_1"}, "NCCL_IB_HCA", "write ^=mlx5_1"),
        ({"NCCL_NET_GDR_LEVEL": 3}, "NCCL_NET_GDR_LEVEL", "legacy integer level, which NCCL reads as PHB"),
        ({"NCCL_NET_GDR_LEVEL": 2}, "NCCL_NET_GDR_LEVEL", "which NCCL reads as PXB: write PXB"),
        ({"NCCL_NET_GDR_LEVEL": 7}, "NCCL_NET_GDR_LEVEL", "which NCCL reads as SYS"),
        ({"NCCL_IB_TC": "0152"}, "NCCL_IB_TC", "octal 106: write 106"),
        ({"NCCL_IB_HCA": "mlx5_1:1,mlx5_2:1"}, "NCCL_IB_HCA", "write =mlx5_1:1,mlx5_2:1 for an exact list"),
        ({"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}, "NCCL_IB_HCA", "full device name mlx5_1 as a prefix"),
        ({"NCCL_IB_HCA": "mlx5_10"}, "NCCL_IB_HCA", "mlx5_100..mlx5_109"),
        ({"NCCL_IB_HCA": "mlx5,mlx5_1"}, "NCCL_IB_HCA", "name every device in full"),
        ({"NCCL_IB_HCA": "bnxt_re1"}, "NCCL_IB_HCA", "bnxt_re10..bnxt_re19"),
        ({"NCCL_IB_TIMEOUT": 0}, "NCCL_IB_TIMEOUT", "infinite"),
        ({"NCCL_IB_TC": 107}, "NCCL_IB_TC", "both ECN bits"),
        ({"NCCL_ASYNC_ERROR_HANDLING": 1}, "NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_ASYNC_ERROR_HANDLING"),
        ({"CUDA_VISIBLE_DEVICES": "0,1"}, "CUDA_VISIBLE_DEVICES", "not an NCCL variable"),
        ({"NCCL_IB_DISABLE": 1, "NCCL_IB_HCA": "=mlx5_0"}, "NCCL_IB_HCA", "NCCL_IB_DISABLE=1"),
    ],
)
def test_warnings(env, variable, needle):
    errors, warnings = nccl_env.lint(env)
    assert errors == []
    assert any(needle in m for m in messages(warnings, variable)), warnings


def test_exact_hca_lists_do_not_warn():
    for value in ("=mlx5_0:1,mlx5_1:1", "^=mlx5_1,mlx5_4", "=mlx5_0:1:0:0,mlx5_1:1:0:1", "=mlx5_0::0:0"):
        errors, warnings = nccl_env.lint({"NCCL_IB_HCA": value})
        assert (errors, warnings) == ([], []), value


def test_gid_index_on_infiniband_warns():
    _unused, warnings = nccl_env.lint({"NCCL_IB_GID_INDEX": 3}, link_layer="InfiniBand")
    assert "InfiniBand ports" in warnings[0]["message"]


def test_gid_index_on_roce_depends_on_the_nccl_version():
    _unused, new = nccl_env.lint({"NCCL_IB_GID_INDEX": 3}, nccl_version="2.21.5", link_layer="Ethernet")
    _unused, old = nccl_env.lint({"NCCL_IB_GID_INDEX": 3}, nccl_version="2.18.3", link_layer="Ethernet")
    _unused, unknown = nccl_env.lint({"NCCL_IB_GID_INDEX": 3}, link_layer="Ethernet")
    _unused, auto = nccl_env.lint({"NCCL_IB_GID_INDEX": -1}, nccl_version="2.28.9")
    assert "picks the RoCE v2 GID itself" in new[0]["message"]
    assert old == []
    assert "NCCL >= 2.21" in unknown[0]["message"]
    assert auto == []


def test_variable_newer_than_the_nccl_version_warns():
    _unused, warnings = nccl_env.lint({"NCCL_SOCKET_RETRY_CNT": 10}, nccl_version="2.19.3")
    assert "appeared in NCCL 2.24: NCCL 2.19.3 ignores it" in warnings[0]["message"]


def test_cross_checks():
    errors, _unused = nccl_env.lint({"NCCL_SOCKET_NTHREADS": 16, "NCCL_NSOCKS_PERTHREAD": 8})
    assert "exceeds NCCL's limit of 64" in errors[0]["message"]
    errors, _unused = nccl_env.lint({"NCCL_MIN_CTAS": 32, "NCCL_MAX_CTAS": 16})
    assert "above NCCL_MAX_CTAS" in errors[0]["message"]
    errors, _unused = nccl_env.lint({"NCCL_IB_DISABLE": 1, "NCCL_NET": "IB"})
    assert "contradicts NCCL_IB_DISABLE=1" in errors[0]["message"]


def test_values_from_yaml_are_rendered_as_nccl_reads_them():
    assert nccl_env.to_text(True) == "1"
    assert nccl_env.to_text(False) == "0"
    assert nccl_env.to_text(22) == "22"
    assert nccl_env.to_text(4.0) == "4"
    errors, _unused = nccl_env.lint({"NCCL_IB_DISABLE": True, "NCCL_IB_TIMEOUT": 22.0})
    assert errors == []
    errors, _unused = nccl_env.lint(
        {"NCCL_IB_TIMEOUT": None, "NCCL_IB_HCA": ["mlx5_0"], "NCCL_DEBUG": "WARN\nNCCL_X=1"}
    )
    assert sorted(e["variable"] for e in errors) == ["NCCL_DEBUG", "NCCL_IB_HCA", "NCCL_IB_TIMEOUT"]


def test_bad_names():
    errors, _unused = nccl_env.lint({"NCCL IB": "1", "1NCCL": "2"})
    assert len(errors) == 2


# --- files ---------------------------------------------------------------------------------------


def test_parse_conf_reads_like_nccl():
    text = (
        "# comment\nNCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n\nnot a variable line\nNCCL_DEBUG=INFO\nNCCL_IB_HCA=\n"
    )
    env, problems = nccl_env.parse_conf(text)
    assert env == {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "=ens1f0", "NCCL_IB_HCA": ""}
    by_line = {p["line"]: p for p in problems}
    assert "NCCL keeps the first value (line 2)" in by_line[6]["message"]
    assert by_line[6]["severity"] == "warning"
    assert "has no '='" in by_line[5]["message"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("NCCL_DEBUG = WARN", "keeps the spaces around the name"),
        ('NCCL_SOCKET_IFNAME="eth0"', "does not strip quotes"),
        ("NCCL_SOCKET_IFNAME='eth0'", "does not strip quotes"),
        ("export NCCL_DEBUG=WARN", "starts with 'export'"),
        ("NCCL_DEBUG=WARN # quiet", "no end-of-line comments"),
        ("  # NCCL_DEBUG=INFO", "comment must start in column 1"),
    ],
)
def test_parse_conf_flags_what_nccl_would_misread(line, needle):
    _unused, problems = nccl_env.parse_conf(line + "\n")
    assert problems and needle in problems[0]["message"]
    assert problems[0]["severity"] == "error"
    assert problems[0]["line"] == 1


def test_crlf_is_flagged():
    env, problems = nccl_env.parse_conf("NCCL_DEBUG=WARN\r\n")
    assert env == {"NCCL_DEBUG": "WARN"}
    assert "CR" in problems[0]["message"]


def test_lint_conf_merges_file_and_value_problems():
    env, errors, warnings = nccl_env.lint_conf("NCCL_IB_TIMEOUT=99\nNCCL_DEBUG = INFO\nNCCL_IB_HCA=mlx5_1\n")
    assert env["NCCL_IB_TIMEOUT"] == "99"
    assert any(e["variable"] == "NCCL_IB_TIMEOUT" for e in errors)
    assert any(e.get("line") == 2 for e in errors)
    assert any(w["variable"] == "NCCL_IB_HCA" for w in warnings)


def test_the_file_the_role_wrote_on_the_gpu_machine_lints_clean_but_for_debug():
    text = (FIXTURES / "nccl" / "h200x2-rendered-nccl.conf").read_text()
    env, errors, warnings = nccl_env.lint_conf(text, nccl_version="2.28.9")
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_IB_TIMEOUT": "22"}
    assert errors == []
    assert messages(warnings) == ["NCCL_DEBUG=INFO is a debugging setting: remove it once the investigation is over"]


def test_render_is_sorted_plain_key_value():
    text = nccl_env.render_conf({"NCCL_IB_TIMEOUT": 22, "NCCL_DEBUG": "WARN", "NCCL_IB_DISABLE": True})
    assert text.splitlines()[1:] == ["NCCL_DEBUG=WARN", "NCCL_IB_DISABLE=1", "NCCL_IB_TIMEOUT=22"]
    assert text.startswith("#")


_NAMES = st.sampled_from(sorted(VARIABLES))
_VALUES = st.text(alphabet=string.ascii_letters + string.digits + "=^,:._-/", min_size=0, max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_NAMES, _VALUES, max_size=12))
def test_render_then_parse_round_trips(env):
    """Whatever the role renders, NCCL reads back unchanged (no value problem appears in the file)."""
    parsed, problems = nccl_env.parse_conf(nccl_env.render_conf(env))
    assert parsed == env
    assert [p for p in problems if p["severity"] == "error" and "comment" not in p["message"]] == []


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), st.one_of(st.text(max_size=20), st.integers(), st.booleans())))
def test_lint_never_raises_and_always_returns_issues_of_the_same_shape(env):
    errors, warnings = nccl_env.lint(env)
    for item in errors + warnings:
        assert set(item) == {"variable", "value", "message"}
        assert isinstance(item["message"], str) and item["message"]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-5, max_value=300))
def test_ib_tc_range_property(value):
    errors, _unused = nccl_env.lint({"NCCL_IB_TC": value})
    assert (errors == []) == (-1 <= value <= 255)


@pytest.mark.parametrize("value", ["mlx5", "mlx5:1", "^mlx4", "mlx5,bnxt_re", "mlx5_0:1", "bnxt_re0"])
def test_a_bare_family_prefix_is_nccls_own_usage_and_does_not_warn(value):
    """NCCL's docs use NCCL_IB_HCA=mlx5; '=mlx5' would match no device (matchIfList compares whole names)."""
    errors, warnings = nccl_env.lint({"NCCL_IB_HCA": value})
    assert errors == []
    assert warnings == []


def test_full_device_name_prefix_advice_is_an_exact_list_never_a_bare_family():
    _errors, warnings = nccl_env.lint({"NCCL_IB_HCA": "mlx5_1"})
    (message,) = messages(warnings, "NCCL_IB_HCA")
    assert "mlx5_10..mlx5_19" in message
    assert "write =mlx5_1 for an exact list" in message
    assert "=mlx5 " not in message and not message.endswith("=mlx5")


def test_example_inventory_writes_the_seeds_legacy_gdr_level_as_nccl_reads_it():
    """The seed's NCCL_NET_GDR_LEVEL=2 is PXB (src/graph/paths.cc levelsOldToNew), not PHB."""
    import yaml

    from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import LEGACY_LEVELS

    path = FIXTURES.parent.parent / "inventories" / "example" / "group_vars" / "gpu_nodes.yml"
    env = yaml.safe_load(path.read_text())["nccl_env_vars"]
    assert env["NCCL_NET_GDR_LEVEL"] == LEGACY_LEVELS[2] == "PXB"
    errors, warnings = nccl_env.lint(env, link_layer="InfiniBand", strict=True)
    assert errors == [] and warnings == []
