"""A list of pair results on disk: the plain form up to COMPACT_ABOVE, the table form above, read back the same."""

import itertools
import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable


def result(server, client, rail, round_no, bw, **extra):
    doc = {
        "server": server,
        "client": client,
        "rail": rail,
        "round": round_no,
        "bw_avg_gbps": bw,
        "bw_peak_gbps": 0.0,
        "test": "write",
        "kind": "bandwidth",
        "threshold_gbps": 360.0,
        "passed": bw >= 360.0,
        "failure_kind": None if bw >= 360.0 else "below_threshold",
        "duration_s": 10.0,
    }
    doc.update(extra)
    return doc


def typed(results):
    """The results as JSON text: tells True from 1 from 1.0 and 0.0 from -0.0, where == does not."""
    return json.dumps(results, sort_keys=True)


def write_read(tmp_path, results, compact=True):
    path = tmp_path / "results.json"
    resultfile.write_results(str(path), iter(results), compact=compact)
    return path, resultfile.read_results(str(path))


def test_a_pass_in_the_table_form_reads_back_equal_in_order_and_far_smaller(tmp_path):
    results = [
        result("node%02d" % s, "node%02d" % c, "mlx5_%d:1" % r, s, 392.0 if (s, c, r) != (3, 5, 1) else 180.0)
        for s in range(12)
        for c in range(12)
        if s != c
        for r in range(4)
    ]
    path, back = write_read(tmp_path, results)
    assert back == results and typed(back) == typed(results)
    plain = tmp_path / "plain.json"
    resultfile.write_results(str(plain), iter(results), compact=False)
    assert json.loads(plain.read_text()) == results
    assert path.stat().st_size * 3 < plain.stat().st_size
    (table,) = json.loads(path.read_text())
    # one run of results with the same keys: what every result shares is written once, the rest column by column
    assert table["ibtune_table"] == 2 and table["count"] == len(results)
    assert table["const"]["test"] == "write" and table["const"]["duration_s"] == 10.0
    columns = table["columns"]
    assert list(columns) == ["bw_avg_gbps", "client", "failure_kind", "passed", "rail", "round", "server"]
    # a pair's 4 rails over and over: a cycle; a pair's 4 results name one client, 44 one server: runs (and so do
    # the verdicts, one failed: strings and nulls, bools); the figures as they are
    assert columns["rail"] == {"cycle": ["mlx5_%d:1" % r for r in range(4)], "times": len(results) // 4}
    assert columns["client"]["runs"][:3] == ["node01", "node02", "node03"] and set(columns["client"]["lengths"]) == {4}
    assert columns["server"] == {"runs": ["node%02d" % s for s in range(12)], "lengths": [44] * 12}
    assert columns["passed"]["runs"] == [True, False, True] and sum(columns["passed"]["lengths"]) == len(results)
    assert columns["failure_kind"] == {"runs": [None, "below_threshold", None], "lengths": [149, 1, 378]}
    assert isinstance(columns["bw_avg_gbps"], list) and len(columns["bw_avg_gbps"]) == len(results)
    healthy = [r for r in results if r["passed"]]
    _path, back = write_read(tmp_path, healthy)
    assert back == healthy
    (table,) = json.loads(_path.read_text())
    assert table["const"]["passed"] is True and "passed" not in table["columns"]


def test_the_plain_form_is_the_json_list_a_person_and_from_json_read(tmp_path):
    results = [result("a", "b", "mlx5_0:1", 1, 392.0), result("b", "a", "mlx5_0:1", 2, 100.0)]
    path, back = write_read(tmp_path, results, compact=False)
    assert path.read_text() == json.dumps(results, sort_keys=True, separators=(",", ":"))
    assert back == results


def test_runs_break_where_the_keys_change_and_at_every_batch_of_table_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(resultfile, "TABLE_ROWS", 5)
    results = [result("a", "b", "mlx5_0:1", n, 392.0) for n in range(12)]
    results[7]["peer_median"] = 390.0  # another key set: its own item
    path, back = write_read(tmp_path, results)
    assert back == results
    doc = json.loads(path.read_text())
    # batch 1: rows 0-4; batch 2: rows 5-6, row 7 alone, rows 8-9; batch 3: rows 10-11
    assert [item["count"] if resultfile.TABLE_KEY in item else "dict" for item in doc] == [5, 2, "dict", 2, 2]


# values that == one another but are not the same in JSON (True, 1, 1.0; 0, False, 0.0, -0.0), and others
CONFUSABLE = st.sampled_from([True, 1, 1.0, False, 0, 0.0, -0.0, None, "1", ""])
SCALARS = st.one_of(CONFUSABLE, st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["a", "mlx5_0:1"]))
# mostly the same two keys (runs form), now and then a third (a run breaks)
RESULTS = st.lists(
    st.fixed_dictionaries(
        {"server": st.sampled_from(["a", "b"]), "bw": SCALARS}, optional={"passed": CONFUSABLE, "x": SCALARS}
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(results=RESULTS, rows=st.integers(1, 7))
@example(results=[{"server": "a", "bw": 0.0}, {"server": "a", "bw": -0.0}], rows=4)
@example(results=[{"server": "a", "bw": True}, {"server": "a", "bw": 1}, {"server": "a", "bw": 1.0}], rows=4)
def test_any_results_read_back_as_written_value_for_value_and_type_for_type(tmp_path_factory, results, rows):
    """True, 1 and 1.0 are == in Python but not in JSON or in a report: a column is shared only when every value
    is the same scalar of the same type (and a zero of the same sign)."""
    resultfile.TABLE_ROWS, saved = rows, resultfile.TABLE_ROWS
    try:
        _path, back = write_read(tmp_path_factory.mktemp("r"), results)
    finally:
        resultfile.TABLE_ROWS = saved
    assert back == results and typed(back) == typed(results)


# results that all hold the same keys (the join's), cut into chunks of any size: some exactly TABLE_ROWS
SAME_KEYS = st.lists(st.fixed_dictionaries({"server": st.sampled_from(["a", "b"]), "bw": SCALARS}), max_size=30)


@settings(max_examples=300, deadline=None)
@given(results=SAME_KEYS, rows=st.integers(1, 5), cuts=st.lists(st.integers(1, 6), min_size=1), tuples=st.booleans())
@example(results=[{"server": "a", "bw": 1.5}] * 7, rows=3, cuts=[3, 1, 3], tuples=True)
def test_results_given_as_chunks_of_columns_are_the_items_their_dicts_are(results, rows, cuts, tuples):
    """chunk_table_items (the join's columns) makes the items table_items makes of the same results as dicts, for
    chunks of any size: one of exactly TABLE_ROWS results met with none held is taken as its item, any other is
    held and cut at TABLE_ROWS, tuples (a block's verdict columns) as lists."""
    chunks, start = [], 0
    for size in itertools.cycle(cuts):
        if start >= len(results):
            break
        part = results[start : start + size]
        columns = [[res[key] for res in part] for key in ("server", "bw")]
        chunks.append((len(part), [tuple(column) for column in columns] if tuples else columns))
        start += size
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resultfile, "TABLE_ROWS", rows)
        got = list(resultfile.chunk_table_items(["server", "bw"], chunks, resultfile.COLUMNS_VERSION))
        expected = list(resultfile.table_items(results, resultfile.COLUMNS_VERSION))
    assert typed(got) == typed(expected)
    assert typed(resultfile.expand_items(got)) == typed(results)


def test_lists_are_never_shared_between_results(tmp_path):
    results = [dict(result("a", "b", "mlx5_0:1", n, 392.0), hosts=["a", "b"]) for n in range(3)]
    _path, back = write_read(tmp_path, results)
    back[0]["hosts"].append("c")
    assert back[1]["hosts"] == ["a", "b"]


def test_a_result_holding_the_table_marker_is_refused(tmp_path):
    with pytest.raises(resultfile.ResultsFileError, match="ibtune_table"):
        write_read(tmp_path, [dict(result("a", "b", "r", 1, 392.0), ibtune_table=1)])


@pytest.mark.parametrize(
    "text, words",
    [
        ("{}", r"results_paths\[0\] holds a JSON dict, not a list of pair results"),
        ("[1,", r"results_paths\[0\] is not valid JSON \(Expecting value"),
        (
            '[{"ibtune_table": 1, "const": {}, "columns": ["a", "b"], "rows": [[1, 2], [3]]}]',
            r"results_paths\[0\]\[0\] row 1 does not hold the 2 columns \['a', 'b'\]",
        ),
        ('[{"ibtune_table": 3, "const": {}, "columns": [], "rows": []}]', "another version or shape"),
        ('[{"ibtune_table": true, "const": {}, "columns": [], "rows": []}]', "another version or shape"),
        ('[{"ibtune_table": 2, "const": {}, "columns": [], "rows": []}]', r"\[0\] is a table item of another version"),
        ('[{"ibtune_table": 2, "const": {}, "count": 2.0, "columns": {}}]', "another version or shape"),
        ('[{"ibtune_table": 2, "const": {}, "count": -1, "columns": {}}]', "another version or shape"),
        (
            '[{"ibtune_table": 2, "const": {"a": 1}, "count": 2, "columns": {"a": [1, 2]}}]',
            r"\[0\] holds a both in const and in columns",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 3, "columns": {"a": [1, 2]}}]',
            r"\[0\] column 'a' holds 2 values: the item says it holds 3 results",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 3, "columns": {"a": {"cycle": ["x", "y"], "times": 2}}}]',
            r"column 'a' is a cycle that does not hold 3 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 4, "columns": {"a": {"cycle": ["x", "y"], "times": 2.0}}}]',
            r"column 'a' is a cycle that does not hold 4 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": {"runs": [], "lengths": []}}}]',
            r"column 'a' is runs that do not hold 2 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": {"runs": ["x", "y"], "lengths": [3, -1]}}}'
            "]",
            r"column 'a' is runs that do not hold 2 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": {"runs": ["x"], "lengths": [1, 1]}}}]',
            r"column 'a' is runs that do not hold 2 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": {"runs": ["x"], "lengths": [true, 1]}}}]',
            r"column 'a' is runs that do not hold 2 values",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": {"runs": ["x"], "lengths": [2], "b": 1}}}]',
            r"column 'a' is neither a list nor a cycle",
        ),
        (
            '[{"ibtune_table": 2, "const": {}, "count": 2, "columns": {"a": "xx"}}]',
            r"column 'a' is neither a list nor a cycle",
        ),
    ],
)
def test_a_file_that_is_not_a_results_file_is_named_with_what_is_wrong(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(resultfile.ResultsFileError, match=words):
        resultfile.read_results(str(path), "results_paths[0]")
    with pytest.raises(resultfile.ResultsFileError, match=r"cannot read results_paths\[0\]: .*No such file"):
        resultfile.read_results(str(tmp_path / "missing.json"), "results_paths[0]")


def test_every_result_naming_a_host_holds_the_one_string_of_its_name(tmp_path):
    """JSON makes a new string per value: 7 a result, 1.4 GB at 1024 hosts x 8 rails. Read back, the results of a
    file share one object per distinct string of a column."""
    results = [result("node%02d" % (n % 3), "node%02d" % (n % 3 + 1), "mlx5_0:1", n, 392.0 + n) for n in range(9)]
    _path, back = write_read(tmp_path, results)
    assert back == results
    assert back[0]["server"] is back[3]["server"] is back[6]["server"]
    assert back[1]["client"] is back[4]["client"] and back[0]["rail"] is back[8]["rail"]


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.sampled_from(["server", "rail", "bw", "passed", "round", "b", "a"]), unique=True, min_size=1),
    data=st.data(),
    rows=st.integers(1, 5),
)
@example(keys=["bw"], data=None, rows=4)
def test_results_given_as_chunks_of_columns_make_the_file_their_dicts_make(tmp_path_factory, keys, data, rows):
    """The join writes its results as chunks of columns (a pair's results: one sequence per key, in the order of
    its keys): the file is byte for byte the one the same results as dicts make, in either form, however the
    chunks cut them (empty chunks, and chunks across a table item's end, included), and reads back as those
    dicts."""
    if data is None:
        values = [(0.0,), (-0.0,), (0.0,), (True,), (1,), (1.0,)]
        sizes = [1, 0, 3, 2]
    else:
        values = data.draw(st.lists(st.tuples(*[CONFUSABLE] * len(keys)), max_size=12))
        sizes = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=4))
    dicts = [dict(zip(keys, row)) for row in values]

    def chunks():
        start, number = 0, 0
        while start < len(values):
            size = sizes[number % len(sizes)] or (0 if number < 8 else 1)
            rows_of = values[start : start + size]
            yield len(rows_of), (list(zip(*rows_of)) if rows_of else [()] * len(keys))
            start, number = start + size, number + 1

    where = tmp_path_factory.mktemp("r")
    resultfile.TABLE_ROWS, saved = rows, resultfile.TABLE_ROWS
    try:
        for compact in (True, False):
            resultfile.write_chunks(str(where / "chunks.json"), tuple(keys), chunks(), compact)
            resultfile.write_results(str(where / "dicts.json"), iter(dicts), compact)
            assert (where / "chunks.json").read_text() == (where / "dicts.json").read_text()
            back = resultfile.read_results(str(where / "chunks.json"))
            assert back == dicts and typed(back) == typed(dicts)
    finally:
        resultfile.TABLE_ROWS = saved


