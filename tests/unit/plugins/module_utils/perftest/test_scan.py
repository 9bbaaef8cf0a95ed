"""perftest/scan.py: the linear scanners return what the regular expressions they replace return (property tests
on text made of the characters that matter), on every line of the corpus too, and a cut last line is set aside."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import scan
from tests.conftest import corpus_files

# the regular expressions of perftest/bandwidth.py and latency.py before they were replaced (quadratic on a long
# run that never meets its delimiter)
PAIR_RE = re.compile(r"(?P<key>[A-Za-z][A-Za-z0-9_\-.*/ ]*?)\s*:\s*(?P<value>\S+)")
BW_COLUMN_RE = re.compile(r"#\w+|[A-Za-z][A-Za-z0-9 ]*?\[[^\]]*\]|[A-Za-z]\w*")
LAT_COLUMN_RE = re.compile(r"#\w+|\d+(?:\.\d+)?%\s*percentile\s*\[[^\]]*\]|tps\s+average|[A-Za-z_][\w ]*?\[[^\]]*\]")
CUDA_RE = re.compile(r"device name = \[(?P<name>[^\]]+)\]")

TEXT = st.text(alphabet="aZt_ps9.%#:[]  \t\x0b-*/(é٣", max_size=60)
WORDS = st.lists(
    st.sampled_from(["#bytes", "BW", "peak", "[Gb/sec]", "99%", "99.9%", "percentile", "[usec]", "tps", "average",
                     "t_min", "Link type", ":", " : ", "IB", "]", "[", "device name = [", "GPU", "x:y", "  "]),
    max_size=40,
).map("".join)  # fmt: skip


def pairs_re(line):
    return [(m.group("key").rstrip(), m.group("value")) for m in PAIR_RE.finditer(line)]


@settings(max_examples=400, deadline=None)
@given(st.one_of(TEXT, WORDS))
def test_the_scanners_equal_the_regular_expressions(text):
    assert scan.header_pairs(text) == pairs_re(text)[: scan.MAX_PAIRS]
    columns = BW_COLUMN_RE.findall(text)
    assert scan.bandwidth_columns(text) == (columns if len(columns) <= scan.MAX_COLUMNS else None)
    columns = LAT_COLUMN_RE.findall(text)
    assert scan.latency_columns(text) == (columns if len(columns) <= scan.MAX_COLUMNS else None)
    found = CUDA_RE.search(text)
    assert scan.bracketed_after(text, "device name = [") == (found.group("name") if found else None)


def test_the_scanners_equal_the_regular_expressions_on_every_corpus_line():
    lines = 0
    for path in corpus_files("ib_"):
        for line in path.read_text(errors="replace").splitlines():
            line = line.replace("\t", " ")
            assert scan.header_pairs(line) == pairs_re(line), line
            assert scan.bandwidth_columns(line) == BW_COLUMN_RE.findall(line), line
            assert scan.latency_columns(line) == LAT_COLUMN_RE.findall(line), line
            lines += 1
    assert lines > 500


def test_a_text_that_does_not_end_with_a_line_break_has_its_last_line_set_aside():
    assert scan.complete_lines("a\nb\n") == (["a", "b"], None)
    assert scan.complete_lines("a\r\nb") == (["a"], "b")
    assert scan.complete_lines("") == ([], None)
    assert scan.complete_lines("a\n\n") == (["a", ""], None)
