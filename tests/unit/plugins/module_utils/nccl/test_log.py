"""nccl_log over every NCCL log of the corpus and the real logs of the GPU proof (tests/fixtures/nccl)."""

import re

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import log as nccl_log
from tests.conftest import FIXTURES, corpus_files, read_corpus

NCCL_FIXTURES = FIXTURES / "nccl"
DEFAULTS = NCCL_FIXTURES / "h200x2-torch-defaults-nccl2.28.9.log"
RENDERED = NCCL_FIXTURES / "h200x2-torch-rendered-ib-profile-nccl2.28.9.log"
SOCKET = NCCL_FIXTURES / "h200x2-torch-socket-profile-nccl2.28.9.log"

# What each corpus log says, read by eye from the file.
CORPUS_EXPECTED = {
    "nccl-debug__net-ib-no-device-found-socket-fallback-gcp-v2.19.txt": {
        "transports": ["Socket"],
        "networks": ["Socket"],
        "fallback": True,
        "versions": ["2.19.3+cuda12.3"],
        "warn_lines": [],
        "socket_interfaces": ["ens7"],
        "ib_devices": [],
    },
    "nccl-debug__old-v2.5.6-ib-disable-env-socket-ipv6.txt": {
        "transports": ["Socket"],
        "networks": ["Socket (inferred from NET/Socket : Using)"],
        "fallback": False,
        "versions": ["2.5.6+cuda10.0"],
        "warn_lines": [],
        "socket_interfaces": ["ip6tnl0", "veth0"],
        "ib_devices": [],
    },
    "nccl-debug__roce-ibext-sharp-plugin-env-lines-2ranks-head.txt": {
        "transports": ["IB"],
        "networks": ["IBext"],
        "fallback": False,
        "versions": ["2.19.3+cuda12.3"],
        "warn_lines": [],
        "socket_interfaces": [],
        "ib_devices": ["roce0:1/RoCE"],
    },
    "nccl-debug__roce-single-node-warn-nvml-unhandled-system-error.txt": {
        "transports": ["IB"],
        "networks": ["IB"],
        "fallback": False,
        "versions": ["2.26.2+cuda12.6"],
        "warn_lines": [17],
        "socket_interfaces": [],
        "ib_devices": ["mlx5_0:1/RoCE"],
    },
    "nccl-debug__socket-ib-disabled-warn-socketFinalizeAccept.txt": {
        "transports": [],
        "networks": [],
        "fallback": False,
        "versions": [],
        "warn_lines": [19, 25, 31, 37],
        "socket_interfaces": [],
        "ib_devices": [],
    },
}


def test_every_corpus_log_is_covered():
    names = sorted(p.name for p in corpus_files("nccl-debug__"))
    assert names == sorted(CORPUS_EXPECTED)


@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_logs(name):
    text = read_corpus(name)
    expected = CORPUS_EXPECTED[name]
    result = nccl_log.parse(text, path=name)
    assert result["transports"] == expected["transports"]
    assert result["networks"] == expected["networks"]
    assert result["fallback"] is expected["fallback"]
    assert result["nccl_versions"] == expected["versions"]
    assert [w["line"] for w in result["warnings"]] == expected["warn_lines"]
    assert result["socket_interfaces"] == expected["socket_interfaces"]
    assert result["ib_devices"] == expected["ib_devices"]
    lines = text.splitlines()
    for warning in result["warnings"]:
        assert "NCCL WARN" in lines[warning["line"] - 1]
        assert warning["message"] in lines[warning["line"] - 1]
        assert warning["path"] == name


def test_warn_line_with_timestamp_and_source():
    result = nccl_log.parse(read_corpus("nccl-debug__roce-single-node-warn-nvml-unhandled-system-error.txt"))
    warning = result["warnings"][0]
    assert warning["message"] == "Failed to open libnvidia-ml.so.1"
    assert warning["source"] == "misc/nvmlwrap.cc:74"
    assert warning["host"] == "gpu0301"