def test_results_with_the_same_keys_in_another_order_are_one_run(tmp_path):
    """A run is the results holding the same set of keys, whatever order a dict holds them in (a normalised result
    gains its keys in the order its checks add them)."""
    results = [result("a", "b", "mlx5_0:1", n, 392.0) for n in range(4)]
    results[2] = dict(reversed(list(results[2].items())))
    path, back = write_read(tmp_path, results)
    assert back == results and len(json.loads(path.read_text())) == 1
    results[3]["extra"] = 1  # another set of keys: a run of its own (here, one result: a plain dict)
    path, back = write_read(tmp_path, results)
    assert back == results and [("ibtune_table" in item) for item in json.loads(path.read_text())] == [True, False]


NAN = float("nan")


def is_nan(value):
    return isinstance(value, float) and math.isnan(value)


def same_spec(column):
    """resultfile._same as it was written first (every value counted and typed): the spec of the one that tells a
    varying column by its ends and middle first."""
    first = column[0]
    if is_nan(first) or column.count(first) != len(column):
        return False
    types = set(map(type, column))
    if len(types) != 1 or types.pop() not in (str, int, float, bool, type(None)):
        return False
    return first != 0.0 or not isinstance(first, float) or len(set(map(repr, column))) == 1


ANY_VALUE = st.one_of(SCALARS, st.just(NAN), st.just([1, 2]), st.just({"a": 1}))


