"""The test-kind registry: one entry per perftest tool, one argv builder and one parameter check for all."""

import subprocess

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds
from tests.conftest import read_corpus

LAT_CLIENT = "ib_read_lat__client-a-all-sizes-20000-iters-mlx4-prompt-wrapped-over-two-lines.txt"
OLD_LAT = "ib_send_lat__client-old-format-a-all-sizes-azure-hc44rs-sriov-vf-ib.txt"
BW_CLIENT = "ib_write_bw__client-roce-mb-sec-loopback-gid3.txt"


def test_registry_names_every_tool():
    assert set(testkinds.TEST_KINDS) == {"write", "read", "send", "write_lat", "read_lat", "send_lat"}
    for test, entry in testkinds.TEST_KINDS.items():
        assert entry["test"] == test
        suffix = "lat" if test.endswith("_lat") else "bw"
        assert entry["executable"] == "ib_%s_%s" % (entry["verb"], suffix)
        assert entry["kind"] == ("latency" if suffix == "lat" else "bandwidth")
        assert testkinds.kind_of(test) == entry["kind"]
    assert testkinds.BANDWIDTH_TESTS == perftest.TESTS  # the bandwidth module's choices stay the same


def test_unknown_test_names_the_valid_ones():
    with pytest.raises(ValueError) as err:
        testkinds.kind_of("atomic_lat")
    assert "atomic_lat" in str(err.value)
    for test in testkinds.TESTS:
        assert test in str(err.value)


def test_only_the_read_latency_server_prints_no_table():
    assert [t for t, e in testkinds.TEST_KINDS.items() if not e["server_reports"]] == ["read_lat"]


@pytest.mark.parametrize(
    "params",
    [
        {"role": "client", "server": "n2", "device": "mlx5_1", "ib_port": 1, "qps": 2, "size": "65536", "duration": 2},
        {"role": "server", "device": "mlx5_0", "gid_index": 3, "size": "all", "bidirectional": True, "use_cuda": 0},
    ],
)
def test_one_builder_gives_each_kind_its_own_options(params):
    for test in ("write", "read", "send"):
        argv = testkinds.build_argv(test, params)
        assert argv[0] == "ib_%s_bw" % test and argv[argv.index("-q") + 1] == str(params.get("qps") or 1)
        assert "--report_gbits" in argv and ("-b" in argv) == bool(params.get("bidirectional"))
        latency = testkinds.build_argv(test + "_lat", dict(params, qps=None, bidirectional=None, duration=None))
        assert latency[0] == "ib_%s_lat" % test and not {"-q", "-b", "--report_gbits"} & set(latency)
        # the shared part is the same option for option
        assert latency[1:5] == argv[1:5] and latency[-1] == argv[-1]
        assert latency[latency.index("-p") + 1] == argv[argv.index("-p") + 1]


def test_latency_argv():
    params = {
        "role": "client",
        "server": "10.0.0.2",
        "device": "mlx5_1",
        "ib_port": 1,
        "gid_index": 3,
        "tcp_port": 18600,
        "iterations": 20000,
        "use_cuda": 0,
        "extra_args": ["--tclass=106"],
    }
    assert testkinds.build_argv("write_lat", params) == [
        "ib_write_lat",
        "-d",
        "mlx5_1",
        "-i",
        "1",
        "-x",
        "3",
        "-s",
        "2",
        "-n",
        "20000",
        "--use_cuda=0",
        "-p",
        "18600",
        "-F",
        "--tclass=106",
        "10.0.0.2",
    ]
    server = testkinds.build_argv("read_lat", {"role": "server", "device": "mlx5_0", "size": "all", "duration": 5})
    assert server == ["ib_read_lat", "-d", "mlx5_0", "-i", "1", "-a", "-D", "5", "-p", "18515", "-F"]
    exe = testkinds.build_argv("send_lat", {"role": "server", "device": "d", "executable": "/opt/x/ib_send_lat"})
    assert exe[0] == "/opt/x/ib_send_lat" and "--report_gbits" not in exe and "-q" not in exe


def test_latency_argv_rejects_out_json():
    with pytest.raises(ValueError):
        testkinds.build_argv("write_lat", {"role": "server", "device": "d"}, json_file="/tmp/x.json")


