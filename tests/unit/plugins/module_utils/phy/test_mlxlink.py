"""Every real mlxlink/mstlink output of tests/fixtures/phy parsed verbatim, one test each; N/A, malformed and
failed outputs carried as unknown or refused, never as zero."""

import json
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import mlxlink

FIX = Path(__file__).resolve().parents[5] / "tests" / "fixtures" / "phy"


def read(name):
    return (FIX / name).read_text()


def parse(name):
    return mlxlink.parse(read(name))


def test_mft_4_34_1_json_ndr_dr4_module():
    r = parse("mlxlink-4.34.1-json-ndr-osfp-dr4.json")
    assert r["format"] == "json" and r["mft_version"] == "4.34.1-10" and r["firmware"] == "28.47.1088"
    assert r["link"] == {
        "state": "Active",
        "physical_state": "ETH_AN_FSM_ENABLE",
        "speed": "400G",
        "width": "4x",
        "fec": "Standard_RS-FEC - (544,514)",
        "lanes": 4,
        "speed_gbps": 400.0,
    }
    c = r["counters"]
    assert c["effective_ber"] == 0.0  # 15E-255
    assert c["effective_errors"] == 0 and c["link_down"] == 0 and c["link_recovery"] == 0
    assert c["raw_ber"] == pytest.approx(5e-10)
    assert c["raw_ber_lanes"] == pytest.approx([1e-10, 1e-9, 4e-10, 5e-10])
    assert c["raw_errors_lanes"] == [3017647, 15132549, 7368641, 9233545]
    assert c["time_since_clear_min"] == 2718.1
    assert c["symbol_ber"] is None and c["symbol_errors"] is None  # an Ethernet-mode link: no symbol figures
    m = r["module"]
    assert (m["identifier"], m["vendor"], m["part_number"], m["serial"]) == (
        "OSFP",
        "EXAMPLE",
        "OSFP-400G-DR4",
        "S00XXX000000",
    )
    assert m["temperature_c"] == 61.0 and m["temperature_range"] == [-10.0, 80.0]
    assert m["voltage_mv"] == 3235.5 and m["voltage_range"] == [2970.0, 3630.0]
    assert m["rx_power_dbm"] == [3.583, 3.253, 3.233, 2.658] and m["rx_power_range"] == [-9.914, 6.999]
    assert m["tx_power_range"] == [-6.904, 6.999] and m["bias_range"] == [40.0, 480.0]
    assert m["faults"] == {
        "tx_fault": [0, 0, 0, 0],
        "tx_los": [0, 0, 0, 0],
        "rx_los": [0, 0, 0, 0],
        "tx_cdr_lol": [0, 0, 0, 0],
        "rx_cdr_lol": [0, 0, 0, 0],
        "module_fw_fault": 0,
        "datapath_fw_fault": 0,
    }
    assert r["fec_histogram"] is None and r["eye"] is None
    assert r["recommendation"] == "No issue was observed"
    assert r["unknown"] == [] and r["unparsed"] == []


def test_mft_4_34_1_json_fec_histogram_bins_in_order():
    r = parse("mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-serdes.json")
    hist = r["fec_histogram"]
    assert len(hist) == 16
    assert hist[0] == [0, 0, 22858119037881] and hist[1] == [1, 1, 65755507] and hist[8] == [8, 8, 3]
    assert [b[2] for b in hist[9:]] == [0] * 7  # nothing in the tail of a healthy link over 81 hours
    assert r["counters"]["time_since_clear_min"] == 4876.6
    assert r["module"]["serial"] == "<redacted>"


def test_mft_4_34_1_json_eye_grades_per_lane():
    r = parse("mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-eye.json")
    assert r["eye"] == {
        "lanes": [0, 1, 2, 3],
        "initial_fom": [100.0, 116.0, 87.0, 98.0],
        "last_fom": [107.0, 112.0, 88.0, 101.0],
        "upper": [108.0, 111.0, 85.0, 100.0],
        "mid": [124.0, 121.0, 111.0, 114.0],
        "lower": [106.0, 109.0, 91.0, 95.0],
    }
    assert r["fec_histogram"][0][2] == 26766318661536


