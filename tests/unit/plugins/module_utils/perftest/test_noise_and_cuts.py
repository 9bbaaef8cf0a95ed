"""Parsers that cannot stall or invent (issue 20 part 7), on the corpus formats: noise around a real report leaves
its result as it was, and a report cut in the middle of its last number is refused, never read shortened.

The time is measured by bench/bench_perftest_parsers.py (1 MB of each noise); here a line that took quadratic time
(minutes at these sizes before perftest/scan.py) is parsed and must change nothing."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds
from tests.conftest import read_corpus

BW = "ib_write_bw__client-roce-mb-sec-loopback-gid3.txt"
LAT = "ib_read_lat__client-a-all-sizes-20000-iters-mlx4-prompt-wrapped-over-two-lines.txt"
ONE_NUMBER = "ib_write_lat__output-latency-single-number-vm-duration-30s.txt"
# what real stderr holds: a binary dump without a colon, a word salad, a colon flood, an unclosed header
NOISE = [
    "\x7fELF" + "a" * 200_000 + "\n",
    "word " * 40_000 + "\n",
    "k:" * 50_000 + "\n",
    "#bytes " + "BW peak average [" * 10_000 + "\n",
]


@pytest.mark.parametrize("name,test", [(BW, "write"), (LAT, "read_lat")])
@pytest.mark.parametrize("noise", NOISE, ids=["binary", "words", "colons", "header"])
def test_noise_on_stderr_changes_nothing_the_report_says(name, test, noise):
    report = read_corpus(name)
    clean = kinds.parse(test, report)
    noisy = kinds.parse(test, report + "\n" + noise)
    assert noisy["rows"] == clean["rows"] and noisy["headline"] == clean["headline"] and clean["rows"]
    assert kinds.measurement(test, noisy) == kinds.measurement(test, clean)
    assert kinds.parse(test, noise)["rows"] == []  # noise alone invents no result


def _cut_inside_last_number(text):
    """The report up to the middle of the last number of its last result row (as a killed run leaves it)."""
    lines = text.splitlines(True)
    index = max(i for i, line in enumerate(lines) if line.split() and line.split()[0].isdigit())
    row = lines[index].rstrip("\n")
    last = row.split()[-1]
    assert "." in last and len(last) > 3
    before = "".join(lines[:index])
    return before + row[: len(row) - len(last) + last.index(".")], before + row + "\n"


@pytest.mark.parametrize("name,test", [(BW, "write"), (LAT, "read_lat")])
def test_a_row_cut_inside_its_last_number_is_refused_not_shortened(name, test):
    report = read_corpus(name)
    cut, complete = _cut_inside_last_number(report)  # "... 0.708426" -> "... 0"
    whole = kinds.parse(test, report)["rows"]
    parsed = kinds.parse(test, cut)
    assert parsed["rows"] == whole[:-1]  # the cut row is not read: no "0" Mpps, no 2 us for 2.404708
    assert any("ends inside a line" in w for w in parsed["warnings"])
    # the same row, complete, is read
    assert kinds.parse(test, complete)["rows"] == whole


def test_the_single_number_of_output_latency_cut_is_refused():
    text = read_corpus(ONE_NUMBER)
    assert text == "1.846569\n"
    assert kinds.measurement("write_lat", kinds.parse("write_lat", text))["latency_us"] == pytest.approx(1.846569)
    for cut in ("1", "1.8", "1.84656"):
        parsed = kinds.parse("write_lat", cut)
        assert parsed["rows"] == [] and kinds.measurement("write_lat", parsed)["latency_us"] is None
        # a side that printed a cut number has no result: it fails as "no result table", it is not measured
        failure = kinds.classify_failure("write_lat", cut, "", 0, parsed, role="client")
        assert failure["kind"] == "unknown" and "no result table" in failure["message"]
