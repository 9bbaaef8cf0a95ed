"""ibdiagnet2.db_csv tables and ibdiagnet2.log BER check lines, on CONSTRUCTED files (no public capture of
either was found: tests/fixtures/phy/README.md): names, not positions; N/A is None; 15E-255 is 0; malformed refused."""

from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import dbcsv, ibdiaglog, mlxlink

HERE = Path(__file__).resolve().parents[5] / "tests" / "fixtures" / "phy" / "constructed"
DB = (HERE / "ibdiagnet2.db_csv").read_text()
LOG = (HERE / "ibdiagnet2.log").read_text()


def _port(parsed, guid, port):
    return [p for p in parsed["ports"] if (p["guid"], p["port"]) == (guid, port)][0]


def test_db_csv_tables_merge_per_port_with_the_sentinel_as_zero():
    parsed = dbcsv.parse_db_csv(DB)
    assert parsed["tables"] == ["CABLE_INFO", "NODES", "PHY_DB12", "PHY_DB16", "PM_INFO"]
    assert parsed["unread"] == ["PHY_DB12"]  # field<i> columns are not guessed at
    leaf = _port(parsed, "0x0c42a10300aa0001", 2)
    assert leaf["phy"]["raw_ber"] == pytest.approx(5e-10) and leaf["phy"]["effective_ber"] == pytest.approx(2e-12)
    assert leaf["phy"]["symbol_ber"] == 0.0  # 15E-255: no errors
    assert leaf["phy"]["raw_errors_lanes"] == [3017647, 15132549, 7368641, 9233545]
    assert leaf["pm"] == {"link_down": 3, "link_recovery": 1}
    assert leaf["cable"] == {
        "vendor": "Nvidia",
        "part_number": "MMA4Z00-NS",
        "serial": "MT2250FT00012",
        "temperature": 48.0,
    }
    clean = _port(parsed, "0x0c42a10300aa0001", 3)
    assert clean["phy"]["raw_ber"] == 0.0 and clean["cable"]["temperature"] is None


def test_n_a_is_unknown_never_zero():
    host = _port(dbcsv.parse_db_csv(DB), "0x0c42a10300bb0001", 1)
    assert host["phy"]["raw_ber"] is None and host["phy"]["effective_ber"] is None
    assert host["phy"]["raw_errors_lanes"] == [None, None, None, None]
    assert host["pm"] == {"link_down": 0, "link_recovery": None}
    reading = dbcsv.reading_of_port(host)
    assert reading["counters"]["effective_ber"] is None and "effective_ber" in reading["unknown"]
    assert reading["counters"]["link_recovery"] is None and reading["module"] is None


def test_a_port_becomes_a_reading_the_gates_take():
    reading = dbcsv.reading_of_port(_port(dbcsv.parse_db_csv(DB), "0x0c42a10300aa0001", 2))
    assert reading["format"] == "ibdiagnet-db_csv"
    counters = reading["counters"]
    assert counters["effective_ber"] == pytest.approx(2e-12) and counters["symbol_ber"] == 0.0
    assert counters["time_since_clear_min"] == pytest.approx(10.0) and counters["link_down"] == 3
    assert reading["module"]["serial"] == "MT2250FT00012" and reading["module"]["temperature_c"] == 48.0


@pytest.mark.parametrize(
    "text, match",
    [
        ("nothing here\n", "no START_"),
        ("START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1,0\n", "PM_INFO is never closed"),
        ("END_PM_INFO\n", "line 1: END_PM_INFO without START_PM_INFO"),
        ("START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1\nEND_PM_INFO\n", "line 3 .PM_INFO. has 2 fields"),
        (
            "START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1,-1\nEND_PM_INFO\n",
            "line 3 .PM_INFO. LinkDownedCounter",
        ),
        ("START_A\nx\nSTART_B\n", "line 3: START_B inside A"),
        (
            "START_PHY_DB16\nNodeGuid,PortNum,raw_ber_coef,raw_ber_magnitude\n0x1,1,5,x\nEND_PHY_DB16\n",
            "line 3 .PHY_DB16. raw_ber",
        ),
    ],
)
def test_malformed_or_truncated_db_csv_is_refused_naming_the_line(text, match):
    with pytest.raises(mlxlink.PhyFormatError, match=match):
        dbcsv.parse_db_csv(text)


def test_truncated_fixture_is_refused():
    with pytest.raises(mlxlink.PhyFormatError, match="PHY_DB16 is never closed"):
        dbcsv.parse_db_csv(DB.split("END_PHY_DB16")[0])


def test_log_checks_and_per_port_findings():
    parsed = ibdiaglog.parse_log(LOG)
    assert [(c["check"], c["severity"], c["result"]) for c in parsed["checks"]] == [
        ("Effective BER Check", "error", "with errors"),
        ("Symbol BER Check", "warning", "with warnings"),
        ("Raw BER Check", "info", "successfully"),
    ]
    first, second, third = parsed["findings"]
    assert (first["name"], first["port"], first["severity"]) == ("leaf4/U1", 2, "error")
    assert first["value"] == pytest.approx(2e-12) and first["threshold"] == pytest.approx(1e-12)
    assert (second["guid"], second["port"], second["value"]) == ("0x0c42a10300aa0001", 3, 0.0)
    assert third["value"] is None and third["threshold"] == pytest.approx(1e-12) and third["line"] == 10


@pytest.mark.parametrize(
    "line, match",
    [
        ("-E- leaf4/U1 - Effective BER value=2E-12 threshold=1E-12", "line 1: port 'leaf4/U1'"),
        ("-E- leaf4/U1/P2 - Effective BER value=lots threshold=1E-12", "line 1: value"),
        ("-E- leaf4/U1/P2 - Effective BER value=2E-12 threshold=2", "line 1: threshold"),
    ],
)
def test_a_malformed_ber_line_is_refused(line, match):
    with pytest.raises(mlxlink.PhyFormatError, match=match):
        ibdiaglog.parse_log(line + "\n")


def test_other_log_lines_are_ignored():
    text = '-E- r9i1n24/U1/P1 - "symbol_error_counter" increased during the run (difference value=117)\n'
    assert ibdiaglog.parse_log(text) == {"checks": [], "findings": []}
