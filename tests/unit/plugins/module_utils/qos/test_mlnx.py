"""mlnx_qos output -> state, on every real sample in the corpus and on the tool's other print branches."""

import importlib.machinery
import importlib.util
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.qos.mlnx import (
    MlnxQosParseError,
    dscp_priority,
    parse_mlnx_qos,
    pfc_priorities,
)
from tests.conftest import FIXTURES, corpus_files, read_corpus

ROOT = Path(__file__).resolve().parents[5]
DEFAULT_MAP = {d: d >> 3 for d in range(64)}


def test_corpus_has_mlnx_qos_samples(corpus_dir):
    assert len(corpus_files("mlnx_qos__")) >= 2


@pytest.mark.parametrize("path", corpus_files("mlnx_qos__"), ids=lambda p: p.name)
def test_every_corpus_sample_parses_to_lossless_pfc3(path):
    state = parse_mlnx_qos(path.read_text(encoding="utf-8"))
    # Both published samples are NVIDIA's recipe: trust dscp, PFC on priority 3 only.
    assert state["trust"] == "dscp"
    assert state["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert pfc_priorities(state) == [3]
    assert state["dscp2prio"] == DEFAULT_MAP
    assert dscp_priority(state, 26) == 3 and dscp_priority(state, 48) == 6
    assert state["cable_len"] == 7
    assert state["warnings"] == []
    assert sorted(state["prio_tc"]) == list(range(8))


def test_os_controlled_sample_details():
    state = parse_mlnx_qos(read_corpus("mlnx_qos__os-controlled-dscp-trust-pfc3-tsa-vendor.txt"))
    assert state["dcbx_mode"] == "os"
    assert state["buffer_size"] is None and state["pfc_buffer"] is None
    # mlx5's default: priority 0 on TC 1 and priority 1 on TC 0.
    assert state["prio_tc"] == {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    assert {tc["tsa"] for tc in state["tcs"].values()} == {"vendor"}


def test_firmware_controlled_sample_with_buffers_and_ets():
    state = parse_mlnx_qos(read_corpus("mlnx_qos__firmware-controlled-dcbx-buffers-ets-grouped-priorities.txt"))
    assert state["dcbx_mode"] == "firmware"
    assert state["buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    assert state["buffer_total"] == 262016
    assert state["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert state["tcs"][0] == {"tsa": "ets", "bw": 50, "ratelimit_gbps": None, "priorities": [0, 1, 2, 4, 5, 7]}
    assert state["tcs"][3]["tsa"] == "ets" and state["tcs"][3]["bw"] == 50
    assert state["tcs"][6]["tsa"] == "vendor" and state["tcs"][6]["bw"] is None
    assert state["prio_tc"][3] == 3 and state["prio_tc"][6] == 6 and state["prio_tc"][7] == 0


def test_pcp_trust_default_priority_and_ratelimit():
    state = parse_mlnx_qos((FIXTURES / "qos" / "mlnx_qos-pcp-default-prio-ratelimit.txt").read_text())
    assert state["trust"] == "pcp"
    assert state["dscp2prio"] == {}
    assert dscp_priority(state, 26) is None
    # "default priority:" is followed by "\tprio:2": that is not a DSCP map line.
    assert state["default_priority"] == 2
    assert state["buffer_total"] == 262016
    assert state["pfc"] == [0, 0, 0, 0, 1, 0, 0, 0]
    assert state["tcs"][0]["tsa"] == "strict"
    assert state["tcs"][1] == {"tsa": "ets", "bw": 100, "ratelimit_gbps": 2.5, "priorities": [4, 5, 6, 7]}


def test_warning_lines_are_collected_not_fatal():
    state = parse_mlnx_qos((FIXTURES / "qos" / "mlnx_qos-old-driver-warnings.txt").read_text())
    assert state["trust"] == "none"
    assert len(state["warnings"]) == 3
    assert any("lldpad" in w for w in state["warnings"])
    assert state["pfc"] == [0] * 8
    assert state["tcs"][0]["priorities"] == list(range(8))


@pytest.mark.parametrize("text", ["", "Interface name is required\n", "Netlink error: No such device\n"])
def test_not_mlnx_qos_output_raises(text):
    with pytest.raises(MlnxQosParseError, match="not mlnx_qos output"):
        parse_mlnx_qos(text)


def test_spaces_instead_of_tabs_parse_the_same():
    text = read_corpus("mlnx_qos__os-controlled-dscp-trust-pfc3-tsa-vendor.txt")
    assert parse_mlnx_qos(text.replace("        ", "\t")) == parse_mlnx_qos(text)


def _stand_in():
    """The lab's stand-in mlnx_qos, whose pretty_print follows mlnx-tools' line for line."""
    path = ROOT / "molecule" / "fabric_qos" / "files" / "mlnx_qos"
    loader = importlib.machinery.SourceFileLoader("ibtune_mlnx_qos_standin", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


STAND_IN = _stand_in()


@settings(max_examples=150, deadline=None)
@given(
    trust=st.sampled_from(["dscp", "pcp"]),
    pfc=st.lists(st.integers(0, 1), min_size=8, max_size=8),
    prio_tc=st.lists(st.integers(0, 7), min_size=8, max_size=8),
    tsa=st.lists(st.sampled_from([0, 2, 255]), min_size=8, max_size=8),
    bw=st.lists(st.integers(0, 100), min_size=8, max_size=8),
    overrides=st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=20),
    printall=st.booleans(),
)
def test_parser_inverts_the_tools_printing(trust, pfc, prio_tc, tsa, bw, overrides, printall):
    state = STAND_IN.default_state()
    state.update(trust=trust, pfc=pfc, prio_tc=prio_tc, tsa=tsa, tc_bw=bw)
    state["dscp2prio"] = {str(k): v for k, v in overrides.items()}
    out = io.StringIO()
    with redirect_stdout(out):
        STAND_IN.pretty_print(state, printall)
    parsed = parse_mlnx_qos(out.getvalue())
    assert parsed["trust"] == trust
    assert parsed["pfc"] == pfc
    assert parsed["prio_tc"] == dict(enumerate(prio_tc))
    if trust == "dscp":
        # Priorities with more than 8 DSCPs wrap onto several "prio:N dscp:" lines.
        assert parsed["dscp2prio"] == {d: overrides.get(d, d >> 3) for d in range(64)}
    else:
        assert parsed["dscp2prio"] == {}
    for tc in set(prio_tc):
        assert parsed["tcs"][tc]["tsa"] == {0: "strict", 2: "ets", 255: "vendor"}[tsa[tc]]
        assert parsed["tcs"][tc]["bw"] == (bw[tc] if tsa[tc] == 2 else None)
    if printall:
        assert sorted(parsed["tcs"]) == list(range(8))
    assert parsed["warnings"] == []
