"""nccl_tests: nccl-tests' text tables (every corpus sample, verbatim), -J JSON, and the busbw formulas."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import nccl_tests
from tests.conftest import FIXTURES, corpus_files, read_corpus

EXPECTED = {
    "nccl-tests__all_gather_perf-1node-8xA100-old-format-no-root-col-launch-mode-line.txt": {
        "rows": 34,
        "max_size": 8589934592,
        "max_busbw": 223.39,
        "max_ip_busbw": 230.07,
        "avg": 58.2651,
        "nranks": 8,
        "stray": 1,
        "wrong_total": None,
        "collective": "all_gather",
        "redop": None,
    },
    "nccl-tests__all_reduce_perf-2node-16xH100-gcp-a3mega.txt": {
        "rows": 31,
        "max_size": 8589934592,
        "max_busbw": 338.82,
        "max_ip_busbw": 337.35,
        "avg": 70.742,
        "nranks": 16,
        "stray": 0,
        "wrong_total": 0,
        "collective": "all_reduce",
        "redop": "sum",
    },
    "nccl-tests__all_reduce_perf-2node-16xH200-roce-baremetal.txt": {
        "rows": 3,
        "max_size": 9663676416,
        "max_busbw": 488.81,
        "max_ip_busbw": 486.84,
        "avg": 475.782,
        "nranks": 16,
        "stray": 0,
        "wrong_total": 0,
        "collective": "all_reduce",
        "redop": "sum",
    },
}


def test_every_corpus_table_is_covered():
    assert sorted(p.name for p in corpus_files("nccl-tests__")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_tables(name):
    expected = EXPECTED[name]
    parsed = nccl_tests.parse_text(read_corpus(name))
    summary = nccl_tests.summarize(parsed)
    assert len(parsed["rows"]) == expected["rows"]
    assert summary["max_size_bytes"] == expected["max_size"]
    assert summary["max_size_busbw"] == expected["max_busbw"]
    assert parsed["rows"][-1]["in_place_busbw"] == expected["max_ip_busbw"]
    assert parsed["avg_busbw"] == expected["avg"]
    assert parsed["nranks"] == expected["nranks"]
    assert parsed["stray_lines"] == expected["stray"]
    assert parsed["out_of_bounds"] == 0
    assert summary["wrong_total"] == expected["wrong_total"]
    assert parsed["rows"][-1]["redop"] == expected["redop"]
    sizes = [r["size"] for r in parsed["rows"]]
    assert sizes == sorted(sizes)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_busbw_formula_reproduces_nccl_tests(name):
    """busbw = algbw x factor(n) and algbw = size / time, to the printed precision."""
    expected = EXPECTED[name]
    parsed = nccl_tests.parse_text(read_corpus(name))
    factor = nccl_tests.bus_factor(expected["collective"], parsed["nranks"])
    for row in parsed["rows"]:
        if row["algbw"] < 1:
            continue
        assert row["busbw"] == pytest.approx(row["algbw"] * factor, abs=0.011, rel=0.001)
        assert nccl_tests.algbw_gbs(row["size"], row["time_us"]) == pytest.approx(row["algbw"], rel=0.01)


def test_old_format_columns():
    parsed = nccl_tests.parse_text(read_corpus(sorted(EXPECTED)[0]))
    first = parsed["rows"][0]
    assert first["size"] == 0
    assert first["type"] == "float"
    assert first["root"] is None
    assert first["wrong"] is None  # "N/A": validation off
    assert first["time_us"] == 34.27


def test_table_with_stray_lines_and_failure_text():
    text = read_corpus("nccl-tests__all_reduce_perf-2node-16xH200-roce-baremetal.txt")
    lines = text.splitlines()
    lines.insert(22, "fs-207:6287:6300 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA")
    lines.insert(23, "fs-207: Test NCCL failure common.cu:1119 'unhandled system error'")
    lines.insert(24, "   123   garbage")
    parsed = nccl_tests.parse_text("\n".join(lines))
    assert len(parsed["rows"]) == 3
    assert parsed["stray_lines"] == 3


def test_new_header_lines():
    text = (
        "# nccl-tests version 2.17.6 nccl-headers=22809 nccl-library=22809\n"
        "# Collective test starting: all_reduce_perf\n"
        + read_corpus("nccl-tests__all_reduce_perf-2node-16xH200-roce-baremetal.txt")
    )
    parsed = nccl_tests.parse_text(text)
    assert parsed["nccl_version_code"] == 22809
    assert nccl_tests.version_from_code(parsed["nccl_version_code"]) == "2.28.9"
    assert parsed["collective"] == "all_reduce_perf"
    assert parsed["nccl_tests_version"] == "2.17.6"


def test_no_table():
    parsed = nccl_tests.parse_text("mpirun: command not found\n")
    assert parsed["rows"] == []
    assert nccl_tests.summarize(parsed) == {"max_size_bytes": None, "max_size_busbw": None, "wrong_total": None}


def test_json_format():
    parsed = nccl_tests.parse_json((FIXTURES / "nccl" / "nccl-tests-all_reduce-J-format.json").read_text())
    assert len(parsed["rows"]) == 3
    last = parsed["rows"][-1]
    assert last["size"] == 4294967296
    assert last["root"] == -1
    assert last["busbw"] == 346.61
    assert last["in_place_wrong"] is None  # "nan"
    assert parsed["avg_busbw"] == 337.64
    assert parsed["out_of_bounds"] == 0
    assert parsed["hosts"] == ["gpu01"]
    assert nccl_tests.version_from_code(parsed["nccl_version_code"]) == "2.28.9"
    assert nccl_tests.summarize(parsed)["max_size_busbw"] == 346.61


def test_json_rejects_other_documents():
    with pytest.raises(ValueError):
        nccl_tests.parse_json(json.dumps({"hello": 1}))


def test_gpu_proof_rows_follow_the_formulas():
    """The torch backend's rows on the real H200 run: busbw = size/time x nccl-tests' factor, n = 2."""
    doc = json.loads((FIXTURES / "nccl" / "h200x2-gpu-proof-results.json").read_text())
    for tag in ("defaults", "rendered"):
        test = doc[tag]["test"]
        assert test["nranks"] == 2
        for collective, res in test["collectives"].items():
            factor = nccl_tests.bus_factor(collective, 2)
            for row in res["rows"]:
                assert row["wrong"] == 0
                expect = nccl_tests.busbw_gbs(collective, 2, row["size"], row["time_us"])
                assert row["busbw"] == pytest.approx(expect, rel=1e-3)
                assert row["busbw"] == pytest.approx(row["algbw"] * factor, rel=1e-3)
    assert doc["rendered"]["test"]["max_size_busbw"] >= 0.98 * 346.6


@pytest.mark.parametrize(
    ("collective", "n", "factor"),
    [
        ("all_reduce", 2, 1.0),
        ("all_reduce", 16, 1.875),
        ("all_reduce_perf", 8, 1.75),
        ("all_gather", 8, 0.875),
        ("reduce_scatter", 2, 0.5),
        ("alltoall", 4, 0.75),
        ("broadcast", 8, 1.0),
        ("sendrecv", 2, 1.0),
    ],
)
def test_bus_factor(collective, n, factor):
    assert nccl_tests.bus_factor(collective, n) == factor


def test_bus_factor_rejects():
    with pytest.raises(ValueError):
        nccl_tests.bus_factor("all_scatter", 2)
    with pytest.raises(ValueError):
        nccl_tests.bus_factor("all_reduce", 0)


def test_sizes():
    assert nccl_tests.parse_size("8") == 8
    assert nccl_tests.parse_size("64M") == 64 << 20
    assert nccl_tests.parse_size("4G") == 4 << 30
    assert nccl_tests.parse_size("1KiB") == 1024
    with pytest.raises(ValueError):
        nccl_tests.parse_size("4 GB please")
    assert nccl_tests.size_series("1G", "4G", 2) == [1 << 30, 2 << 30, 4 << 30]
    assert nccl_tests.size_series("1G", "16G", 3) == [1 << 30, 3 << 30, 9 << 30]
    with pytest.raises(ValueError):
        nccl_tests.size_series("4G", "1G", 2)


@given(st.integers(min_value=2, max_value=1024), st.floats(min_value=1.0, max_value=1e6))
def test_busbw_is_algbw_times_factor(n, time_us):
    size = 1 << 30
    for collective in ("all_reduce", "all_gather", "reduce_scatter"):
        busbw = nccl_tests.busbw_gbs(collective, n, size, time_us)
        assert busbw == pytest.approx(nccl_tests.algbw_gbs(size, time_us) * nccl_tests.bus_factor(collective, n))
        assert busbw <= nccl_tests.algbw_gbs(size, time_us) * 2


@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=1 << 34), st.floats(min_value=0.5, max_value=1e5)),
        min_size=1,
        max_size=20,
    )
)
def test_parse_any_rendered_table(rows):
    """Tables laid out as nccl-tests prints them parse back to the same figures."""
    lines = [
        "#       size         count      type   redop    root"
        "     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    for size, time_us in rows:
        algbw = nccl_tests.algbw_gbs(size, time_us)
        lines.append(
            "%12d  %12d  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %6d  %7.1f  %6.2f  %6.2f  %6d"
            % (size, size // 4, "float", "sum", -1, time_us, algbw, algbw, 0, time_us, algbw, algbw, 0)
        )
    parsed = nccl_tests.parse_text("\n".join(lines))
    assert [r["size"] for r in parsed["rows"]] == [s for s, _unused in rows]
    assert nccl_tests.summarize(parsed)["wrong_total"] == 0


def test_summary_message_names_the_network_or_says_none_was_seen():
    collectives = {"all_reduce": {"max_size_busbw": 346.5, "max_size_bytes": 4 << 30}}
    assert (
        nccl_tests.summary_message("torch", "gpu01", "Socket", collectives)
        == "torch on gpu01 over Socket: all_reduce 346.5 GB/s at 4 GiB"
    )
    text = nccl_tests.summary_message("torch", "gpu01", None, collectives)
    assert "None" not in text
    assert text == (
        "torch on gpu01 (NCCL's log names no network: run with nccl_debug=INFO to see it): "
        "all_reduce 346.5 GB/s at 4 GiB"
    )
