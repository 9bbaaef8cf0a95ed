# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A list of pair results on disk: a pass's results file (fabric_join's dest) and the report's results.json.

The file is a JSON list. Up to ``COMPACT_ABOVE`` results, each item is one pair result (a dict), as jq, from_json
and a person read it. Above, consecutive results are written as table items: the results of one pass differ in a
few keys (the hosts, the rail, the round, the figures) and share the rest (the test, the thresholds, the
verdict), so a run of results with the same keys becomes

    {"ibtune_table": 2, "const": {key: value shared by every result}, "count": n, "columns": {key: column}}

(a run of one stays a plain dict). A column is the list of its n values, or, for a column of strings (and nulls)
or of bools where that holds fewer values, a cycle (``{"cycle": [values], "times": t}``: the values over and over,
as a pair's 8 rails are, pair after pair) or runs (``{"runs": [values], "lengths": [l]}``: each value l times in a
row, as the 8 results of a pair name the same two hosts); == tells strings, nulls and bools apart exactly, so both
are lossless. At 1024 hosts x 8 rails all_pairs the join's file is 80 MB instead of 390 as version 1's rows.

Version 1 (``{"ibtune_table": 1, "const": {...}, "columns": [keys], "rows": [[values]]}``, row by row) is what a
runner's side file holds (a round of 8 rails: sidefiles.side_lines) and what results files of earlier releases
hold: every reader reads both. The order of the results is kept, and reading a file back gives dicts equal to
those written (a value is shared in ``const`` only when every result holds the same scalar of the same type: True,
1 and 1.0 stay apart, and so do 0.0 and -0.0). Every reader goes through ``read_results`` or ``read_table``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import json
import math
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files
from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable

# pair results above which the files that list them go compact: the results file is table-encoded, and the
# report (report/aggregate.py) summarises per host and rail what cannot take one line per pair
COMPACT_ABOVE = 20000
TABLE_KEY = "ibtune_table"
TABLE_VERSION = 1  # rows: a runner's side file (a round's 8 rails a line), and results files of earlier releases
COLUMNS_VERSION = 2  # columns: what a results file and results.json are written as above COMPACT_ABOVE
TABLE_ROWS = 4096  # results encoded at a time (and the most rows of one table item)
_SCALARS = (str, int, float, bool, type(None))


class ResultsFileError(ValueError):
    """A results file that is not a list of pair results (the message names the file and the item)."""


def _is_nan(value):
    return isinstance(value, float) and math.isnan(value)


