"""perftest parsing against every perftest sample of the corpus, plus argv, gate and properties.

Expected numbers are typed in from the sample files (read by eye), never taken from the parser.
MB/sec and MiB/sec are 2^20 bytes/s: Gb/s = v * 1048576 * 8 / 1e9 (FACTS.md).
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate, kinds
from tests.conftest import FIXTURES, corpus_files, read_corpus

MB = 1048576 * 8 / 1e9  # Gb/s per MB/sec (2^20 bytes)


def mb(value):
    return pytest.approx(value * MB, rel=1e-6)


def gb(value):
    return pytest.approx(value, rel=1e-9)


def parse(name):
    return perftest.parse_text(read_corpus(name))


# ----------------------------------------------------------------------------------------------
# coverage: every perftest sample in the corpus has a test below

HANDLED = {
    "ib_write_bw__client-roce-mb-sec-loopback-gid3.txt",
    "ib_write_bw__server-roce-mb-sec-waiting-banner.txt",
    "ib_write_bw__server-ib-connectx3-postsend-api-warnings.txt",
    "ib_write_bw__bidirectional-roce-gbits-duration-newest-header-cpu-freq-line.txt",
    "ib_write_bw__client-ib-a-gbits-high-precision-small-sizes-partial.txt",
    "ib_write_bw__loopback-a-all-sizes-interleaved-server-client-wr-api-normalized-ws.txt",
    "ib_read_bw__client-ib-a-all-sizes-outstand-reads-partial-first-rows.txt",
    "ib_write_bw__out-json-file-roce-mb-sec-rocm-key.txt",
    "ib_write_bw__cuda-server-a30-listing-cuda-devices-header-partial.txt",
    "ib_write_bw__client-roce-zero-gid-failed-modify-qp-rtr.txt",
    "ib_send_bw__siw-softiwarp-iw-transport-couldnt-allocate-mr-segfault.txt",
    "ib_write_bw__error-completion-with-error-status4-syndrom-0x51-cuda-bidir.txt",
    "ib_write_bw__error-couldnt-allocate-mr-create-ib-resources.txt",
    "ib_write_bw__error-couldnt-connect-socket.txt",
    "ib_write_bw__error-no-device-found-container.txt",
}


def test_every_perftest_corpus_sample_is_covered(corpus_dir):
    names = {p.name for prefix in ("ib_write_bw__", "ib_read_bw__", "ib_send_bw__") for p in corpus_files(prefix)}
    assert names, "no perftest samples in the corpus"
    assert names == HANDLED, "samples without a test: %s" % sorted(names - HANDLED)


@pytest.mark.parametrize("name", sorted(HANDLED))
def test_every_sample_parses_or_classifies(corpus_dir, name):
    """Each sample either yields rows and no failure (rc 0), or a specific failure kind."""
    text = read_corpus(name)
    parsed = perftest.parse_text(text)
    if parsed["rows"]:
        assert perftest.classify_failure(text, "", 0, parsed) is None
    elif name.endswith("rocm-key.txt"):
        assert perftest.parse_json(text)["rows"]
    else:
        failure = perftest.classify_failure(text, "", 1, parsed)
        assert failure["kind"] in ("no_device", "connect", "modify_qp_rtr", "mr_alloc", "completion_error", "unknown")
        assert failure["hint"]


# ----------------------------------------------------------------------------------------------
# successful runs


def test_client_roce_mb_sec(corpus_dir):
    r = parse("ib_write_bw__client-roce-mb-sec-loopback-gid3.txt")
    assert r["unit"] == "MB/sec"
    assert r["rows"] == [
        {
            "msg_size": 65536,
            "iterations": 5000,
            "bw_peak_gbps": mb(44326.24),
            "bw_avg_gbps": mb(44276.64),
            "msg_rate_mpps": 0.708426,
        }
    ]
    assert r["headline"]["bw_avg_gbps"] == pytest.approx(371.42, abs=0.01)  # 44276.64 MB/s by hand
    assert (r["device"], r["link_type"], r["transport"], r["gid_index"], r["mtu"]) == (
        "mlx5_1",
        "Ethernet",
        "IB",
        3,
        4096,
    )
    assert r["server_banner"] is False
    assert r["remote_seen"] is True
    assert r["warnings"] == []
    assert r["test_title"] == "RDMA_Write BW Test"
    assert r["header"]["tx_depth"] == 128
    assert perftest.classify_failure(read_corpus("ib_write_bw__client-roce-mb-sec-loopback-gid3.txt"), "", 0) is None


def test_server_banner_roce(corpus_dir):
    r = parse("ib_write_bw__server-roce-mb-sec-waiting-banner.txt")
    assert r["server_banner"] is True
    assert r["rows"] == [
        {
            "msg_size": 65536,
            "iterations": 5000,
            "bw_peak_gbps": mb(46361.71),
            "bw_avg_gbps": mb(46339.84),
            "msg_rate_mpps": 0.741437,
        }
    ]
    assert (r["device"], r["link_type"], r["gid_index"], r["mtu"]) == ("mlx5_0", "Ethernet", 3, 4096)
    assert "tx_depth" not in r["header"]  # the server prints no TX depth line


def test_server_connectx3_warnings_and_tabs_in_row(corpus_dir):
    r = parse("ib_write_bw__server-ib-connectx3-postsend-api-warnings.txt")
    assert r["server_banner"] is True
    assert r["rows"] == [
        {
            "msg_size": 65536,
            "iterations": 5000,
            "bw_peak_gbps": mb(4508.97),
            "bw_avg_gbps": mb(4508.79),
            "msg_rate_mpps": 0.072141,
        }
    ]
    assert r["warnings"] == [
        "Warning: ConnectX-3 and ConnectX-3 Pro don't support WR postsend API!",
        "Warning: Falling back to ibv_post_send() API",
    ]
    assert (r["device"], r["link_type"], r["transport"], r["mtu"], r["gid_index"]) == ("mlx4_0", "IB", "IB", 2048, None)
    assert r["header"]["rdma_cm_qps"] == "OFF"  # "rdma_cm QPs\t : OFF"


def test_bidirectional_duration_gbits_warning_inside_table(corpus_dir):
    r = parse("ib_write_bw__bidirectional-roce-gbits-duration-newest-header-cpu-freq-line.txt")
    assert r["unit"] == "Gb/sec"
    assert r["rows"] == [
        {"msg_size": 65536, "iterations": 560845, "bw_peak_gbps": 0.0, "bw_avg_gbps": 98.02, "msg_rate_mpps": 0.186950}
    ]
    assert r["bidirectional"] is True
    assert r["test_title"] == "RDMA_Write Bidirectional BW Test"
    assert r["peak_measured"] is False
    assert r["warnings"] == [
        "WARNING: BW peak won't be measured in this run.",
        "Conflicting CPU frequency values detected: 1500.000000 != 3300.016000. CPU Frequency is not max.",
    ]
    assert (r["device"], r["gid_index"], r["link_type"]) == ("mlx5_0", 4, "Ethernet")
    # the newest header's two-column lines
    assert r["header"]["pcie_relax_order"] == "ON"
    assert r["header"]["ibv_wr_api"] == "ON"


def test_a_table_gbits_high_precision_partial(corpus_dir):
    r = parse("ib_write_bw__client-ib-a-gbits-high-precision-small-sizes-partial.txt")
    assert r["unit"] == "Gb/sec"
    assert [
        (x["msg_size"], x["iterations"], x["bw_peak_gbps"], x["bw_avg_gbps"], x["msg_rate_mpps"]) for x in r["rows"]
    ] == [
        (2, 5000, gb(0.042350), gb(0.042185), 2.636533),
        (4, 5000, gb(0.084507), gb(0.084457), 2.639276),
        (8, 5000, gb(0.17), gb(0.17), 2.641399),
        (16, 5000, gb(0.34), gb(0.34), 2.640952),
    ]
    assert r["headline"]["msg_size"] == 16
    assert r["link_type"] == "IB"
    assert r["gid_index"] is None


def test_read_bw_a_table_outstand_reads(corpus_dir):
    r = parse("ib_read_bw__client-ib-a-all-sizes-outstand-reads-partial-first-rows.txt")
    assert r["test_title"] == "RDMA_Read BW Test"
    assert r["unit"] == "MB/sec"
    assert [
        (x["msg_size"], x["iterations"], x["bw_peak_gbps"], x["bw_avg_gbps"], x["msg_rate_mpps"]) for x in r["rows"]
    ] == [
        (2, 1000, mb(4.86), mb(4.67), 2.450225),
        (4, 1000, mb(9.72), mb(9.71), 2.546339),
        (8, 1000, mb(19.51), mb(19.50), 2.556366),
    ]
    assert r["headline"]["msg_size"] == 8
    assert r["header"]["outstand_reads"] == 16
    assert r["device"] == "mlx5_1"


def test_loopback_interleaved_a_table_all_sizes(corpus_dir):
    r = parse("ib_write_bw__loopback-a-all-sizes-interleaved-server-client-wr-api-normalized-ws.txt")
    sizes = [x["msg_size"] for x in r["rows"]]
    assert sizes == [2**k for k in range(1, 24)]  # 2 B .. 8 MiB, 23 rows; the repeated last row is dropped
    by_size = {x["msg_size"]: x for x in r["rows"]}
    assert by_size[2]["bw_peak_gbps"] == mb(5.32)
    assert by_size[2]["bw_avg_gbps"] == mb(5.30)
    assert by_size[4096]["bw_avg_gbps"] == mb(9948.41)
    assert by_size[4096]["msg_rate_mpps"] == 2.546793
    assert by_size[8192]["bw_peak_gbps"] == mb(18620.51)
    assert by_size[8192]["bw_avg_gbps"] == mb(12782.56)
    assert by_size[65536]["bw_avg_gbps"] == mb(21167.79)
    assert all(x["iterations"] == 2000 for x in r["rows"])
    head = r["headline"]
    assert head["msg_size"] == 8388608
    assert head["bw_peak_gbps"] == mb(23240.68)
    assert head["bw_avg_gbps"] == mb(23240.68)
    assert head["msg_rate_mpps"] == 0.002905
    assert r["server_banner"] is True
    assert r["device"] == "ib0"
    assert r["warnings"] == []


def test_out_json_corpus_sample(corpus_dir):
    r = perftest.parse_json(read_corpus("ib_write_bw__out-json-file-roce-mb-sec-rocm-key.txt"), unit="MB/sec")
    assert r["rows"] == [
        {
            "msg_size": 65536,
            "iterations": 5000,
            "bw_peak_gbps": mb(5293.52),
            "bw_avg_gbps": mb(2229.27),
            "msg_rate_mpps": 0.035668,
        }
    ]
    assert (r["device"], r["link_type"], r["gid_index"], r["mtu"], r["transport"]) == (
        "mlx5_11",
        "Ethernet",
        1,
        1024,
        "IB",
    )
    assert r["test_info"]["Use_ROCm_memory"] == "OFF"
    # without a unit the default is perftest's own (MiB/sec = MB/sec)
    assert perftest.parse_json(read_corpus("ib_write_bw__out-json-file-roce-mb-sec-rocm-key.txt"))["rows"] == r["rows"]


def test_out_json_own_fixtures():
    r = perftest.parse_json((FIXTURES / "perftest" / "out_json_gbits_rdma_write.json").read_text(), unit="Gb/sec")
    assert r["headline"] == {
        "msg_size": 1048576,
        "iterations": 5000,
        "bw_peak_gbps": gb(392.61),
        "bw_avg_gbps": gb(391.87),
        "msg_rate_mpps": 0.046715,
    }
    assert r["qps"] == 4
    old = perftest.parse_json((FIXTURES / "perftest" / "out_json_trailing_commas_pre_24_01.json").read_text())
    assert old["headline"]["bw_avg_gbps"] == mb(11498.02)
    assert old["gid_index"] == 3


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        '{"test_info": {}}',
        '{"results": {"MsgSize": 2}}',
        '{"results": {"MsgSize": "x", "BW_average": 1}}',
    ],
)
def test_parse_json_rejects_documents_without_results(text):
    with pytest.raises(ValueError):
        perftest.parse_json(text, unit="Gb/sec")


def test_cuda_server_partial_header(corpus_dir):
    name = "ib_write_bw__cuda-server-a30-listing-cuda-devices-header-partial.txt"
    r = parse(name)
    assert r["server_banner"] is True
    assert r["cuda_device"] == "NVIDIA A30"
    assert r["device"] == "mlx5_0"
    assert r["rows"] == []
    assert r["warnings"] == ["Perftest doesn't supports CUDA tests with inline messages: inline size set to 0"]
    # the sample is cut before the table: with rc 0 that is "no result table", not success
    failure = perftest.classify_failure(read_corpus(name), "", 0)
    assert failure["kind"] == "unknown"
    assert "no result table" in failure["message"]


# ----------------------------------------------------------------------------------------------
# failures


def test_failure_no_device(corpus_dir):
    f = perftest.classify_failure("", read_corpus("ib_write_bw__error-no-device-found-container.txt"), 1)
    assert f["kind"] == "no_device"
    assert "Did not detect devices" in f["message"]
    assert "ibstat" in f["hint"]


def test_failure_connect(corpus_dir):
    f = perftest.classify_failure("", read_corpus("ib_write_bw__error-couldnt-connect-socket.txt"), 1)
    assert f["kind"] == "connect"
    assert "192.168.125.211:18515" in f["message"]
    assert "server" in f["hint"]


def test_failure_modify_qp_rtr(corpus_dir):
    text = read_corpus("ib_write_bw__client-roce-zero-gid-failed-modify-qp-rtr.txt")
    r = perftest.parse_text(text)
    assert (r["gid_index"], r["mtu"], r["link_type"], r["rows"]) == (0, 1024, "Ethernet", [])
    f = perftest.classify_failure(text, "", 1)
    assert f["kind"] == "modify_qp_rtr"
    assert "QP 218" in f["message"]
    assert "gid_index" in f["hint"]


def test_failure_mr_alloc(corpus_dir):
    f = perftest.classify_failure("", read_corpus("ib_write_bw__error-couldnt-allocate-mr-create-ib-resources.txt"), 1)
    assert f["kind"] == "mr_alloc"
    assert "memlock" in f["hint"].lower() or "locked-memory" in f["hint"]


def test_failure_mr_alloc_then_segfault(corpus_dir):
    text = read_corpus("ib_send_bw__siw-softiwarp-iw-transport-couldnt-allocate-mr-segfault.txt")
    r = perftest.parse_text(text)
    assert (r["transport"], r["device"], r["gid_index"], r["test_title"]) == ("IW", "siw_ens33", 0, "Send BW Test")
    f = perftest.classify_failure(text, "", 139)
    assert f["kind"] == "mr_alloc"  # the cause, not its consequence
    assert "Segmentation fault" in f["message"]


def test_failure_completion_error(corpus_dir):
    f = perftest.classify_failure(
        read_corpus("ib_write_bw__error-completion-with-error-status4-syndrom-0x51-cuda-bidir.txt"), "", 1
    )
    assert f["kind"] == "completion_error"
    assert "status 4 (IBV_WC_LOC_PROT_ERR)" in f["message"]
    assert "0x51" in f["message"]


@pytest.mark.parametrize(
    ("stdout", "stderr", "rc", "kind"),
    [
        ("", "Couldn't listen to port 18515\n", 1, "port_busy"),
        ("", "Error: BW result is below bw limit\n", 1, "bw_limit"),
        ("", "", -11, "crash"),
        ("", "Segmentation fault (core dumped)\n", 139, "crash"),
        ("", "something new\n", 1, "unknown"),
        ("", " IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n", 1, "no_device"),
        ("Completion with error at server\n Failed status 12: wr_id 0 syndrom 0x81\n", "", 1, "completion_error"),
    ],
)
def test_failure_kinds_from_perftest_messages(stdout, stderr, rc, kind):
    assert perftest.classify_failure(stdout, stderr, rc)["kind"] == kind


def test_retry_exceeded_is_named():
    f = perftest.classify_failure("", " Failed status 12: wr_id 0 syndrom 0x81\n", 1)
    assert "IBV_WC_RETRY_EXC_ERR" in f["message"]


def test_port_busy_names_port():
    assert "18515" in perftest.classify_failure("", "Couldn't listen to port 18515\n", 1)["message"]


# ----------------------------------------------------------------------------------------------
# old formats: table without MsgRate, QoS #sl column


def test_table_without_msgrate_and_with_sl_column():
    old = (
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]\n"
        " 65536      5000           3255.38            3255.08\n"
    )
    r = perftest.parse_text(old)
    assert r["rows"] == [
        {
            "msg_size": 65536,
            "iterations": 5000,
            "bw_peak_gbps": mb(3255.38),
            "bw_avg_gbps": mb(3255.08),
            "msg_rate_mpps": None,
        }
    ]
    qos = (
        " #bytes #SL  #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
        " 65536  3    5000           45000.00            44990.00              0.719840\n"
    )
    r = perftest.parse_text(qos)
    assert r["unit"] == "MiB/sec"
    assert r["rows"][0]["bw_avg_gbps"] == mb(44990.00)
    assert r["rows"][0]["msg_rate_mpps"] == 0.719840


# ----------------------------------------------------------------------------------------------
# argv of the bandwidth tools (kinds.build_argv: one builder for every test)


def build_argv(params, json_file=None):
    return kinds.build_argv(params.get("test") or "write", params, json_file)


def test_build_argv_client_full():
    argv = build_argv(
        {
            "role": "client",
            "server": "10.0.0.2",
            "device": "mlx5_0",
            "ib_port": 1,
            "gid_index": 3,
            "qps": 4,
            "size": "1048576",
            "duration": 10,
            "bidirectional": True,
            "use_cuda": 0,
            "tcp_port": 18600,
            "test": "write",
            "report_gbits": True,
            "out_json": True,
            "extra_args": ["--tclass=106"],
            "executable": "/opt/ibtune-lab/bin/ib_write_bw",
        },
        json_file="/tmp/x.json",
    )
    assert argv == [
        "/opt/ibtune-lab/bin/ib_write_bw",
        "-d", "mlx5_0", "-i", "1", "-x", "3", "-q", "4", "-s", "1048576", "-D", "10", "-b",
        "--use_cuda=0", "-p", "18600", "--report_gbits", "-F",
        "--out_json", "--out_json_file=/tmp/x.json",
        "--tclass=106", "10.0.0.2",
    ]  # fmt: skip


def test_build_argv_server_minimal_and_all_sizes():
    base = {"role": "server", "device": "mlx5_1", "test": "read", "size": "all", "report_gbits": False}
    assert build_argv(base) == [
        "ib_read_bw", "-d", "mlx5_1", "-i", "1", "-q", "1", "-a", "-p", "18515", "-F",
    ]  # fmt: skip


def test_validate_params():
    assert kinds.validate_params("write", {"role": "client", "server": None}) == [
        "role=client needs server (the address of the host running the server side)"
    ]
    assert kinds.validate_params("write", {"role": "server", "size": "big"})
    assert kinds.validate_params("write", {"role": "server", "size": "all", "duration": 5})
    assert kinds.validate_params("write", {"role": "server", "tcp_port": 70000})
    assert kinds.validate_params("write", {"role": "server", "size": "all"}) == []


# ----------------------------------------------------------------------------------------------
# gate


def test_gate_link_fraction():
    g = gate.side_bandwidth(371.42, min_link_fraction=0.9, link_rate_gbps=400.0)
    assert (g["threshold_gbps"], g["passed"], g["basis"]) == (360.0, True, "0.9 x 400 Gb/s port rate")
    g = gate.side_bandwidth(180.2, min_link_fraction=0.9, link_rate_gbps=400.0)
    assert (g["threshold_gbps"], g["passed"]) == (360.0, False)


def test_gate_bidirectional_doubles_link_rate():
    g = gate.side_bandwidth(98.02, min_link_fraction=0.9, link_rate_gbps=100.0, bidirectional=True)
    assert (g["threshold_gbps"], g["passed"], g["basis"]) == (
        180.0,
        False,
        "0.9 x 100 Gb/s port rate x 2 bidirectional",
    )


def test_gate_takes_the_larger_threshold():
    g = gate.side_bandwidth(370.0, min_gbps=380.0, min_link_fraction=0.9, link_rate_gbps=400.0)
    assert (g["threshold_gbps"], g["basis"], g["passed"]) == (380.0, "min_gbps", False)
    g = gate.side_bandwidth(370.0, min_gbps=100.0, min_link_fraction=0.9, link_rate_gbps=400.0)
    assert (g["threshold_gbps"], g["basis"], g["passed"]) == (360.0, "0.9 x 400 Gb/s port rate", True)


def test_gate_absent_and_unknown_rate():
    assert gate.side_bandwidth(1.0) == {"threshold_gbps": None, "passed": True, "basis": None, "error": None}
    g = gate.side_bandwidth(1.0, min_link_fraction=0.9, link_rate_gbps=None)
    assert g["threshold_gbps"] is None and g["passed"] is None and "port rate" in g["error"]
    g = gate.side_bandwidth(300.0, min_gbps=200, min_link_fraction=0.9, link_rate_gbps=None)
    assert (g["threshold_gbps"], g["passed"]) == (200.0, True) and g["error"]


# ----------------------------------------------------------------------------------------------
# properties


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_text_never_raises(text):
    r = perftest.parse_text(text)
    assert isinstance(r["rows"], list)


TABLE_LINE = st.sampled_from(
    [
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        " #bytes #iterations BW peak[xx] BW average[]",
        "-" * 87,
        " 65536      5000             44326.24            44276.64                  0.708426",
        " 1 2 3",
        " 99999999999999999999999 1 1e999 1e999 1",
        "\t8\t5000\t0.17\t0.17\t\t2.64",
        "Conflicting CPU frequency values detected: 1 != 2.",
        " GID index : x",
        " Mtu : 4096[B]",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TABLE_LINE, st.text(max_size=40)), max_size=30))
def test_parse_text_never_raises_on_table_like_text(lines):
    r = perftest.parse_text("\n".join(lines))
    sizes = [row["msg_size"] for row in r["rows"]]
    assert len(sizes) == len(set(sizes))
    if r["rows"]:
        assert r["headline"]["msg_size"] == max(sizes)


@given(
    st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False),
    st.sampled_from(sorted(perftest.UNIT_TO_GBPS)),
)
def test_unit_conversion_round_trips(value, unit):
    assert perftest.from_gbps(perftest.to_gbps(value, unit), unit) == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_unit_conversion_values():
    assert perftest.to_gbps(1, "Gb/sec") == 1.0
    assert perftest.to_gbps(1, "MB/sec") == 1048576 * 8 / 1e9
    assert perftest.to_gbps(1, "MiB/sec") == perftest.to_gbps(1, "MB/sec")
    assert perftest.to_gbps(47683.72, "MiB/sec") == pytest.approx(400.0, abs=0.001)  # 400 Gb/s in MiB/s
    with pytest.raises(ValueError):
        perftest.to_gbps(1, "GB/sec")


@given(st.floats(min_value=0.01, max_value=1e6, allow_nan=False), st.sampled_from(["MB/sec", "MiB/sec", "Gb/sec"]))
def test_parsed_row_equals_conversion_of_printed_value(value, unit):
    printed = "%.2f" % value
    text = " #bytes #iterations BW peak[%s] BW average[%s] MsgRate[Mpps]\n 65536 5000 %s %s 0.5\n" % (
        unit,
        unit,
        printed,
        printed,
    )
    row = perftest.parse_text(text)["rows"][0]
    assert row["bw_avg_gbps"] == pytest.approx(perftest.to_gbps(float(printed), unit), abs=1e-6)


def test_json_fixture_is_valid_json():
    json.loads((FIXTURES / "perftest" / "out_json_gbits_rdma_write.json").read_text())
