"""perftest_lat.parse_lat_text on every real latency output of the corpus, verbatim.

The expected numbers are read from the raw text here, independently of the parser: locate the
``#bytes`` header, take the lines below it that split into as many numbers as the layout has columns
(column order from perftest's RESULT_FMT_LAT / RESULT_FMT_LAT_DUR, src/perftest_parameters.h).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import latency as perftest_lat
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import module as perftest_module
from tests.conftest import FIXTURES, corpus_files, read_corpus

LAT_FILES = corpus_files("ib_write_lat__") + corpus_files("ib_read_lat__") + corpus_files("ib_send_lat__")
TABLE_FILES = [p for p in LAT_FILES if "#bytes" in p.read_text()]

NEW = ["msg_size", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us"]
OLD = NEW[:5]
OLD_CLIENT = "ib_send_lat__client-old-format-a-all-sizes-azure-hc44rs-sriov-vf-ib.txt"
OLD_SERVER = "ib_send_lat__server-old-format-a-all-sizes-waiting-banner-azure-hc44rs.txt"
DURATION = ["msg_size", "iterations", "t_avg_us", "tps_avg"]


def raw_table(text):
    """(column keys, rows of strings) read by position from the text, the way a person reads it."""
    lines = text.splitlines()
    start = max(i for i, line in enumerate(lines) if "#bytes" in line)  # -H prints the header twice
    header = lines[start]
    if "percentile" in header:
        keys = NEW
    elif "t_typical" in header:
        keys = OLD
    else:
        keys = DURATION[: 4 if "tps average" in header else 3] + (["cpu_util_pct"] if "CPU_Util" in header else [])
    rows = []
    for line in lines[start + 1 :]:
        tokens = line.split()
        if len(tokens) == len(keys) and all(t.replace(".", "", 1).isdigit() for t in tokens):
            rows.append(tokens)
    return keys, rows


def expected_rows(text):
    keys, rows = raw_table(text)
    out = []
    for tokens in rows:
        row = dict.fromkeys(perftest_lat.ROW_KEYS)
        for key, token in zip(keys, tokens):
            row[key] = int(token) if key in ("msg_size", "iterations") else float(token)
        out.append(row)
    return out


def test_the_corpus_has_every_real_layout():
    assert len(LAT_FILES) == 8
    layouts = {raw_table(p.read_text())[0] == NEW for p in TABLE_FILES}
    assert layouts == {True, False}  # the 9-column and the old 5-column layout are both there


@pytest.mark.parametrize("path", TABLE_FILES, ids=lambda p: p.name)
def test_every_corpus_table_row_is_read_verbatim(path):
    text = path.read_text()
    parsed = perftest_lat.parse_lat_text(text)
    expected = expected_rows(text)
    assert expected, "no table found by position in %s" % path.name
    assert parsed["rows"] == expected
    assert parsed["unit"] == "usec"
    assert parsed["headline"] == min(expected, key=lambda r: r["msg_size"])
    assert parsed["format"] == ("iterations" if "percentile" in text else "iterations_old")
    # the parameter block
    assert parsed["test_title"] in text and parsed["test_title"].endswith("Latency Test")
    assert parsed["device"] in text and parsed["link_type"] in ("IB", "Ethernet")
    assert parsed["remote_seen"]


def test_old_three_value_layout_has_no_avg_or_percentiles():
    parsed = perftest_lat.parse_lat_text(read_corpus(OLD_CLIENT))
    assert parsed["format"] == "iterations_old"
    assert len(parsed["rows"]) == 23
    assert all(r["t_avg_us"] is None and r["p99_us"] is None and r["p999_us"] is None for r in parsed["rows"])
    # the last row as described in the corpus manifest
    last = parsed["rows"][-1]
    seen = (last["msg_size"], last["t_min_us"], last["t_max_us"], last["t_typical_us"])
    assert seen == (8388608, 706.63, 715.72, 708.96)
    assert parsed["headline"]["msg_size"] == 2 and parsed["headline"]["t_typical_us"] == 2.66


def test_server_with_banner_and_rx_depth():
    parsed = perftest_lat.parse_lat_text(read_corpus(OLD_SERVER))
    assert parsed["server_banner"] is True
    assert [r["msg_size"] for r in parsed["rows"]] == [2**k for k in range(1, 24)]
    assert parsed["rows"][13]["t_max_us"] == 27.24  # the 16384-byte outlier


def test_prompt_wrapped_over_two_lines_is_not_data():
    text = read_corpus("ib_read_lat__client-a-all-sizes-20000-iters-mlx4-prompt-wrapped-over-two-lines.txt")
    assert text.splitlines()[1].strip() == "192.168.1.60"
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["rows"][4]["t_max_us"] == 61.18  # the 32-byte outlier
    assert parsed["rows"][-1]["p999_us"] == 2202.42
    assert parsed["header"]["outstand_reads"] == 16
    # without the table, the wrapped address is still not taken for an --output=latency number
    head_only = "\n".join(line for line in text.splitlines() if "#bytes" not in line and "20000 " not in line)
    assert perftest_lat.parse_lat_text(head_only)["rows"] == []


def test_cpu_frequency_warnings_inside_the_table_and_tabs():
    text = read_corpus("ib_write_lat__server-ib-connectx3-postsend-api-warnings-cpu-freq-in-table-tabs.txt")
    assert "\t" in text
    parsed = perftest_lat.parse_lat_text(text)
    assert len(parsed["rows"]) == 1
    assert sum("Conflicting CPU frequency" in w for w in parsed["warnings"]) == 2
    assert any("postsend API" in w for w in parsed["warnings"])
    assert parsed["server_banner"] is True


@pytest.mark.parametrize(
    "name",
    [
        "ib_read_lat__roce-macvlan-shared-pod-gid12-cpu-freq-warnings-8space-indent.txt",
        "ib_read_lat__roce-sriov-vf-pod-gid2-libibverbs-couldnt-stat-warnings-prompt-8space-indent.txt",
    ],
)
def test_eight_space_indented_roce_blocks(name):
    text = read_corpus(name)
    parsed = perftest_lat.parse_lat_text(text)
    gid = int(text.split("GID index")[1].split(":")[1].split()[0])
    assert parsed["gid_index"] == gid and parsed["link_type"] == "Ethernet"
    assert parsed["rows"] == expected_rows(text) and len(parsed["rows"]) == 1
    assert parsed["rows"][0]["p999_us"] == parsed["rows"][0]["t_max_us"]  # 1000 iterations: the 99.9% sample is the max


def test_output_latency_mode_is_one_average():
    text = read_corpus("ib_write_lat__output-latency-single-number-vm-duration-30s.txt")
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["format"] == "average_only"
    assert parsed["rows"][0]["t_avg_us"] == float(text.strip())
    assert parsed["rows"][0]["t_typical_us"] is None and parsed["rows"][0]["msg_size"] is None
    assert perftest_lat.headline_latency(parsed["headline"]) == (float(text.strip()), "t_avg")


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("ib_write_lat__duration-tps-average-perftest-commit-8e3996d.txt", "duration"),
        ("ib_send_lat__duration-old-t-avg-only-composed.txt", "duration_old"),
        ("ib_write_lat__duration-cpu-util-composed.txt", "duration"),
    ],
)
def test_duration_tables(name, fmt):
    text = (FIXTURES / "perftest" / name).read_text()
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["format"] == fmt
    assert parsed["rows"] == expected_rows(text) and len(parsed["rows"]) == 1
    row = parsed["headline"]
    assert row["t_typical_us"] is None and row["t_min_us"] is None
    assert perftest_lat.headline_latency(row) == (row["t_avg_us"], "t_avg")


def test_histogram_lines_are_not_rows_and_the_repeated_header_is_fine():
    text = (FIXTURES / "perftest" / "ib_write_lat__histogram-H-n5-composed.txt").read_text()
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["rows"] == expected_rows(text)
    assert [r["iterations"] for r in parsed["rows"]] == [5]


def test_non_finite_row_is_skipped_with_a_warning():
    text = read_corpus("ib_write_lat__server-ib-connectx3-postsend-api-warnings-cpu-freq-in-table-tabs.txt")
    text = text.replace("0.01", "-nan")
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["rows"] == [] and parsed["headline"] is None
    assert any("non-finite" in w for w in parsed["warnings"])


@pytest.mark.parametrize("garbage", [None, "", b"\xff\xfe", "Couldn't connect to 10.0.0.1:18515\n", "#bytes\n1 2 3\n"])
def test_never_raises(garbage):
    parsed = perftest_lat.parse_lat_text(garbage)
    assert parsed["rows"] == [] and parsed["headline"] is None


def test_bandwidth_output_is_not_a_latency_table():
    text = read_corpus("ib_write_bw__client-roce-mb-sec-loopback-gid3.txt")
    parsed = perftest_lat.parse_lat_text(text)
    assert parsed["rows"] == [] and parsed["format"] is None


# ----------------------------------------------------------------------------------------------
# gate settings and the judged side


def _measured(name):
    return testkinds.measurement("write_lat", perftest_lat.parse_lat_text(read_corpus(name)))


NEW_SERVER = "ib_write_lat__server-ib-connectx3-postsend-api-warnings-cpu-freq-in-table-tabs.txt"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"max_typical_us": 0}, "max_typical_us=0"),
        ({"max_typical_us": float("inf")}, "max_typical_us=inf"),
        ({"max_p99_us": "x"}, "max_p99_us='x'"),
        ({"max_p99_us": 5, "duration": 10}, "cannot be checked with duration"),
    ],
)
def test_bad_gate_settings(kwargs, words):
    problems = gate.check_latency_options(**kwargs)
    assert len(problems) == 1 and words in problems[0]


def test_good_gate_settings():
    assert gate.check_latency_options(3, 5) == []
    assert gate.check_latency_options(3, None, duration=10) == []


def test_judge_side_pass_fail_and_unchecked():
    measured = _measured(NEW_SERVER)
    row = next(line.split() for line in read_corpus(NEW_SERVER).splitlines() if line.split()[:2] == ["2", "1000"])
    typical, p99 = float(row[4]), float(row[7])
    where = "ib_write_lat mlx5_0:1 -> n2"
    ok = perftest_module.judge_latency_side(where, "write_lat", measured, True, typical, p99)
    assert ok["passed"] is True and ok["failure"] is None
    assert ok["msg"] == "%s: typical %s us, p99 %s us at 2 B, within max_typical_us %g us and max_p99_us %g us" % (
        where, row[4], row[7], typical, p99
    )  # fmt: skip
    bad = perftest_module.judge_latency_side(where, "write_lat", measured, True, None, p99 / 2)
    assert bad["passed"] is False and bad["failure"]["kind"] == "above_threshold"
    assert bad["threshold_us"] == p99 / 2 and "max_p99_us" in bad["msg"]
    old = _measured(OLD_CLIENT)
    unchecked = perftest_module.judge_latency_side(where, "send_lat", old, True, None, 0.1)
    assert unchecked["passed"] is True and unchecked["warnings"][0].startswith("max_p99_us")
    assert "within" not in unchecked["msg"]
    served = perftest_module.judge_latency_side("srv", "read_lat", {}, False, 3, None)
    assert served["passed"] is True and "served its client" in served["msg"]


def test_invalid_latency_fails_the_gate():
    judged = gate.latency_verdict({"latency_us": float("nan"), "p99_us": None}, 3)
    assert judged["passed"] is False and judged["failure_kind"] == "invalid"


LAT_LINES = st.sampled_from(
    [
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
        "99% percentile[usec]   99.9% percentile[usec] ",
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]",
        " #bytes        #iterations       t_avg[usec]    tps average",
        " 2       1000          0.96           1.25         0.98     \t       0.98        \t0.01   \t\t1.00 \t\t1.25",
        " 2       1000          2.57           15.38        2.66",
        " 4       1000          2.57           15.38        nan",
        " 2             1008430           2.97           168068.16",
        "1.846569",
        "-" * 87,
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LAT_LINES, st.text(max_size=40)), max_size=30))
def test_parse_lat_text_never_raises_and_keeps_one_row_per_size(lines):
    parsed = perftest_lat.parse_lat_text("\n".join(lines))
    sizes = [r["msg_size"] for r in parsed["rows"] if r["msg_size"] is not None]
    assert len(sizes) == len(set(sizes))
    if sizes:
        assert parsed["headline"]["msg_size"] == min(sizes)
    for row in parsed["rows"]:
        assert set(row) == set(perftest_lat.ROW_KEYS)