@pytest.mark.parametrize("end, serial, minutes", [("port0", "REDACTED-1", 25074.8), ("port1", "REDACTED-2", 25075.2)])
def test_mft_4_30_1_text_bluefield3_dac(end, serial, minutes):
    r = parse("mlxlink-4.30.1-text-bluefield3-100g-dac-%s.txt" % end)
    assert r["format"] == "text" and r["mft_version"] == "mft 4.30.1-8" and r["firmware"] == "32.43.2402"
    assert (
        r["link"]["speed_gbps"] == 100.0
        and r["link"]["lanes"] == 4
        and r["link"]["fec"] == "Standard RS-FEC - RS(528,514)"
    )
    c = r["counters"]
    assert c["effective_ber"] == 0.0 and c["raw_ber"] == 0.0  # both 15E-255: a clean DAC
    assert c["raw_errors_lanes"] == [0, 0, 0, 0] and c["time_since_clear_min"] == minutes
    m = r["module"]
    assert (m["identifier"], m["vendor"], m["part_number"], m["serial"]) == ("QSFP28", "FS", "Q28-PC03", serial)
    # a passive DAC has no DDM: every analog field is N/A, carried as unknown, never 0
    assert m["temperature_c"] is None and m["rx_power_dbm"] is None and m["voltage_mv"] is None
    assert m["faults"]["tx_fault"] is None and m["faults"]["module_fw_fault"] is None
    assert {"Temperature [C]", "Rx Power Current [dBm]", "Tx Fault [per lane]", "Module FW Fault"} <= set(r["unknown"])
    assert r["unparsed"] == []


def test_text_counters_with_ansi_colours():
    r = parse("mlxlink-text-counters-ndr-400g-ansi-colour.txt")
    c = r["counters"]
    assert c["effective_ber"] == 0.0 and c["raw_ber"] == pytest.approx(2e-9)
    assert c["raw_errors_lanes"] == [3946476397, 5120336064, 7692183445, 3026261414]
    assert c["time_since_clear_min"] == 348349.5
    assert r["module"] is None and r["sections"] == ["Physical Counters and BER Info"]


def test_text_module_excerpt():
    m = parse("mlxlink-text-module-osfp-excerpt.txt")["module"]
    assert m["temperature_c"] == 54.0 and m["temperature_range"] == [-5.0, 75.0]
    assert m["bias_ma"] == [8.38] * 4 and m["bias_range"] == [2.0, 15.0]
    assert m["rx_power_range"] == [-10.41, 6.0] and m["tx_power_range"] == [-8.508, 5.0]
    assert m["serial"] == "REDACTED" and m["vendor"] == "CLT"


def test_mstlink_4_21_0_no_device_failure_is_no_reading():
    stdout = read("mstlink-4.21.0-no-device.stdout")
    assert read("mstlink-4.21.0-no-device.rc").strip() == "1"
    assert '-E- Failed to open device: "mlx5_0", Invalid argument' in read("mstlink-4.21.0-no-device.stderr")
    with pytest.raises(mlxlink.PhyFormatError):  # no JSON although --json was given
        mlxlink.parse(stdout)


def test_every_flag_we_pass_is_in_the_real_mstlink_help():
    help_text = read("mstlink-4.21.0-help.txt")
    flags = set(mlxlink.query_argv("mstlink", "mlx5_0", 2, eye=True)[1:]) | set(
        a for argv in mlxlink.clear_argv("mstlink", "mlx5_0", 1) for a in argv[1:]
    )
    for flag in sorted(f for f in flags if f.startswith("-")):
        assert (" %s " % flag) in help_text or ("|%s" % flag) in help_text or ("%s\t" % flag) in help_text, flag


def test_a_query_never_clears():
    argv = mlxlink.query_argv("mlxlink", "lid-12", 7)
    assert argv == [
        "mlxlink",
        "-d",
        "lid-12",
        "-p",
        "7",
        "-m",
        "-c",
        "--rx_fec_histogram",
        "--show_histogram",
        "--json",
    ]
    assert not set(argv) & set(mlxlink.CLEAR_FLAGS)


# --- mechanical variants of the real capture: N/A, status errors, faults, missing sections -------------------