def _same(column):
    """Whether every value of a column is the first's: equal, of the same scalar type, and (a zero) of the same
    sign. list.count and the set of types run in C: this is per key, not per value, in Python."""
    first = column[0]
    if column[-1] != first or column[len(column) // 2] != first:  # most columns vary: told apart without a pass
        return False
    if _is_nan(first) or column.count(first) != len(column):  # NaN: list.count would match it by identity only
        return False
    if first.__class__ is str or first is None:
        return True  # only a string is equal to a string, only None to None: no pass over the types
    types = set(map(type, column))
    if len(types) != 1 or types.pop() not in _SCALARS:
        return False
    return first != 0.0 or not isinstance(first, float) or len(set(map(repr, column))) == 1


def _columns_table(keys, columns, count, version):
    """The table item (of ``version``) of ``count`` results given as ``columns`` (one list or tuple per key of
    ``keys``, in order, not copied)."""
    const, names, varying = {}, [], []
    for key, column in zip(keys, columns):
        if _same(column):
            const[key] = column[0]
        else:
            names.append(key)
            varying.append(column)
    if version == TABLE_VERSION:
        rows = list(zip(*varying)) if varying else [()] * count
        return {TABLE_KEY: TABLE_VERSION, "const": const, "columns": names, "rows": rows}
    return {
        TABLE_KEY: COLUMNS_VERSION,
        "const": const,
        "count": count,
        "columns": dict(zip(names, map(_encoded_column, varying))),
    }


_ENCODED_FROM = 8  # shorter columns are written as lists


def _encoded_column(column):
    """A column as version 2 writes it: its cycle or its runs where they hold fewer values and == tells its values apart
    exactly (strings, bools: _repeatable), else the column itself. In C but for a test per column: the join and
    the report write 4.2 M results' columns at 1024 x 8 all_pairs. _repeatable (a join of the strings) is asked
    last: a column of links, each result's own, is told by its first value never coming again."""
    count = len(column)
    if count < _ENCODED_FROM:
        return column
    first = column[0]
    if first is not None and first.__class__ is not str and first.__class__ is not bool:
        return column  # never _repeatable
    if column[1] == first:  # runs: the results of a pair name the same hosts
        return _runs(column) if _repeatable(column) else column
    try:
        period = column.index(first, 1)
    except ValueError:  # the first value never comes again: no cycle (each result's own link)
        return column
    times, rest = divmod(count, period)
    if rest or not _repeatable(column) or column[:period] * times != column:
        return column
    return {"cycle": list(column[:period]), "times": times}


def _runs(column):
    """The runs form of a column whose first two values are equal, or the column where runs hold no fewer values.
    Runs of one length (a pair's 8 results, pair after pair: the length told by the first run, shorter than
    _LONGEST_RUN) are taken a stride apart and checked by comparing the column's other stride-apart slices with
    them, in C; any others (a verdict's column: mostly passed, a few failed) start where a value differs from the
    one before it, found in C (itertools.groupby, which this replaces, made a list of each run)."""
    count, first = len(column), column[0]
    length = 2
    while length < count and length < _LONGEST_RUN and column[length] == first:
        length += 1
    if length < _LONGEST_RUN and not count % length:
        runs = column[::length]
        # each run's values equal its first: every stride-apart slice equals the first one (== as list == does)
        if all(column[offset::length] == runs for offset in range(1, length)):
            return {"runs": list(runs), "lengths": [length] * len(runs)} if len(runs) * 2 < count else column
    starts = list(changes(column))
    if (len(starts) + 1) * 2 >= count:
        return column
    bounds = [0] + starts + [count]
    return {
        "runs": [first] + list(map(column.__getitem__, starts)),
        "lengths": list(map(operator.sub, bounds[1:], bounds[:-1])),
    }


_LONGEST_RUN = 64


def changes(column):
    """The indices where a column's value differs from the one before it (the starts of its runs but the first), an
    iterator, in C: a pass over millions of values where the join cuts rounds, the report tells spans apart and a
    column is written as runs."""
    return itertools.compress(range(1, len(column)), map(operator.ne, itertools.islice(column, 1, None), column))


def _repeatable(column):
    """Whether every value of a column is a string or None, or every one a bool: == tells them apart exactly. Told
    by joining the strings (in C), else by the set of the column's types (a failure column, mostly nulls)."""
    first = column[0]
    if first.__class__ is str:
        try:
            "".join(column)
            return True
        except TypeError:
            pass
    elif first is not None and first.__class__ is not bool:
        return False
    types = set(map(type, column))
    return types <= _STRING_TYPES or types == _BOOL_TYPES


_STRING_TYPES = frozenset((str, type(None)))
_BOOL_TYPES = frozenset((bool,))


def chunk_table_items(keys, chunks, version):
    """The items of the compact form for results given as ``chunks``: (count, columns), the columns one sequence
    per key of ``keys``, in order, every result with every key (an iterable, read once). What table_items makes of
    the same results as dicts, without a dict or a row per result (the join's millions of results): TABLE_ROWS
    results at a time, the columns in key order, as table_items's."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    names = [keys[i] for i in order]
    held = [[] for _key in keys]
    count = 0
    for number, columns in chunks:
        if number == TABLE_ROWS and not count:
            # a chunk of one item's results with none held (the join's blocks: 512 pairs x 8 rails) is that item:
            # its lists taken as they are (a tuple made one), not copied into the held lists and sliced out again
            taken = [columns[i] if columns[i].__class__ is list else list(columns[i]) for i in order]
            yield _columns_item(names, taken, TABLE_ROWS, version)
            continue
        collections.deque(map(list.extend, held, columns), maxlen=0)  # in C: a pair's 24 columns, 500 K pairs
        count += number
        while count >= TABLE_ROWS:
            yield _columns_item(names, [held[i][:TABLE_ROWS] for i in order], TABLE_ROWS, version)
            held = [column[TABLE_ROWS:] for column in held]
            count -= TABLE_ROWS
    if count:
        yield _columns_item(names, [held[i] for i in order], count, version)


def _columns_item(names, columns, count, version):
    if count == 1:
        return dict(zip(names, (column[0] for column in columns)))
    return _columns_table(names, columns, count, version)


def table_items(results, version=TABLE_VERSION):
    """The items of the compact form (table items of ``version``) for ``results`` (an iterable, read once): runs of
    results with the same keys as table items, a run of one as its dict, in order, TABLE_ROWS results at a time."""
    batch = []
    for res in results:
        if TABLE_KEY in res:
            raise ResultsFileError("a pair result cannot hold the key %r (it marks a table item)" % TABLE_KEY)
        batch.append(res)
        if len(batch) == TABLE_ROWS:
            yield from _batch_items(batch, version)
            batch = []
    if batch:
        yield from _batch_items(batch, version)


def table_items_of(table, version):
    """table_items for a ResultTable: the same items, cut from its columns (ResultTable.windows) instead of a dict
    per result. A window's adjacent segments with the same keys are one run, as _batch_items makes them."""
    for window in table.windows(TABLE_ROWS):
        for run in _same_key_runs(window):
            if TABLE_KEY in run[0][0]:
                raise ResultsFileError("a pair result cannot hold the key %r (it marks a table item)" % TABLE_KEY)
            yield _segment_item(run[0], version) if len(run) == 1 else _run_item(run, version)


def _same_key_runs(window):
    """The segments of a window as runs (lists) of adjacent segments with the same keys."""
    runs = []
    for segment in window:
        if runs and runs[-1][0][0] == segment[0]:
            runs[-1].append(segment)
        else:
            runs.append([segment])
    return runs


def _segment_item(segment, version):
    """The item of one segment (keys, const, columns, count): its dict when it holds one result, else its table
    item. A block's shared values are shared by any run of it (_same holds): only its columns are checked (the
    slices windows cut, taken as they are)."""
    _keys, const, columns, count = segment
    if count == 1:
        res = dict(const)
        res.update((k, values[0]) for k, values in columns.items())
        return res
    columns = dict(columns)
    columns.update((k, [v] * count) for k, v in const.items() if _is_nan(v))  # never shared (_same)
    item = _varying_table(columns, count, version)
    item["const"].update((k, v) for k, v in const.items() if k not in columns)
    return item


def _run_item(run, version):
    """The table item of a run of segments with the same keys (a block cut by promoted results). A key is shared
    when each segment's values are (_same, or the block's shared value) and so are their first values (the same
    type and sign, equal: so is every value of the run); only the others' values are joined, once."""
    count = sum(segment[3] for segment in run)
    const, columns = {}, {}
    for key in run[0][0]:
        firsts = [_first_if_same(segment, key) for segment in run]
        if _NOT_SAME not in firsts and _same(firsts):
            const[key] = firsts[0]
            continue
        values = []
        for _keys, shared, segment_columns, number in run:
            if key in segment_columns:
                values.extend(segment_columns[key])
            else:
                values.extend([shared[key]] * number)
        columns[key] = values
    item = _varying_table(columns, count, version)
    item["const"].update(const)
    return item


_NOT_SAME = object()


def _first_if_same(segment, key):
    """A segment's value of ``key`` when every one of its results holds the same (its block's shared value, or a
    column that is _same), else _NOT_SAME."""
    _keys, shared, columns, _count = segment
    if key not in columns:
        return shared[key]
    values = columns[key]
    return values[0] if _same(values) else _NOT_SAME


def _varying_table(columns, count, version):
    """_columns_table of {key: values} (lists or tuples of ``count`` values, not copied) in key order."""
    names = sorted(columns)
    return _columns_table(names, [columns[key] for key in names], count, version)


def _batch_items(batch, version):
    start = 0
    while start < len(batch):
        keys = sorted(batch[start])
        rows = _run(batch, start, keys)
        if len(rows) == 1:
            yield batch[start]
        else:
            yield _columns_table(keys, list(zip(*rows)), len(rows), version)
        start += len(rows)


def _run(batch, start, keys):
    """The values (tuples in the order of ``keys``) of the results from ``start`` on that hold exactly ``keys``: as
    many keys, and each of them (itemgetter's KeyError ends the run). One C call a result, no tuple of its keys."""
    count = len(keys)
    getter = operator.itemgetter(*keys) if count > 1 else (lambda res: tuple(res[key] for key in keys))
    rows = []
    for index in range(start, len(batch)):
        res = batch[index]
        if len(res) != count:
            break
        try:
            rows.append(getter(res))
        except KeyError:
            break
    return rows


def results_chunks(results, compact):
    """The JSON text of the results file in pieces: ``compact`` (a bool) picks the table form (version 2)."""
    if compact:
        if isinstance(results, ResultTable):
            items = table_items_of(results, COLUMNS_VERSION)
        else:
            items = table_items(results, COLUMNS_VERSION)
    else:
        items = results
    return _item_chunks(items, compact)


def _item_chunks(items, compact):
    if compact:
        return _compact_chunks(items)
    return files.json_list_chunks(items, chunk=4096, sort_keys=True, separators=(",", ":"))


def _compact_chunks(items):
    """json_list_chunks(items, sort_keys=True, separators=(",", ":")) of the compact form's items, byte for byte: a
    version 2 table item with a long column of floats is written key by key so that those columns are written from
    the texts of a file's figures, each made once (_FloatTexts: the 8.4 M figures of 1024 hosts x 8 rails all_pairs,
    a few hundred distinct, were most of results.json's encoding); the other items as json encodes them, those in a
    row together (PLAIN_ITEMS at a time: a json call each costs as much as a small item)."""
    encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
    texts = _FloatTexts(encode)
    plain = []  # the items in a row since the last one written key by key
    sep = ""
    yield "["
    for item in items:
        text = _item_json(item, encode, texts)
        if text is None:
            plain.append(item)
            if len(plain) < PLAIN_ITEMS:
                continue
            text, plain = encode(plain)[1:-1], []
        elif plain:
            text, plain = encode(plain)[1:-1] + "," + text, []
        yield sep + text
        sep = ","
    if plain:
        yield sep + encode(plain)[1:-1]
    yield "]"


PLAIN_ITEMS = 64  # items json encodes in one call at most (_compact_chunks)
_FLOATS_FROM = 64  # a table item with a column of floats this long is written key by key (_item_json)


def _item_json(item, encode, texts):
    """encode(item) (``encode``: sort_keys, compact separators) of a version 2 table item with a column of at least
    _FLOATS_FROM floats, its keys and its columns' names strings: written key by key, its columns through ``texts``
    (the file's _FloatTexts). None for any other item."""
    columns = item.get("columns") if item.__class__ is dict and item.get(TABLE_KEY) == COLUMNS_VERSION else None
    count = item.get("count") if columns.__class__ is dict else None
    if (
        count.__class__ is not int
        or count < _FLOATS_FROM
        or not any(
            column.__class__ is list and len(column) >= _FLOATS_FROM and column[0].__class__ is float
            for column in columns.values()
        )
    ):
        return None
    if set(map(type, item)) != _STRING_TYPE or set(map(type, columns)) != _STRING_TYPE:
        return None
    parts = []
    for key in sorted(item):
        if key == "columns":
            value = "{%s}" % ",".join(
                "%s:%s" % (_json_string(name), texts.column(columns[name])) for name in sorted(columns)
            )
        else:
            value = encode(item[key])
        parts.append("%s:%s" % (_json_string(key), value))
    return "{%s}" % ",".join(parts)


_STRING_TYPE = frozenset((str,))
_json_string = json.encoder.encode_basestring_ascii  # what the encoder writes a key with (ensure_ascii)


class _FloatTexts(dict):
    """{figure: its JSON text} of the figures a file's columns of floats hold, each made (by ``encode``) the first
    time it is asked for. A zero is never kept (0.0 and -0.0 are equal but written apart); past HELD figures (a file
    whose figures seldom repeat) every column is encoded whole, as json does."""

    HELD = 1 << 16

    def __init__(self, encode):
        dict.__init__(self)
        self.encode = encode

    def __missing__(self, figure):
        text = self.encode(figure)
        if figure != 0.0:
            self[figure] = text
        return text

    def column(self, column):
        """encode(column), byte for byte: a list of floats from the texts (a dict lookup a value, in C)."""
        if (
            column.__class__ is not list
            or not column
            or column[0].__class__ is not float
            or len(self) > self.HELD
            or set(map(type, column)) != _FLOAT_TYPES  # 1 and True are equal to 1.0, and written apart
        ):
            return self.encode(column)
        return "[%s]" % ",".join(map(self.__getitem__, column))


_FLOAT_TYPES = frozenset((float,))


def write_results(dest, results, compact):
    """Write ``results`` (an iterable, written as it comes) to ``dest`` atomically; returns dest."""
    return files.write_chunks(dest, results_chunks(results, compact))


def write_chunks(dest, keys, chunks, compact):
    """write_results for results given as chunks (chunk_table_items): the same file, without a dict per result when
    ``compact``; returns dest."""
    if compact:
        items = chunk_table_items(keys, chunks, COLUMNS_VERSION)
    else:
        items = (dict(zip(keys, row)) for _count, columns in chunks for row in zip(*columns))
    return files.write_chunks(dest, _item_chunks(items, compact))


def table_columns(item, where, strings=None):
    """(const, names, columns, count) of a table item of either version: the values every result shares, the names
    of the others and their values column by column (sequences in result order), and the number of results.
    ``strings`` ({text: text}, shared by the items of one file): each column of strings mapped through it
    (shared_strings). Raises ResultsFileError naming ``where`` when the item is not a table of a known version and
    shape."""
    version = item[TABLE_KEY]
    if version.__class__ is int and version == COLUMNS_VERSION:
        return _columns_of_v2(item, where, strings)
    const, names, rows = item.get("const"), item.get("columns"), item.get("rows")
    if (
        version.__class__ is not int
        or version != TABLE_VERSION
        or not isinstance(const, dict)
        or not isinstance(names, list)
    ):
        raise ResultsFileError("%s is a table item of another version or shape (ibtune_table %r)" % (where, version))
    if not isinstance(rows, list):
        raise ResultsFileError("%s: a table item's rows must be a list" % where)
    width = len(names)
    if rows and (set(map(type, rows)) != {list} or set(map(len, rows)) != {width}):  # in C: millions of rows
        for number, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != width:
                raise ResultsFileError("%s row %d does not hold the %d columns %s" % (where, number, width, names))
    columns = list(zip(*rows)) if width and rows else [()] * width
    if strings is not None:
        columns = shared_strings(columns, strings)
    return const, names, columns, len(rows)


def _columns_of_v2(item, where, strings):
    """table_columns of a version 2 item: its columns decoded (_decoded_column), checked against its count."""
    const, count, columns = item.get("const"), item.get("count"), item.get("columns")
    if not isinstance(const, dict) or not isinstance(columns, dict) or count.__class__ is not int or count < 0:
        raise ResultsFileError(
            "%s is a table item of another version or shape (ibtune_table 2 holds const, an object, count, a whole "
            "number, and columns, an object)" % where
        )
    both = set(const).intersection(columns)
    if both:
        raise ResultsFileError("%s holds %s both in const and in columns" % (where, ", ".join(sorted(both))))
    names = list(columns)
    return const, names, [_decoded_column(columns[name], count, where, name, strings) for name in names], count


def _decoded_column(column, count, where, name, strings):
    """The ``count`` values of a version 2 column: a list as it is, a cycle repeated, runs expanded (in C), each
    checked against ``count``; the strings of a list, a cycle or runs shared through ``strings`` (a cycle's and a
    run's values are few: repeating them shares them)."""
    if column.__class__ is list:
        if len(column) == count:
            return shared_column(column, strings)
        problem = "holds %d values" % len(column)
    elif isinstance(column, dict) and set(column) == {"cycle", "times"}:
        cycle, times = column["cycle"], column["times"]
        if cycle.__class__ is list and times.__class__ is int and times >= 0 and len(cycle) * times == count:
            return shared_column(cycle, strings) * times
        problem = "is a cycle that does not hold %d values (cycle %r times %r)" % (count, cycle, times)
    elif isinstance(column, dict) and set(column) == {"runs", "lengths"}:
        runs, lengths = column["runs"], column["lengths"]
        whole = runs.__class__ is list and lengths.__class__ is list and len(runs) == len(lengths)
        if whole and _lengths(lengths) and sum(lengths) == count:
            return list(itertools.chain.from_iterable(map(itertools.repeat, shared_column(runs, strings), lengths)))
        problem = "is runs that do not hold %d values (runs of %r values, lengths %r)" % (
            count,
            len(runs) if isinstance(runs, list) else runs,
            lengths if not isinstance(lengths, list) or len(lengths) < 20 else "%d lengths" % len(lengths),
        )
    else:
        problem = "is neither a list nor a cycle ({cycle, times}) nor runs ({runs, lengths})"
    raise ResultsFileError("%s column %r %s: the item says it holds %r results" % (where, name, problem, count))


def _lengths(lengths):
    """Whether each of a run column's lengths is a whole number of at least 1 (told in C)."""
    return not lengths or (set(map(type, lengths)) == {int} and min(lengths) >= 1)


def shared_column(column, strings):
    """``column`` (a list or tuple) with its strings mapped through ``strings`` when every value is a string (a
    new tuple), else as it is; None ``strings``: as it is."""
    if strings is not None and column and column[0].__class__ is str and len(set(map(type, column))) == 1:
        return tuple(map(strings.setdefault, column, column))
    return column


def shared_strings(columns, strings):
    """``columns`` with each column of strings mapped through ``strings`` ({text: text}, shared by the items of one
    file), so that every value naming a host is the one string object: JSON makes a new one per value (256 x 8
    all_pairs read back: 216 MiB held, not 300)."""
    return [shared_column(column, strings) for column in columns]


class NotAPairResult(ValueError):
    """An item of a results file that is not a pair result at all (not a dict): the report's error, worded as
    normalize_results words it, not the file's."""


def _items(items, name, strings):
    """(table, item) of each of a decoded results file's items (a list, or an iterable read once), in order:
    (table_columns(item) with its strings shared, None) for a table item, (None, item) for any other. A table item
    is dropped from a list as it is read, so its rows and what is made of them are not both held for long."""
    held = isinstance(items, list)
    for index, item in enumerate(items):
        if isinstance(item, dict) and TABLE_KEY in item:
            table = table_columns(item, "%s[%d]" % (name, index), strings)
            if held:
                items[index] = None
            yield table, None
        else:
            yield None, item


def expand_items(items, name="results"):
    """The pair results of a decoded results file's items, in order, as dicts (a table item's strings shared,
    shared_strings). An item that is not a dict is passed on as it is (the report's to refuse)."""
    out = []
    strings = {}
    for table, item in _items(items, name, strings):
        if table is None:
            out.append(item)
            continue
        const, names, columns, count = table
        for row in zip(*columns) if names else [()] * count:
            res = dict(const)
            res.update(zip(names, row))
            out.append(res)
    return out


def table_of_items(items, name="results", offset=0):
    """The pair results of a decoded results file's items as a ResultTable: a table item's rows go in as columns,
    never as a dict per result (what the report holds at scale). An item that is not a dict raises NotAPairResult
    naming it by its place among the results (``offset`` results come before the file's)."""
    out = ResultTable()
    for table, item in _items(items, name, {}):
        if table is not None:
            out.add_columns(*table)
        elif isinstance(item, dict):
            out.add_dict(item)
        else:
            raise NotAPairResult("results[%d] must be a dict (a pair result), got %r" % (offset + len(out), item))
    return out


def _read(path, name, expand):
    """expand(items, name) of the results file ``path``: read_results and read_table."""
    name = name or path
    try:
        with open(path, encoding="utf-8") as handle, paused_gc():  # millions of new objects: see common/memory.py
            try:  # an item at a time: each table item is expanded before the next one is decoded
                return expand(files.iter_json_list(handle), name)
            except files.NotStreamable:  # not a list, or not JSON: json.load names what is wrong
                handle.seek(0)
                data = json.load(handle)
    except (ResultsFileError, NotAPairResult):
        raise
    except (IOError, OSError) as exc:
        raise ResultsFileError("cannot read %s: %s" % (name, exc))
    except ValueError as exc:
        raise ResultsFileError(
            "%s is not valid JSON (%s): the join step writes a JSON list of pair results" % (name, exc)
        )
    if not isinstance(data, list):
        raise ResultsFileError("%s holds a JSON %s, not a list of pair results" % (name, type(data).__name__))
    with paused_gc():
        return expand(data, name)


def read_results(path, name=None):
    """The pair results of the results file ``path`` (either form), as dicts. Raises ResultsFileError naming
    ``name`` (e.g. results_paths[1], default the path) when the file cannot be read, is not JSON or is not a list;
    the items themselves are the report's to validate (results.normalize_results)."""
    return _read(path, name, expand_items)


def read_table(path, name=None, offset=0):
    """read_results as a ResultTable (table_of_items): the report's reader. An item that is not a dict raises
    NotAPairResult (``offset``: the results before the file's, for its index)."""
    return _read(path, name, lambda items, where: table_of_items(items, where, offset))