def test_validate_params():
    assert testkinds.validate_params("write_lat", {"role": "server", "device": "d", "iterations": 1000}) == []
    problems = testkinds.validate_params("write_lat", {"role": "client", "device": "d", "iterations": 3, "duration": 5})
    assert any("server" in p for p in problems)
    assert any("at least 5" in p for p in problems)
    assert any("-D" in p for p in problems)
    assert testkinds.validate_params("send_lat", {"role": "server", "size": "all", "duration": 2})
    assert testkinds.validate_params("write", {"role": "server", "qps": 0}) == ["qps=0 must be at least 1"]
    assert testkinds.validate_params("write_lat", {"role": "server", "qps": 0}) == []  # no -q for latency tools


def test_measurement_latency_from_the_corpus():
    text = read_corpus(LAT_CLIENT)
    got = testkinds.measurement("read_lat", testkinds.parse("read_lat", text))
    # the 2-byte row, read by position from the file
    row = next(line.split() for line in text.splitlines() if line.split()[:2] == ["2", "20000"])
    assert [got[k] for k in ("msg_size", "iterations")] == [int(row[0]), int(row[1])]
    keys = ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us")
    assert [got[k] for k in keys] == [float(v) for v in row[2:]]
    assert (got["latency_us"], got["latency_basis"]) == (float(row[4]), "t_typical")
    assert set(got) == set(testkinds.LATENCY_METRICS)


def test_measurement_old_layout_has_nulls():
    got = testkinds.measurement("send_lat", testkinds.parse("send_lat", read_corpus(OLD_LAT)))
    assert got["t_typical_us"] == 2.66 and got["latency_us"] == 2.66
    assert got["t_avg_us"] is None and got["p99_us"] is None and got["p999_us"] is None


def test_measurement_bandwidth_matches_perftest_headline():
    parsed = testkinds.parse("write", read_corpus(BW_CLIENT))
    assert parsed == perftest.parse_text(read_corpus(BW_CLIENT))
    got = testkinds.measurement("write", parsed)
    assert got == {k: parsed["headline"][k] for k in testkinds.BANDWIDTH_METRICS}
    assert got["bw_avg_gbps"] == pytest.approx(44276.64 * 1048576 * 8 / 1e9)


def test_measurement_without_result_is_all_none():
    for test in testkinds.TESTS:
        got = testkinds.measurement(test, testkinds.parse(test, ""))
        assert set(got.values()) == {None}


def test_classify_latency_success_and_missing_table():
    assert testkinds.classify_failure("read_lat", read_corpus(LAT_CLIENT), "", 0) is None
    # a write_lat server prints the table; ib_read_lat's server prints only a separator line
    sep = "-" * 87 + "\n"
    assert testkinds.classify_failure("write_lat", sep, "", 0, role="server")["kind"] == "unknown"
    assert "no result table" in testkinds.classify_failure("write_lat", sep, "", 0, role="server")["message"]
    assert testkinds.classify_failure("read_lat", sep, "", 0, role="server") is None
    assert testkinds.classify_failure("read_lat", sep, "", 0, role="client")["kind"] == "unknown"
    # without role, perftest's server banner says which side ran
    banner = "\n************************************\n* Waiting for client to connect... *\n" + "*" * 36 + "\n"
    assert testkinds.classify_failure("read_lat", banner + sep, "", 0) is None
    assert testkinds.classify_failure("write_lat", banner + sep, "", 0)["kind"] == "unknown"
    # bandwidth: unchanged behaviour
    assert testkinds.classify_failure("write", sep, "", 0)["kind"] == "unknown"


def test_classify_connect_failure_on_latency():
    failure = testkinds.classify_failure("send_lat", "", "Couldn't connect to 10.0.0.9:18515\n", 1, role="client")
    assert failure["kind"] == "connect" and "10.0.0.9:18515" in failure["message"]


@pytest.mark.parametrize("test", ["write_lat", "read_lat", "send_lat"])
def test_real_debian_latency_tool_without_device_is_no_device(test):
    argv = testkinds.build_argv(test, {"role": "server", "device": "mlx5_0", "tcp_port": 18999})
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    failure = testkinds.classify_failure(test, proc.stdout, proc.stderr, proc.returncode, role="server")
    assert failure["kind"] == "no_device", (proc.stdout, proc.stderr)