def test_env_pickups_in_corpus():
    result = nccl_log.parse(read_corpus("nccl-debug__roce-ibext-sharp-plugin-env-lines-2ranks-head.txt"))
    assert result["env"] == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DMABUF_ENABLE": "1",
        "NCCL_TOPO_DUMP_FILE": "/tmp/topo.xml",
    }
    assert result["hosts"] == ["6a9ab017bb44", "a4df80236412"]


def test_channel_paths_in_corpus():
    result = nccl_log.parse(read_corpus("nccl-debug__socket-ib-disabled-warn-socketFinalizeAccept.txt"))
    assert result["channel_paths"] == {"P2P/CUMEM": 2}


# --- the GPU proof's real logs -------------------------------------------------------------------


@pytest.mark.parametrize("path", [DEFAULTS, RENDERED, SOCKET])
def test_h200_logs_used_socket_over_nvlink(path):
    result = nccl_log.parse(path.read_text(), path=path.name)
    assert result["transports"] == ["Socket"]
    assert result["networks"] == ["Socket"]
    assert result["nccl_versions"] == ["2.28.9+cuda13.0"]
    assert result["socket_interfaces"] == ["eth0"]
    assert result["ib_devices"] == []
    assert result["warnings"] == []
    assert result["gdr"] is False
    assert set(result["channel_paths"]) == {"P2P/CUMEM"}
    assert result["hosts"] == ["vm"]
    assert result["env"]["NCCL_NVLS_ENABLE"] == "0"


def test_h200_ib_profile_fell_back():
    for path in (DEFAULTS, RENDERED):
        result = nccl_log.parse(path.read_text(), path=path.name)
        assert result["fallback"] is True
        assert len(result["ib_no_device"]) == 2  # one per rank
        message = nccl_log.check_transport(result, "IB")
        assert message.startswith("NCCL fell back to Socket on vm instead of using IB: NET/IB found no usable RDMA")
        assert "'NET/IB : No device found.'" in message
        assert re.search(r"%s:\d+" % re.escape(path.name), message)
        assert nccl_log.check_transport(result, "Socket") is None


def test_h200_socket_profile_says_why():
    result = nccl_log.parse(SOCKET.read_text(), path=SOCKET.name)
    assert result["fallback"] is False
    assert result["env"]["NCCL_IB_DISABLE"] == "1"
    message = nccl_log.check_transport(result, "IB")
    assert "NCCL used Socket instead of IB on vm because NCCL_IB_DISABLE=1 was set" in message
    assert nccl_log.fallback_reason(result).startswith("NCCL_IB_DISABLE=1 was set")


def test_rendered_log_is_at_info_although_the_process_did_not_ask():
    """The rendered run left NCCL_DEBUG unset in the process: INFO lines exist only because /etc/nccl.conf said so."""
    assert nccl_log.parse(RENDERED.read_text())["lines"] > 100


def test_parse_many_merges():
    merged = nccl_log.parse_many(
        [
            ("a.log", read_corpus("nccl-debug__roce-single-node-warn-nvml-unhandled-system-error.txt")),
            ("b.log", DEFAULTS.read_text()),
        ]
    )
    assert merged["transports"] == ["IB", "Socket"]
    assert merged["nccl_versions"] == ["2.26.2+cuda12.6", "2.28.9+cuda13.0"]
    assert [f["path"] for f in merged["files"]] == ["a.log", "b.log"]
    assert merged["warnings"][0]["path"] == "a.log"
    assert "also Socket" in nccl_log.check_transport(merged, "IB")


def test_no_network_line_asks_for_info_logs():
    message = nccl_log.check_transport(nccl_log.parse("just some text\n"), "IB")
    assert "NCCL_DEBUG=INFO" in message