@settings(max_examples=400, deadline=None)
@given(column=st.lists(ANY_VALUE, min_size=1, max_size=9), repeat=st.integers(1, 3))
@example(column=[0.0, -0.0, 0.0], repeat=1)
@example(column=[NAN], repeat=3)
@example(column=[True, 1, True], repeat=1)
def test_a_column_is_shared_exactly_when_the_first_written_rule_shared_it(column, repeat):
    column = column * repeat  # the same objects again: a NaN is list.count's by identity
    assert resultfile._same(column) == same_spec(column)  # pylint: disable=protected-access
    assert resultfile._same(tuple(column)) == same_spec(column)  # pylint: disable=protected-access


def table_items_of_spec(table):
    """resultfile.table_items_of as it was written first (a run's columns joined again for each segment added):
    the spec of the one that joins each key's values once."""
    for window in table.windows(resultfile.TABLE_ROWS):
        runs = []
        for keys, const, columns, count in window:
            if runs and runs[-1][0] == keys:
                last = runs[-1]
                for key in keys:
                    last[2][key] = spec_values(last, key) + spec_values((keys, const, columns, count), key)
                last[1] = {}
                last[3] += count
            else:
                runs.append([keys, const, columns, count])
        for _keys, const, columns, count in runs:
            if count == 1:
                res = dict(const)
                res.update((k, values[0]) for k, values in columns.items())
                yield res
            else:
                columns = dict(columns)
                columns.update((k, [v] * count) for k, v in const.items() if is_nan(v))
                names = sorted(columns)
                item = resultfile._columns_table(  # pylint: disable=protected-access
                    names, [columns[k] for k in names], count, resultfile.COLUMNS_VERSION
                )
                item["const"].update((k, v) for k, v in const.items() if k not in columns)
                yield item