def doc():
    return json.loads(read("mlxlink-4.34.1-json-ndr-osfp-dr4.json"))


def test_json_status_error_is_refused_with_the_tools_message():
    d = doc()
    d["status"] = {"code": 1, "message": "Failed to open device"}
    with pytest.raises(mlxlink.PhyToolError, match="status 1: Failed to open device"):
        mlxlink.parse(json.dumps(d))


def test_json_na_fields_are_unknown_never_zero():
    d = doc()
    ber = d["result"]["output"]["Physical Counters and BER Info"]
    ber["Effective Physical BER"] = "N/A"
    ber["Raw Physical BER Per Lane"] = {"values": ["N/A"]}
    ber["Raw Physical Errors Per Lane"] = {"values": ["N/A", "N/A", "N/A", "N/A"]}
    d["result"]["output"]["Module Info"]["Temperature [C]"] = "N/A"
    r = mlxlink.parse(json.dumps(d))
    assert r["counters"]["effective_ber"] is None
    assert r["counters"]["raw_ber_lanes"] is None and r["counters"]["raw_errors_lanes"] is None
    assert r["module"]["temperature_c"] is None
    assert {"Effective Physical BER", "Raw Physical BER Per Lane", "Temperature [C]"} <= set(r["unknown"])


def test_json_malformed_value_is_carried_as_unparsed():
    d = doc()
    d["result"]["output"]["Physical Counters and BER Info"]["Effective Physical BER"] = "5E-"
    d["result"]["output"]["Module Info"]["Temperature [C]"] = "61C [-10..80]"
    r = mlxlink.parse(json.dumps(d))
    assert r["counters"]["effective_ber"] is None and r["module"]["temperature_c"] is None
    assert "Effective Physical BER: 5E-" in r["unparsed"] and "Temperature [C]: 61C [-10..80]" in r["unparsed"]


def test_json_faults_active():
    d = doc()
    mod = d["result"]["output"]["Module Info"]
    mod["Tx Fault [per lane]"] = {"values": ["1", "1", "0", "0"]}
    mod["Module FW Fault"] = "1"
    r = mlxlink.parse(json.dumps(d))
    assert r["module"]["faults"]["tx_fault"] == [1, 1, 0, 0] and r["module"]["faults"]["module_fw_fault"] == 1


def test_json_without_module_section():
    d = doc()
    del d["result"]["output"]["Module Info"]
    r = mlxlink.parse(json.dumps(d))
    assert r["module"] is None and r["counters"]["raw_ber"] == pytest.approx(5e-10)


def test_a_histogram_with_a_bad_bin_is_unknown_as_a_whole():
    d = json.loads(read("mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-serdes.json"))
    d["result"]["output"]["Histogram of FEC Errors"]["Bin 3"] = {"values": ["[3]", "many"]}
    r = mlxlink.parse(json.dumps(d))
    assert r["fec_histogram"] is None and any(u.startswith("Bin 3") for u in r["unparsed"])


@pytest.mark.parametrize("text", ["", "hello", "{}", '{"result": {}}', "[1, 2]", "{not json"])
def test_output_that_is_not_mlxlinks_is_refused(text):
    with pytest.raises(mlxlink.PhyFormatError):
        mlxlink.parse(text)


def test_text_histogram_bins_with_tabs_and_ranges():
    text = (
        "\nOperational Info\n----------------\nState                              : Active\n"
        "\nHistogram of FEC Errors\n-----------------------\nHeader                             : Range \tOccurrences\n"
        "Bin 0                              : [0]   \t100\nBin 1                              : [1:3] \t7\n"
    )
    assert mlxlink.parse(text)["fec_histogram"] == [[0, 0, 100], [1, 3, 7]]


def test_labels_of_every_release_are_known():
    # MFT >= 4.18 on InfiniBand prints Symbol Errors / Symbol BER; >= 4.32 Raw Physical BER Per Lane
    keys = {label for _s, labels, _k in mlxlink.LABELS.values() for label in labels}
    assert {"Symbol Errors", "Symbol BER", "Raw Physical BER Per Lane", "Effective Physical BER"} <= keys