def test_other_network_names():
    text = "h:1:1 [0] NCCL INFO Using network AWS Libfabric\n"
    result = nccl_log.parse(text)
    assert result["transports"] == ["AWS Libfabric"]
    assert "used network AWS Libfabric on h, not IB" in nccl_log.check_transport(result, "IB")
    assert nccl_log.family("IBext_v8") == "IB"


def test_gdr_detection():
    text = "n1:5:6 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
    result = nccl_log.parse(text)
    assert result["gdr"] is True
    assert result["channel_paths"] == {"NET/IB/0/GDRDMA": 1}


def test_prom_metrics_contract():
    result = nccl_log.parse(RENDERED.read_text())
    text = nccl_log.prom_metrics("gpu-1", result, busbw={"all_reduce": 346.157, "x": None}, timestamp=1796032708.9)
    assert 'ibtune_nccl_transport_info{host="gpu-1",transport="Socket"} 1' in text
    assert 'ibtune_nccl_fallback{host="gpu-1"} 1' in text
    assert 'ibtune_nccl_warnings{host="gpu-1"} 0' in text
    assert 'ibtune_nccl_busbw_gbytes{host="gpu-1",collective="all_reduce"} 346.157' in text
    assert 'collective="x"' not in text
    assert 'ibtune_nccl_check_timestamp_seconds{host="gpu-1"} 1796032708' in text
    for line in text.splitlines():
        assert line.startswith("#") or re.match(r"^ibtune_nccl_[a-z_]+\{[^}]*\} [0-9.e+-]+$", line), line
    assert 'host="a\\"b"' in nccl_log.prom_metrics('a"b', result)


def test_real_prom_file_from_the_gpu_run():
    text = (NCCL_FIXTURES / "h200x2-ibtune_nccl.prom").read_text()
    assert 'ibtune_nccl_busbw_gbytes{host="localhost",collective="all_reduce"} 346.157' in text
    assert 'ibtune_nccl_fallback{host="localhost"} 1' in text


def test_expectations_per_host_on_a_real_two_host_roce_log():
    parsed = nccl_log.parse(read_corpus("nccl-debug__roce-ibext-sharp-plugin-env-lines-2ranks-head.txt"))
    hosts = sorted(parsed["per_host"])
    assert hosts == ["6a9ab017bb44", "a4df80236412"]
    assert parsed["per_host"]["6a9ab017bb44"]["ib_devices"] == ["roce0:1/RoCE"]
    assert nccl_log.check_expectations(parsed, {"transport": "IB", "hcas": ["roce0"], "hosts": hosts}) == []
    wrong = nccl_log.check_expectations(parsed, {"transport": "IB", "hcas": ["mlx5_0"], "hosts": hosts + ["gone"]})
    assert [(p["host"], p["kind"]) for p in wrong] == [
        ("6a9ab017bb44", "hca"),
        ("a4df80236412", "hca"),
        ("gone", "no_log"),
    ]
    assert wrong[0]["message"] == "6a9ab017bb44 used NIC(s) roce0, the plan wants mlx5_0: check NCCL_IB_HCA"


def test_expectations_name_the_socket_fallback_and_the_channels_on_the_gpu_machine_log():
    parsed = nccl_log.parse(DEFAULTS.read_text())
    problems = nccl_log.check_expectations(parsed, {"transport": "IB", "channels": "NET", "hosts": ["vm"]})
    assert [p["kind"] for p in problems] == ["transport", "channels"]
    assert problems[0]["message"] == "vm used Socket (NET/IB : No device found), the plan wants IB"
    assert problems[1]["message"].startswith("vm connected ") and "via P2P" in problems[1]["message"]
    assert nccl_log.check_expectations(parsed, {"transport": "Socket", "channels": "P2P", "hosts": ["vm"]}) == []
    forced = nccl_log.parse(SOCKET.read_text())
    assert "NCCL_IB_DISABLE=1 was set" in nccl_log.check_expectations(forced, {"transport": "IB"})[0]["message"]