def spec_values(segment, key):
    _keys, const, columns, count = segment
    return list(columns[key]) if key in columns else [const[key]] * count


# a block's shared values (ResultTable.add_columns const): confusable, NaN and not scalars among them (a list is
# shared as the block holds it, as it always was; a NaN never is)
SHARED = st.dictionaries(st.sampled_from(["test", "bw_peak_gbps", "note", "port", "passed"]), ANY_VALUE, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    blocks=st.lists(st.tuples(SHARED, st.lists(st.tuples(SCALARS, SCALARS), min_size=1, max_size=9)), max_size=4),
    changes=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["bw", "x", "peer_median"]), SCALARS)),
    rows=st.sampled_from([2, 3, 5, 4096]),
)
def test_a_table_writes_the_items_the_first_written_loop_made_whatever_its_blocks_share_and_results_hold(
    blocks, changes, rows
):
    """table_items_of (a block's shared values taken as shared, a block cut by promoted results with the same keys
    joined again) against the loop it replaces, and, where a block shares scalars only, against table_items over
    the same results as dicts: the same text, byte for byte."""
    table = ResultTable()
    for shared, values in blocks:
        names = [k for k in ("bw", "x") if k not in shared]
        columns = [[pair[i] for pair in values] for i in range(len(names))]
        table.add_columns(shared, names, columns, len(values))
    for index, key, value in changes:
        if index < len(table):
            table.promote(index)[key] = value  # "bw": the same keys (one run with its block), the others new keys
    resultfile.TABLE_ROWS, saved = rows, resultfile.TABLE_ROWS
    try:
        got = "".join(resultfile.results_chunks(table, True))
        assert got == "".join(
            resultfile.files.json_list_chunks(table_items_of_spec(table), 4, sort_keys=True, separators=(",", ":"))
        )
        scalars = (str, int, float, bool, type(None))
        if all(type(v) in scalars and not is_nan(v) for shared, _values in blocks for v in shared.values()):
            assert got == "".join(resultfile.results_chunks(list(table), True))
    finally:
        resultfile.TABLE_ROWS = saved


