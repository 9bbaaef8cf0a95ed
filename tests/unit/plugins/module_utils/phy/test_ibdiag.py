"""ibdiagnet2.net_dump_ext, on a CONSTRUCTED file (tests/fixtures/phy/README.md says why): columns by name."""

from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import ibdiag, mlxlink

TEXT = (
    Path(__file__).resolve().parents[5] / "tests" / "fixtures" / "phy" / "constructed" / "ibdiagnet2.net_dump_ext"
).read_text()


def test_rows_by_column_name_with_the_sentinel_as_zero():
    rows = ibdiag.parse_net_dump_ext(TEXT)
    assert len(rows) == 4
    spine = rows[0]
    assert (spine["guid"], spine["port"], spine["type"]) == ("0x0c42a103000501aa", 12, "SW")
    assert (
        spine["effective_ber"] == pytest.approx(5e-08)
        and spine["symbol_ber"] == 0.0
        and spine["effective_errors"] == 73
    )
    assert spine["node_desc"] == "MF0;G2-IB-CORE-SW6A:MCS8500/S13/U1"  # the ':' inside the description kept
    assert rows[1]["symbol_ber"] == pytest.approx(1e-12)
    assert rows[2]["effective_ber"] == 0.0 and rows[2]["node_desc"] == "n08509 HCA-1"
    down = rows[3]
    assert down["raw_ber"] is None and down["effective_ber"] is None and down["symbol_errors"] is None


def test_a_row_becomes_a_reading_the_gates_take():
    reading = ibdiag.reading_of_row(ibdiag.parse_net_dump_ext(TEXT)[0])
    assert reading["counters"]["effective_ber"] == pytest.approx(5e-08) and reading["module"] is None


def test_no_header_or_no_ber_columns_or_a_short_line_is_refused():
    with pytest.raises(mlxlink.PhyFormatError, match="no header line"):
        ibdiag.parse_net_dump_ext("# nothing\n")
    with pytest.raises(mlxlink.PhyFormatError, match="no Raw BER, Effective BER column"):
        ibdiag.parse_net_dump_ext("Ty : # : #IB : GUID : LID\nSW : 1 : 1 : 0x1 : 2\n")
    with pytest.raises(mlxlink.PhyFormatError, match="line 4 has"):
        ibdiag.parse_net_dump_ext(TEXT.splitlines()[2] + "\n\n\nSW : 1 : 1\n")
