# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's pair results held column by column (ResultTable), and their normalisation over columns.

At 1024 hosts x 8 rails all_pairs a pass has 4.2 M pair results. One dict per result costs 832 bytes (27 keys):
3.5 GiB before the report has decided anything, and building them is most of the time reading the results file
takes. A ResultTable keeps the results the way the results file already holds them (resultfile.py's table items):
runs of results with the same keys as one list per key. The report's steps over every result read whole columns
(set, zip, map and sorted run in C), and only the few results that differ in shape (a failed one, with its
sentence and its peer median) are held as dicts ("promoted": from then on that dict is the result).

Iterating a table yields one dict per result, in order: a promoted result's own dict, any other made for the
occasion (changing it changes nothing: the steps that change results go through promote or set_column). So every
consumer that reads results one by one keeps working; those that run over millions read columns instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import bisect
import itertools
import math
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as _results

_NONE = type(None)
_SCALARS = frozenset((str, int, float, bool, _NONE))
# the keys a result's two ends are grouped by (ResultTable.host_ends)
END_KEYS = ("server", "server_device", "client", "client_device", "kind", "rail", "test")


class ResultTable:
    """Pair results in order, as blocks of results with the same keys (see the module docstring). A block holds
    the values every one of its results shares once (``const``, as a results file's table item does) and one list
    per other key.

    Build one with from_dicts, add_dict and add_columns; read it with len, iteration, row, column; change it with
    promote (a result becomes its own dict) and set_column (a key for every result)."""

    def __init__(self):
        self._blocks = []  # [keys (sorted tuple), {key: value every result holds}, {key: list of values}, count]
        self._starts = []  # index of each block's first result
        self._count = 0
        self._promoted = {}  # result index -> its dict (the result from then on)
        self._ends = None  # host_ends, kept: (its value, {promoted index: its END_KEYS values then})

    @classmethod
    def from_dicts(cls, results):
        """A table of the dicts ``results`` (None: empty; a ResultTable is returned as it is). Raises ValueError
        naming the first item that is not a dict, as normalize_results does."""
        table = cls()
        if results is None:
            return table
        if isinstance(results, cls):
            return results
        if isinstance(results, (str, bytes, dict)):
            raise ValueError("results must be a list of pair result dicts, got %s" % type(results).__name__)
        for index, item in enumerate(results):
            if not isinstance(item, dict):
                raise ValueError("results[%d] must be a dict (a pair result), got %r" % (index, item))
            table.add_dict(item)
        return table

    def __len__(self):
        return self._count

    def __bool__(self):
        return self._count > 0

    def _append(self, block):
        self._ends = None
        self._blocks.append(block)
        self._starts.append(self._count)
        self._count += block[3]

    def add_dict(self, res):
        """Append one result (its values are copied: the dict itself is not kept)."""
        keys = tuple(sorted(res))
        last = self._blocks[-1] if self._blocks else None
        if last is None or last[0] != keys or last[1]:
            self._append([keys, {}, dict((k, []) for k in keys), 0])
            last = self._blocks[-1]
        columns = last[2]
        self._ends = None
        for key in keys:
            columns[key].append(res[key])
        last[3] += 1
        self._count += 1

    def add_columns(self, const, names, columns, count):
        """Append ``count`` results as one block: every one holds ``const``, and key names[i] takes its values
        from columns[i] (sequences of ``count`` values, in order: kept as they are)."""
        if not count:
            return
        keys = tuple(sorted(set(const) | set(names)))
        if len(keys) != len(const) + len(names):
            raise ValueError("a key is both shared and a column: %s" % sorted(set(const) & set(names)))
        self._append([keys, dict(const), dict(zip(names, columns)), count])

    # -- reading

    def _locate(self, index):
        if not 0 <= index < self._count:
            raise IndexError("result %d of %d" % (index, self._count))
        number = bisect.bisect_right(self._starts, index) - 1
        return self._blocks[number], index - self._starts[number]

    def row(self, index):
        """Result ``index`` as a dict: its own once promoted, else a new one."""
        res = self._promoted.get(index)
        if res is not None:
            return res
        (_keys, const, columns, _count), offset = self._locate(index)
        res = dict(const)
        res.update(zip(columns, map(operator.itemgetter(offset), columns.values())))  # in C: a cell's hover, a failure
        return res

    def __iter__(self):
        promoted = self._promoted
        index = 0
        for _keys, const, columns, count in self._blocks:
            names = list(columns)
            rows = zip(*[columns[k] for k in names]) if names else itertools.repeat((), count)
            for values in rows:
                res = promoted.get(index) if promoted else None
                if res is None:
                    res = dict(const)
                    res.update(zip(names, values))
                yield res
                index += 1

    def column(self, key):
        """The values of ``key``, one per result in order (None where a result has no such key): a new list."""
        out = []
        for _keys, const, columns, count in self._blocks:
            values = columns.get(key)
            if values is not None:
                out.extend(values)
            else:
                out.extend(itertools.repeat(const.get(key), count))
        for index, res in self._promoted.items():
            out[index] = res.get(key)
        return out

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.row(i) for i in range(*index.indices(self._count))]
        return self.row(index + self._count if index < 0 else index)

    def __eq__(self, other):
        if isinstance(other, (ResultTable, list, tuple)):
            return len(self) == len(other) and all(map(operator.eq, self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return "ResultTable(%d results in %d blocks, %d held as dicts)" % (
            self._count,
            len(self._blocks),
            len(self._promoted),
        )

    def columns(self, *keys):
        return [self.column(k) for k in keys]

    def windows(self, size):
        """The results ``size`` at a time, in order: for each window, its segments (keys, const, {key: values},
        count): the results of a block between promoted ones with other keys as one segment, a promoted result with
        other keys than its block's as a segment of one (its own keys, no const). A promoted result with its block's
        keys stays in its block's segment (its values put in that segment's columns, copies then; a shared value it
        does not hold, the very object, or one that is not a scalar, becomes a column): at 1024 hosts x 8 rails the
        8 K failed results, promoted, cut each block into 17 segments that were joined again key by key. What the
        results file's table items are cut from (resultfile.table_items_of)."""
        held = sorted(self._promoted)
        nxt = 0  # the next promoted index in held
        window, filled = [], 0
        for number, (keys, const, columns, count) in enumerate(self._blocks):
            start = self._starts[number]
            first = start
            while first < start + count:
                last = min(start + count, first + size - filled)
                filled += last - first
                within = []  # (index, result) of the promoted results with the block's keys from first on
                while nxt < len(held) and held[nxt] < last:
                    index = held[nxt]
                    res = self._promoted[index]
                    nxt += 1
                    if len(res) == len(keys) and tuple(sorted(res)) == keys:
                        within.append((index - start, res))
                        continue
                    if index > first:
                        window.append(_segment(keys, const, columns, first - start, index - start, within))
                    window.append((tuple(sorted(res)), {}, dict((k, [v]) for k, v in res.items()), 1))
                    first = index + 1
                    within = []
                if last > first:
                    window.append(_segment(keys, const, columns, first - start, last - start, within))
                first = last
                if filled == size:
                    yield window
                    window, filled = [], 0
        if window:
            yield window

    # -- changing

    def promote(self, index):
        """Result ``index`` as a dict held from now on (changes to it are the result's)."""
        res = self._promoted.get(index)
        if res is None:
            res = self._promoted[index] = self.row(index)
        return res

    def set_column(self, key, values):
        """Give every result ``key`` (values: one per result, in order)."""
        if len(values) != self._count:
            raise ValueError("%d values for %d results" % (len(values), self._count))
        if key in END_KEYS:
            self._ends = None
        for number, block in enumerate(self._blocks):
            start = self._starts[number]
            block[1].pop(key, None)
            block[2][key] = values[start : start + block[3]]
            if key not in block[0]:
                block[0] = tuple(sorted(block[0] + (key,)))
        for index, res in self._promoted.items():
            res[key] = values[index]

    def set_const(self, key, value):
        """Give every result ``key`` with the same ``value`` (held once a block)."""
        if key in END_KEYS:
            self._ends = None
        for block in self._blocks:
            block[2].pop(key, None)
            block[1][key] = value
            if key not in block[0]:
                block[0] = tuple(sorted(block[0] + (key,)))
        for res in self._promoted.values():
            res[key] = value

    def extend(self, other):
        """Append the results of the table ``other`` (which is used up: its blocks become this table's)."""
        offset = self._count
        self._promoted.update((offset + i, res) for i, res in other._promoted.items())
        for block in other._blocks:
            self._append(block)

    def _set_blocks(self, blocks):
        """Hold ``blocks`` (the same results, in order, none promoted)."""
        self._blocks, self._starts, self._count = [], [], 0
        for block in blocks:
            self._append(block)

    def host_ends(self):
        """Each result's two ends grouped once for the table: (first, ends, planes) where ``first`` is {(host,
        device, plane): the number of its first end} and ``ends`` each end's group, as end_groups makes them (a
        result's server end 2 x its number, its client end 2 x its number + 1), and ``planes`` {plane: (kind, rail,
        test)} (a plane: a number per distinct (kind, rail, test), raw values). Localisation, the host verdicts and
        the host/rail summary each group the ends by part of that key (grouped_ends): once for all three at 1024
        hosts x 8 rails all_pairs (8.4 M ends), not once each. Kept until a change could alter it: a block or
        result added, a column of END_KEYS set, or a promoted result whose END_KEYS values are no longer those it
        had (each checked when asked: the few promoted results, not millions). The lists are shared: read them,
        never change them."""
        if self._ends is not None:
            value, held = self._ends
            if self._ends_unchanged(held):
                return value
        value = _host_ends(*self.columns(*END_KEYS))
        self._ends = (value, dict((i, tuple(map(res.get, END_KEYS))) for i, res in self._promoted.items()))
        return value

    def _ends_unchanged(self, held):
        """Whether every promoted result still has the END_KEYS values it had when host_ends was made (a result
        promoted since then had its block's)."""
        for index, res in self._promoted.items():
            then = held.get(index)
            if then is None:
                (_keys, const, columns, _count), offset = self._locate(index)
                then = tuple(columns[k][offset] if k in columns else const.get(k) for k in END_KEYS)
            if tuple(map(res.get, END_KEYS)) != then:
                return False
        return True

    def select(self, indices):
        """A new table of the results at ``indices`` (in that order)."""
        out = ResultTable()
        for index in indices:
            out.add_dict(self.row(index))
        return out


def _segment(keys, const, columns, low, high, within=()):
    """The segment (keys, const, {key: values}, count) of a block's results low to high (offsets), with the
    promoted results ``within`` ((offset, result), each holding the block's keys) put in: the columns copied and
    their values set, a shared value kept only where each of them holds the very object and it is a scalar (what
    resultfile._same would share: the values written are the same)."""
    count = high - low
    if not within:
        return keys, const, dict((k, values[low:high]) for k, values in columns.items()), count
    shared, held = {}, {}
    for key, value in const.items():
        if value.__class__ in _SCALARS and all(res[key] is value for _offset, res in within):
            shared[key] = value
        else:
            held[key] = [value] * count
    held.update((k, list(values[low:high])) for k, values in columns.items())
    for key, values in held.items():
        for offset, res in within:
            values[offset - low] = res[key]
    return keys, shared, held, count


def columns_of(results, *keys):
    """[values of key, one per result] for each of ``keys``: a ResultTable's columns, or read from a list of dicts
    (None where a result has no such key), so a step written over columns serves both."""
    if isinstance(results, ResultTable):
        return results.columns(*keys)
    return [[res.get(key) for res in results] for key in keys]


def row_reader(results):
    """f(index): result ``index`` of a ResultTable or a list of dicts, to read (a table makes a dict for it)."""
    return results.row if isinstance(results, ResultTable) else results.__getitem__


def row_changer(results):
    """f(index): result ``index`` of a ResultTable or a list of dicts as the dict to change it through (a table's
    result is promoted to its own dict)."""
    return results.promote if isinstance(results, ResultTable) else results.__getitem__


def end_groups(server_keys, client_keys):
    """({key: the number of its first end}, [the group of each end]) over results' two ends, given as the key of
    each result's server end and of its client end (two iterables, one key per result): the ends are numbered in
    order, a result's server end (2 x its number) before its client end (2 x its number + 1), and each end's group
    is the number of the first end with its key. So a group's first result is its number // 2, and the keys are in
    the order they are first met. In C: 8.4 M ends at 1024 hosts x 8 rails all_pairs, a key held once (its group
    an int per end), not a tuple per end."""
    first = {}
    ends = itertools.chain.from_iterable(zip(server_keys, client_keys))
    return first, list(map(first.setdefault, ends, itertools.count()))


def _host_ends(servers, server_devices, clients, client_devices, kinds, rails, tests):
    """ResultTable.host_ends over the END_KEYS columns: an end's key (host, device, plane), its plane numbered
    first (group_numbers: with the rail the only column that varies, no tuple per result), so a 3-tuple per end."""
    planes, numbers = group_numbers(kinds, rails, tests)
    first, ends = end_groups(zip(servers, server_devices, numbers), zip(clients, client_devices, numbers))
    return first, ends, dict((number, key) for key, number in planes.items())


def host_ends(results):
    """ResultTable.host_ends of a ResultTable (kept), or made for a list of dicts."""
    if isinstance(results, ResultTable):
        return results.host_ends()
    return _host_ends(*columns_of(results, *END_KEYS))


def grouped_ends(results, key):
    """end_groups over each end's key(host, device, kind, rail, test) (its own host and device, its result's kind,
    rail and test, as the results hold them), from the ends grouped once (host_ends): (first, ends) as end_groups
    makes them. The groups of host_ends are merged where key maps several to one (each keeps the number of its
    first end: host_ends' groups are met in order); ``ends`` is host_ends' own list where no two are (then no
    group's number changes), else each end's merged group (a map in C)."""
    first, ends, planes = host_ends(results)
    out = {}
    renumbered = False
    merged = {}
    for (host, device, plane), group in first.items():
        kind, rail, test = planes[plane]
        number = merged[group] = out.setdefault(key(host, device, kind, rail, test), group)
        renumbered = renumbered or number != group
    return out, (list(map(merged.__getitem__, ends)) if renumbered else ends)


def group_numbers(*columns):
    """({key: its number}, [the number of each result's key]) where a result's key is the tuple of its values in
    ``columns``: a key's number is the index of its first result, so the keys are in the order first met. In C; a
    column holding one value throughout (the test and kind of a pass) is left out of the per-result work: with one
    column varying (the rail) no tuple is made per result (4.2 M at 1024 hosts x 8 rails all_pairs)."""
    count = len(columns[0])
    if not count:
        return {}, []
    varying = [number for number, column in enumerate(columns) if column.count(column[0]) != count]
    if not varying:
        return {tuple(column[0] for column in columns): 0}, [0] * count
    first = {}
    parts = columns[varying[0]] if len(varying) == 1 else zip(*[columns[number] for number in varying])
    numbers = list(map(first.setdefault, parts, itertools.count()))
    keys = {}
    for part, number in first.items():
        values = dict(zip(varying, (part,) if len(varying) == 1 else part))
        keys[tuple(values[i] if i in values else column[0] for i, column in enumerate(columns))] = number
    return keys, numbers


def kind_figures(kinds, bws, lats):
    """Each result's figure: t_typical_us for a latency result, bw_avg_gbps for any other (in C: of (bw, lat), a
    latency result's index True, any other's False); the bw_avg_gbps column itself when none is latency."""
    if "latency" not in kinds:
        return bws
    return list(map(operator.getitem, zip(bws, lats), map(operator.eq, kinds, itertools.repeat("latency"))))


def failed_indices(passed):
    """The indices of the results whose ``passed`` (a column) is falsy, in order (in C)."""
    return itertools.compress(range(len(passed)), map(operator.not_, passed))


def failed_rows(results):
    """The results that did not pass (``passed`` falsy), in order: dicts, from a list or a ResultTable (whose
    passed column is read, so only those results are made into dicts)."""
    (passed,) = columns_of(results, "passed")
    return list(map(row_reader(results), failed_indices(passed)))


# -- normalisation over columns


def _floats_ok(values):
    """Whether every value is None or a float in [0, MAX_FIGURE] (NaN and inf are not): _results._figure_ok for a
    whole column, in C."""
    types = set(map(type, values))
    if not types <= {float, _NONE}:
        return False
    numbers = [v for v in values if v is not None] if _NONE in types else values
    if not numbers:
        return True
    if any(map(math.isnan, numbers)):
        return False
    return min(numbers) >= 0.0 and max(numbers) <= _results.MAX_FIGURE


def _strings_ok(values, none=False):
    """Every value a non-empty string (or None when ``none``)."""
    types = set(map(type, values))
    return types <= ({str, _NONE} if none else {str}) and "" not in values


def _verdicts_ok(passed, failure, failure_kind, bw, threshold):
    """The verdict half of _results._clean over a block's columns: a passed result has no failure, a figure and
    (with a threshold) a figure at or above it (_passed_ok); a failed one a sentence and a kind."""
    if not set(map(type, passed)) <= {bool}:
        return False
    failed = list(map(operator.not_, passed))
    if any(failed):  # the failed results' sentences and kinds, in C
        for texts in (list(itertools.compress(failure, failed)), list(itertools.compress(failure_kind, failed))):
            if set(map(type, texts)) != {str} or "" in texts:
                return False
    return all(failed) or _passed_ok(list(map(operator.not_, failed)), failure, failure_kind, bw, threshold)


def _passed_ok(ok, failure, failure_kind, bw, threshold):
    """Whether each result ``ok`` flags has no failure, a figure, and (with a threshold) a figure at or above it.
    ``threshold``: one per result, or the one every result holds, as a list of one (a block's shared value: no
    column of it made)."""
    if set(itertools.compress(failure, ok)) | set(itertools.compress(failure_kind, ok)) != {None}:
        return False
    figures = list(itertools.compress(bw, ok))
    if None in figures:
        return False
    if len(threshold) == 1:  # shared (or one result): each figure against it
        return threshold[0] is None or not any(map(operator.lt, figures, itertools.repeat(threshold[0])))
    limits = list(itertools.compress(threshold, ok))
    if None in limits:
        pairs = [(v, t) for v, t in zip(figures, limits) if t is not None]
        figures, limits = [v for v, _t in pairs], [t for _v, t in pairs]
    return not any(map(operator.lt, figures, limits))


def _rates_ok(bw, rate):
    """Whether no figure is above its port's line rate (and the margin): ``rate`` one per result, or the one every
    result holds, as a list of one (a block's shared value)."""
    if set(rate) == {None}:
        return True
    if not set(map(type, rate)) <= {float, _NONE}:
        return False
    margin = 1.0 + _results.LINE_RATE_MARGIN
    rates = set(rate)
    if len(rates) == 1 and None not in rates:  # one rate for the block (the common case): in C
        figures = itertools.compress(bw, map(operator.is_not, bw, itertools.repeat(None)))
        return all(map(operator.le, figures, itertools.repeat(rates.pop() * margin)))
    return all(r is None or v is None or v <= r * margin for v, r in zip(bw, rate))


def block_clean(const, columns, count):
    """Whether every result of a block (its ``const`` and ``columns``) is already what normalising makes of it
    (_results._clean, checked a column at a time, a shared value once): then normalising it only adds its link."""
    if any(k not in const and k not in columns for k in _results.FETCHED):
        return False

    def distinct(key):  # enough for the checks of each value on its own
        return [const[key]] if key in const else columns.get(key, [None])

    def full(key):  # one value per result, for the checks across keys
        return columns[key] if key in columns else [const.get(key)] * count

    return (
        set(distinct("kind")) == {"bandwidth"}
        and _strings_ok(distinct("server"))
        and _strings_ok(distinct("client"))
        and _strings_ok(distinct("server_device"), none=True)
        and _strings_ok(distinct("client_device"), none=True)
        and set(map(type, distinct("server_port"))) <= {int, _NONE}
        and set(map(type, distinct("client_port"))) <= {int, _NONE}
        and set(map(type, distinct("pass"))) == {int}
        and set(map(type, distinct("round"))) == {int}
        and _strings_ok(distinct("test"))
        and None not in distinct("rail")
        and "" not in distinct("rail")
        and all(_floats_ok(distinct(k)) for k in ("bw_avg_gbps", "bw_peak_gbps", "threshold_gbps", "duration_s"))
        and _rates_ok(full("bw_avg_gbps"), distinct("line_rate_gbps"))
        and _verdicts_ok(*map(full, ("passed", "failure", "failure_kind", "bw_avg_gbps")), distinct("threshold_gbps"))
    )


class _EndTexts(dict):
    """{(host, device): the text of that link end (results.link_end)}, each made the first time it is asked for."""

    def __missing__(self, key):
        text = self[key] = _results.link_end(*key)
        return text


def links(server, server_device, client, client_device):
    """The link (results._link_of) of every result: each distinct end's text made once (a dict lookup per end, in
    C), the lower end first. The ends are ordered and joined in a comprehension: twice as fast as map(min),
    map(max) and two concatenations in C (the builtin min and max parse their arguments for each call)."""
    ends = _EndTexts()
    firsts = map(ends.__getitem__, zip(server, server_device))
    seconds = map(ends.__getitem__, zip(client, client_device))
    return [a + "<->" + b if a <= b else b + "<->" + a for a, b in zip(firsts, seconds)]


def normalize_table(table):
    """normalize_results for a ResultTable, in place: a block whose columns are all clean (block_clean) is left as
    it is; the results of any other block are normalised as dicts (results.normalize_result) and put back as
    columns. Every result gets its link. Raises ValueError as normalize_results does (naming the result's index)."""
    blocks = []
    start = 0
    for block in table._blocks:  # pylint: disable=protected-access
        _keys, const, columns, count = block
        if block_clean(const, columns, count):
            blocks.append(block)
        else:
            names = list(columns)
            rows = zip(*[columns[k] for k in names]) if names else itertools.repeat((), count)
            done = ResultTable()
            for index, values in enumerate(rows, start):
                res = dict(const)
                res.update(zip(names, values))
                res = _results.normalize_result(res, index)
                del res["link"]  # set for every result below
                done.add_dict(res)
            blocks.extend(done._blocks)  # pylint: disable=protected-access
        start += count
    table._set_blocks(blocks)  # pylint: disable=protected-access
    table.set_column("link", links(*table.columns("server", "server_device", "client", "client_device")))
    return table