def decoded(column):
    """A column as version 2 wrote it (resultfile._encoded_column), read back through a file's reader."""
    encoded = resultfile._encoded_column(column)  # pylint: disable=protected-access
    item = {"ibtune_table": 2, "const": {}, "count": len(column), "columns": {"k": encoded}}
    const, names, columns, count = resultfile.table_columns(json.loads(json.dumps(item)), "item", {})
    assert (const, names, count) == ({}, ["k"], len(column))
    return encoded, list(columns[0])


# the columns of a pass: hosts in runs, rails in cycles, verdicts mostly true, and what must never be taken for
# one another (1 and True, "" and None, strings and numbers)
PATTERN_VALUES = st.sampled_from(["node01", "node02", "mlx5_0:1", "", None, True, False, 1, 1.0, 0, -0.0, "1"])


@settings(max_examples=400, deadline=None)
@given(
    values=st.lists(PATTERN_VALUES, min_size=1, max_size=6),
    runs=st.lists(st.integers(1, 9), min_size=1, max_size=8),
    times=st.integers(1, 12),
    shape=st.sampled_from(["runs", "cycle", "both"]),
)
@example(values=["a", "b"], runs=[1], times=8, shape="cycle")
@example(values=["a", "b", "a"], runs=[1], times=3, shape="cycle")
@example(values=[True, 1], runs=[4], times=2, shape="runs")
@example(values=["a", None], runs=[4], times=2, shape="runs")
def test_a_column_written_as_a_cycle_or_runs_reads_back_value_for_value_and_type_for_type(values, runs, times, shape):
    """Version 2 writes a column of strings, or of bools, as a cycle or as runs where that is shorter: read back it
    is the column, each value of its type (1 is never read as True, None never as "")."""
    if shape == "runs":
        column = [value for v, n in zip(values * len(runs), runs) for value in [v] * n] * times
    elif shape == "cycle":
        column = values * times
    else:
        column = [value for v, n in zip(values, runs) for value in [v] * n] * times
    encoded, back = decoded(column)
    assert back == column and typed(back) == typed(column)
    if isinstance(encoded, dict):  # only for strings and nulls or bools, and only where it holds fewer values
        assert all(v is None or isinstance(v, str) for v in column) or all(v.__class__ is bool for v in column)
        held = encoded.get("runs", []) + encoded.get("lengths", []) + encoded.get("cycle", [])
        assert len(held) < len(column)
    assert decoded(tuple(column))[1] == column


def test_the_columns_of_a_pass_are_written_as_their_cycle_and_runs_the_figures_and_links_as_lists():
    pairs = [("node%04d" % s, "node%04d" % c) for s in range(4) for c in range(8) if s != c]
    rails = ["mlx5_%d:1" % r for r in range(8)]
    servers = [s for s, _c in pairs for _r in rails]
    links = ["%s/%s<->%s/%s" % (s, r, c, r) for s, c in pairs for r in rails]
    figures = [390.5 + n % 7 for n in range(len(links))]
    assert decoded(servers)[0] == {"runs": ["node%04d" % s for s in range(4)], "lengths": [7 * 8] * 4}
    assert decoded(rails * len(pairs))[0] == {"cycle": rails, "times": len(pairs)}
    assert decoded(links)[0] == links and decoded(figures)[0] == figures
    # nearly all pass: the failed ones cut the runs of a bool column; a column of strings and nulls stays a list
    passed = [n % 100 != 5 for n in range(len(links))]
    assert len(links) == 224
    assert decoded(passed)[0] == {"runs": [True, False] * 3 + [True], "lengths": [5, 1, 99, 1, 99, 1, 18]}
    kinds = [None if ok else "below_threshold" for ok in passed]
    assert decoded(kinds)[0] == {"runs": [None, "below_threshold"] * 3 + [None], "lengths": [5, 1, 99, 1, 99, 1, 18]}
    assert decoded([None, 1] * 8)[0] == [None, 1] * 8  # a number among nulls: as it is
    assert decoded(["a"] * 6 + ["b"])[0] == ["a"] * 6 + ["b"]  # under 8 values: a list, whatever it holds
    assert decoded(["a"] * 7 + ["b"])[0] == {"runs": ["a", "b"], "lengths": [7, 1]}


def test_a_results_file_of_an_earlier_release_version_1_rows_still_reads(tmp_path):
    """Results files written before version 2 (rows) are read as they were, beside version 2 items."""
    results = [result("node%02d" % s, "node%02d" % c, "mlx5_0:1", s, 392.0 + c) for s in range(4) for c in range(4)]
    items = list(resultfile.table_items(results[:9], resultfile.TABLE_VERSION))
    items += list(resultfile.table_items(results[9:], resultfile.COLUMNS_VERSION))
    assert [item["ibtune_table"] for item in items] == [1, 2] and "rows" in items[0]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(items))
    back = resultfile.read_results(str(path))
    assert back == results and typed(back) == typed(results)
    table = resultfile.read_table(str(path))
    assert list(table) == results


def jq_program():
    """The jq program docs/fabric_report.md gives for reading results.json a result a line."""
    import pathlib
    import re

    doc = (pathlib.Path(__file__).parents[5] / "docs" / "fabric_report.md").read_text()
    (program,) = re.findall(r"```\n  (jq -c .*?) results\.json\n  ```", doc, re.S)
    return program


def test_the_jq_program_the_docs_give_prints_one_result_a_line_for_both_versions(tmp_path):
    import shlex
    import shutil
    import subprocess

    if shutil.which("jq") is None:
        pytest.fail("jq is not installed: scripts/bootstrap.sh installs it (make test's hosts have it)")
    results = [
        result("node%02d" % s, "node%02d" % c, "mlx5_%d:1" % r, s, 392.0 if (s, c) != (1, 2) else 100.0)
        for s in range(3)
        for c in range(3)
        if s != c
        for r in range(4)
    ]
    results[5]["peer_median"] = 391.0  # a result with a key of its own: a plain dict between table items
    items = list(resultfile.table_items(results[:10], resultfile.TABLE_VERSION))
    items += list(resultfile.table_items(results[10:], resultfile.COLUMNS_VERSION))
    assert {item.get("ibtune_table") for item in items} == {None, 1, 2}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(items))
    argv = shlex.split(jq_program()) + [str(path)]
    assert argv[:2] == ["jq", "-c"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    back = [json.loads(line) for line in out.splitlines()]
    assert back == results  # value for value: jq prints a number its own way (360.0 as 360)


def encoded_column_spec(column):
    """resultfile._encoded_column as it was first written (_repeatable asked first, runs of one length checked by
    remaking the column, any other runs grouped by itertools.groupby): the spec of the one that asks _repeatable
    last and finds where runs start in C."""
    count = len(column)
    if count < 8 or not resultfile._repeatable(column):  # pylint: disable=protected-access
        return column
    first = column[0]
    if column[1] == first:
        length = 2
        while length < count and length < 64 and column[length] == first:
            length += 1
        if length < 64 and not count % length:
            runs = list(column[::length])
            lengths = [length] * len(runs)
            remade = [value for value, n in zip(runs, lengths) for value in [value] * n]
            if (remade if isinstance(column, list) else tuple(remade)) == column:
                return {"runs": runs, "lengths": lengths} if len(runs) * 2 < count else column
        groups = [(key, len(list(group))) for key, group in itertools.groupby(column)]
        if len(groups) * 2 >= count:
            return column
        return {"runs": [key for key, _n in groups], "lengths": [n for _key, n in groups]}
    try:
        period = column.index(first, 1)
    except ValueError:
        return column
    times, rest = divmod(count, period)
    if rest or column[:period] * times != column:
        return column
    return {"cycle": list(column[:period]), "times": times}


# awkward values for a column: confusable scalars, a NaN, floats, a list
COLUMN_VALUES = st.one_of(PATTERN_VALUES, st.just(NAN), st.just(390.5), st.just([1]))


@settings(max_examples=500, deadline=None)
@given(
    values=st.lists(COLUMN_VALUES, min_size=1, max_size=5),
    runs=st.lists(st.integers(1, 70), min_size=1, max_size=6),
    times=st.integers(1, 9),
    shape=st.sampled_from(["runs", "cycle", "both", "any"]),
    as_tuple=st.booleans(),
)
@example(values=[True, False], runs=[667, 1, 223, 1], times=1, shape="runs", as_tuple=False)
@example(values=["a", "b"], runs=[8], times=8, shape="runs", as_tuple=True)
@example(values=["a", 1, "a"], runs=[1], times=3, shape="cycle", as_tuple=False)
@example(values=[1.0, True], runs=[3], times=4, shape="runs", as_tuple=False)
@example(values=["node1", "node2", "node1"], runs=[8, 7, 1], times=4, shape="runs", as_tuple=False)
@example(values=["a", "b", "c", "d"], runs=[2, 1, 2, 3], times=1, shape="both", as_tuple=False)  # 4 runs in 8
def test_a_column_is_encoded_as_the_first_written_encoder_encoded_it(values, runs, times, shape, as_tuple):
    """_encoded_column against the encoder it replaces, on runs of many lengths (over _LONGEST_RUN, cut runs), cycles
    and any mix of strings, nulls, bools, numbers that equal them, a NaN and a list: the same encoding."""
    if shape == "runs":
        column = [value for v, n in zip(values * len(runs), runs) for value in [v] * n] * times
    elif shape == "cycle":
        column = values * times
    elif shape == "both":
        column = [value for v, n in zip(values, runs) for value in [v] * n] * times
    else:
        column = [values[n % len(values)] for n in runs] * times
    column = tuple(column) if as_tuple else column
    got = resultfile._encoded_column(column)  # pylint: disable=protected-access
    assert typed(got) == typed(encoded_column_spec(column))
    assert got.__class__ is dict or got is column


FIGURES = st.one_of(
    st.sampled_from([390.76, 391.5, 0.0, -0.0, 1.0, 1, True, NAN, float("inf"), float("-inf"), None]),
    st.floats(allow_nan=True, allow_infinity=True),
)


# items the compact form holds besides table items with figures: a result, a version 1 item, a version 2 item with
# a key that is not a string (json writes it as one), a short column of figures
OTHER_ITEMS = st.sampled_from(
    [
        {"bw": 1.5},
        {"ibtune_table": 1, "columns": ["a"], "rows": []},
        {"ibtune_table": 2, "const": {1: "x"}, "count": 70, "columns": {1: [0.5] * 70}},
        {"ibtune_table": 2, "const": {}, "count": 2, "columns": {"z": [2.5, 2.5], "a": ("x", "y")}},
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    columns=st.lists(st.lists(FIGURES, min_size=1, max_size=12), min_size=1, max_size=5),
    times=st.sampled_from([1, 70]),
    others=st.lists(st.tuples(st.integers(0, 5), OTHER_ITEMS), max_size=150),
    held=st.sampled_from([0, 2, 1 << 16]),
)
@example(columns=[[0.0, -0.0, 0.0], [-0.0, 0.0]], times=70, others=[], held=1 << 16)
@example(columns=[[1.0, 1, True, 1.0]], times=70, others=[], held=1 << 16)
@example(columns=[[390.76] * 3, [391.5, 390.76]], times=70, others=[(1, {"bw": 1.5})] * 70, held=0)
def test_the_compact_form_is_written_byte_for_byte_as_json_dumps_writes_its_items(columns, times, others, held):
    """_compact_chunks (figures written from their texts, each made once a file; the other items encoded together)
    against json_list_chunks of the same items: zeros of both signs, 1, True and 1.0, NaN and infinities, a file
    past _FloatTexts.HELD figures, short columns, keys that are not strings, other items in long rows."""
    items = [
        {"ibtune_table": 2, "const": {"test": "write", "bw": 1.0}, "count": len(column), "columns": {"f": column}}
        for column in (column * times for column in columns)
    ]
    for place, item in others:
        items.insert(min(place, len(items)), item)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resultfile._FloatTexts, "HELD", held)  # pylint: disable=protected-access
        got = "".join(resultfile._compact_chunks(iter(items)))  # pylint: disable=protected-access
    assert got == "".join(resultfile.files.json_list_chunks(items, 4, sort_keys=True, separators=(",", ":")))


def windows_spec(table, size):
    """ResultTable.windows as it was first written (every promoted result a segment of one, cutting its block):
    the spec of the one that keeps a promoted result with its block's keys in its block's segment."""
    held = sorted(table._promoted)  # pylint: disable=protected-access
    nxt = 0
    window, filled = [], 0
    for number, (keys, const, columns, count) in enumerate(table._blocks):  # pylint: disable=protected-access
        start = table._starts[number]  # pylint: disable=protected-access
        first = start
        while first < start + count:
            last = min(start + count, first + size - filled)
            filled += last - first
            while nxt < len(held) and held[nxt] < last:
                index = held[nxt]
                if index > first:
                    window.append((keys, const, dict((k, v[first - start : index - start]) for k, v in columns.items()),
                                   index - first))  # fmt: skip
                res = table._promoted[index]  # pylint: disable=protected-access
                window.append((tuple(sorted(res)), {}, dict((k, [v]) for k, v in res.items()), 1))
                first = index + 1
                nxt += 1
            if last > first:
                window.append((keys, const, dict((k, v[first - start : last - start]) for k, v in columns.items()),
                               last - first))  # fmt: skip
            first = last
            if filled == size:
                yield window
                window, filled = [], 0
    if window:
        yield window


@settings(max_examples=300, deadline=None)
@given(
    blocks=st.lists(st.tuples(SHARED, st.lists(st.tuples(SCALARS, SCALARS), min_size=1, max_size=9)), max_size=4),
    changes=st.lists(
        st.tuples(
            st.integers(0, 40), st.sampled_from(["bw", "x", "test", "note", "passed", "peer_median", "swap"]), ANY_VALUE
        )
    ),
    rows=st.sampled_from([2, 3, 5, 4096]),
    rails=st.booleans(),
)
@example(blocks=[({"passed": True}, [(1.0, 2.0)] * 3)], changes=[(1, "passed", 1)], rows=4096, rails=False)
@example(blocks=[({}, [(1.0, 2.0)] * 3)], changes=[(1, "swap", 1)], rows=4096, rails=False)
def test_a_table_writes_the_items_its_first_written_windows_made(blocks, changes, rows, rails):
    """table_items_of over ResultTable.windows against the first written windows (a promoted result a segment of
    its own) and the loop that joined them again: shared NaN, lists and confusable scalars, promoted results
    changing a shared value (to an equal one of another type, a NaN, a list) or a column, adding a key or holding
    as many keys as their block but not the same, columns held as tuples (a file's decoded cycles): the same text,
    byte for byte."""
    table = ResultTable()
    for shared, values in blocks:
        names = [k for k in ("bw", "x") if k not in shared]
        columns = [[pair[i] for pair in values] for i in range(len(names))]
        if rails:
            columns = [tuple(column) for column in columns]
        table.add_columns(shared, names, columns, len(values))
    for index, key, value in changes:
        if index >= len(table):
            continue
        if key == "swap":  # as many keys as its block, not the same ones
            res = table.promote(index)
            res["peer_median"] = res.pop(sorted(res)[0])
        elif key in table[index] or key == "peer_median":
            table.promote(index)[key] = value
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resultfile, "TABLE_ROWS", rows)
        got = "".join(resultfile.results_chunks(table, True))
        patch.setattr(ResultTable, "windows", windows_spec)
        assert got == "".join(
            resultfile.files.json_list_chunks(table_items_of_spec(table), 4, sort_keys=True, separators=(",", ":"))
        )


def test_the_texts_of_figures_held_for_a_file_are_bounded():
    """A file whose figures seldom repeat holds at most about HELD texts: past it, each column is encoded whole."""
    encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
    texts = resultfile._FloatTexts(encode)  # pylint: disable=protected-access
    for start in range(0, 200000, 1000):
        column = [start + n + 0.5 for n in range(1000)]
        assert texts.column(column) == encode(column)
    assert len(texts) <= texts.HELD + 1000
