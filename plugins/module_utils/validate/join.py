# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Join the server and client sides of a pass into pair results, and gate them once (pure).

Every pair the plan expected yields one result per rail, also when a side never came back (the
host died or its schedule was stopped): absence is a failure (``no_result``), never a silent gap.
The failure kind names the root cause: when the server side failed first (no device, port busy)
the client's "could not connect" is its consequence, so the server's kind wins.

At 1024 hosts x 8 rails all_pairs a pass is 8.4 M sides and 4.2 M results, so neither is a dict here. A runner's
round is one line of the index (SideIndex: 1 M entries there, not 8.4 M) holding its sides as columns of what the
join reads (_Sides, SIDE_READS), a side file of such rounds indexed at once in C (_index_rounds); any other side is
a tuple of SIDE_READS. A pair's results are made as columns in the order of their keys (SHARED_KEYS, PAIR_KEYS,
FIGURE_KEYS, VERDICT_KEYS): the common pair's a column at a time, with the common pairs next to it as one chunk
(_Block: up to 512 pairs), any other's a row per rail (_pair_rows), and written a chunk's columns at a time
(resultfile.write_chunks). A result becomes a dict only where one is handed over: join_checked's, and the failures
join_written returns.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds as testkinds
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

_NOTHING = (None, None)  # the sides of a key that nothing came back for
_ROLES = ("server", "client")  # the order of a key's two sides in the index
# Client-side kinds that are consequences of the server side not being there.
_CONSEQUENCES = ("connect", "timeout", "no_client", "no_result")


def _key(pass_no, round_no, rail, server, client):
    return (int(pass_no), int(round_no), str(rail), server, client)


def _label(key, role=None):
    pass_no, round_no, rail, server, client = key
    who = "%s side of " % role if role else ""
    return "%spass %d round %d rail %s %s -> %s" % (who, pass_no, round_no, rail, server, client)


# what the join reads of a side (root_cause, the result's ports and figures, the gates): a side is indexed as a
# tuple of these values in this order (None where it has none), so the index of a pass's millions of sides holds no
# dict per side, and every clean server side of one port is one tuple
SIDE_READS = (
    "device", "port", "failure_kind", "failure", "bw_avg_gbps", "bw_peak_gbps",
    "t_typical_us", "t_avg_us", "t_min_us", "t_max_us", "p99_us", "p999_us", "latency_us",
)  # fmt: skip
_DEVICE, _PORT, _KIND, _FAILURE, _BW_AVG, _BW_PEAK = range(6)
_AT = dict((name, at) for at, name in enumerate(SIDE_READS))
_KEY_FIELDS = ("role", "host", "peer", "pass", "round", "rail")
_NO_HOST = object()  # a side without a host: not one of a pass's sides, skipped
_ROUND_KEYS = frozenset(_KEY_FIELDS[:-1])  # what a runner's round holds once, in its table's const


def side_dict(side):
    """The indexed side (a tuple, see SIDE_READS) as a dict of the values it has, or None for no side."""
    if side is None:
        return None
    return dict((k, v) for k, v in zip(SIDE_READS, side) if v is not None)


_FIELDS = _KEY_FIELDS + SIDE_READS  # the columns _index_columns reads, in its order
_MISSING = tuple(_NO_HOST if name == "host" else None for name in _FIELDS)  # what each is when a side lacks it


def _dict_columns(side):
    """The columns of one side dict (_FIELDS, in order)."""
    return [(side.get(name, missing),) for name, missing in zip(_FIELDS, _MISSING)]


def _check_round(role, host, round_no):
    if round_no is None:
        raise ValueError("a %s side of %s names no round: it is not a side result of a pass" % (role, host))


class _Sides(tuple):
    """A runner's round of sides held as columns (what _index_table reads of a table item): the values every row
    shares (``base``, one per SIDE_READS) and the others as (position in SIDE_READS, column). A row's side tuple is
    made only where one is asked for (expand): the join makes the common pair's results from the columns
    (_Block), so a pass's 8.4 M sides are never 8.4 M tuples. A server round without a failure keeps only its
    device and port: the join reads nothing else of a clean server side (_clean_server). A tuple (base, own, count,
    server, kind_free), so that a side file's rounds are made in C (_index_rounds); _sides makes one."""

    __slots__ = ()
    base = property(operator.itemgetter(0))
    kind_free = property(operator.itemgetter(4))  # no row with a failure kind: nothing sends its rows to root_cause

    def value(self, at):
        """The column of SIDE_READS[at], or None where the rows share it (base[at])."""
        for position, column in self[1]:
            if position == at:
                return column
        return None

    def expand(self, shared):
        """The side tuple of each row, as _index_table made them before (a clean server side as _clean_server's)."""
        base, own, count, server, _kind_free = self
        values = list(base)
        out = []
        for number in range(count):
            for position, column in own:
                values[position] = column[number]
            side = tuple(values)
            out.append(_clean_server(side, shared) if server else side)
        return tuple(out)


def _failing(base, own):
    """Whether a round has a row with a failure kind or sentence (a server side that keeps all it carries)."""
    return bool(base[_KIND] or base[_FAILURE] or any(any(column) for at, column in own if at in (_KIND, _FAILURE)))


def _sides(base, own, count, server, shared):
    """The _Sides of a round: ``base`` (SIDE_READS' values its rows share), ``own`` ((position, column) of the
    others), ``count`` rows; a server round without a failure as its device and port alone."""
    if server and not _failing(base, own):
        base = _clean_server(base, shared)
        own = tuple((at, column) for at, column in own if at < _KIND)
    kind_free = not base[_KIND] and not any(any(column) for at, column in own if at == _KIND)
    return _Sides((base, own, count, server, kind_free))


def _expand(sides, shared):
    """A line's sides as a tuple of side tuples (a _Sides expanded)."""
    return sides.expand(shared) if sides.__class__ is _Sides else sides


class SideIndex:
    """The sides of a pass by key. A runner's round (one role, peer and round: a row per rail) is held as one line,
    ``lines[(pass, round, server, client)] = [server line, client line]``, a line being (rails, sides): one entry per
    round and pair instead of one per rail (1 M instead of 8.4 M at 1024 hosts x 8 rails all_pairs). Any other side is
    held by its own key, ``sides[(pass, round, rail, server, client)] = [server side, client side]``. A key is in one
    of the two: where a side of a line's pair comes by its own key, or a second line of its role shares a rail with
    the first, the line is split into its sides first, in the order they came, so a second side of a key and role is
    never merged and the first one stays (its key goes to ``duplicates``)."""

    def __init__(self, duplicates):
        self.sides = {}
        self.lines = {}
        self.split = set()  # (pass, round, server, client) of the keys in ``sides``: never held as a line again
        self.rail_sets = {}  # a round's rails, one tuple per distinct one
        self.duplicates = duplicates
        self.shared = {}  # one object per distinct value: a clean server side per port, a string per name
        self.columns = {}  # a column of strings (a round's devices, rails) as one tuple per distinct one

    def put(self, key, at, side):
        """Index ``side`` as side ``at`` (0 server, 1 client) of ``key``; a second one is never merged."""
        pass_no, round_no, rail, server, client = key
        pair = (pass_no, round_no, server, client)
        if pair not in self.split:
            self.split.add(pair)
            self._put_each(pair, _line_sides(self.lines.pop(pair, None), self.shared))
        got = self.sides.get(key)
        if got is None:
            got = self.sides[key] = [None, None]
        if got[at] is not None:
            if self.duplicates is not None:
                self.duplicates.append((key, _ROLES[at]))
            return
        got[at] = side

    def put_line(self, pair, at, rails, sides):
        """Index a round's ``sides`` (one per rail of ``rails``, a tuple of strings: a tuple of side tuples, or a
        _Sides) as side ``at`` of ``pair`` (pass, round, server, client)."""
        if pair not in self.split and len(set(rails)) == len(rails):
            got = self.lines.setdefault(pair, [None, None])
            have = got[at]
            if have is None:
                got[at] = (self.rail_sets.setdefault(rails, rails), sides)
                return
            if set(have[0]).isdisjoint(rails):
                # a round written as two lines (a failed side's keys)
                got[at] = (have[0] + rails, _expand(have[1], self.shared) + _expand(sides, self.shared))
                return
        self._put_each(pair, ((at, rail, side) for rail, side in zip(rails, _expand(sides, self.shared))))

    def put_lines(self, pairs, slots, rails, sides):
        """put_line each of ``pairs`` (as side ``slots[i]``, with ``rails[i]`` and ``sides[i]``), in order. At once,
        in C, where that is what putting them one by one does: no pair split, none twice in the same role or held
        in that role already, each one's rails distinct (a side file's rounds, _index_rounds)."""
        lines = self.lines
        rail_sets = dict((rail, len(set(rail)) == len(rail)) for rail in set(rails))
        held = map(operator.getitem, map(lines.get, pairs, itertools.repeat(_NOTHING)), slots)
        if (
            not all(rail_sets.values())
            or (self.split and not self.split.isdisjoint(pairs))  # none split (the common case): no pass
            or list(held).count(None) != len(pairs)
            or len(set(pairs) if len(set(slots)) < 2 else set(zip(pairs, slots))) != len(pairs)
        ):
            for pair, slot, rail, side in zip(pairs, slots, rails, sides):
                self.put_line(pair, slot, rail, side)
            return
        got = map(lines.setdefault, pairs, map(list, itertools.repeat(_NOTHING, len(pairs))))
        collections.deque(
            map(list.__setitem__, got, slots, zip(map(self.rail_sets.setdefault, rails, rails), sides)), maxlen=0
        )

    def _put_each(self, pair, sides):
        """put() each (at, rail, side) of ``sides`` under its own key (in order: the first of a key and role stays)."""
        for at, rail, side in sides:
            self.put((pair[0], pair[1], rail, pair[2], pair[3]), at, side)

    def take(self, pair, rails):
        """The [server side, client side] of each of ``rails`` (strings) of ``pair``, in order, taken out of the index
        (_NOTHING where none came back). A line's rails the pair does not hold stay, by their own keys."""
        got = self.lines.pop(pair, None) if self.lines else None
        if got is not None:
            return self._take_line(pair, rails, got)
        sides = self.sides
        pass_no, round_no, server, client = pair
        return [sides.pop((pass_no, round_no, rail, server, client), _NOTHING) for rail in rails]

    def _take_line(self, pair, rails, got):
        """take() of a pair held as lines ``got``."""
        sline, cline = got
        shared = self.shared
        if sline is not None and cline is not None and sline[0] == rails and cline[0] == rails:
            # the common case: both rounds hold the pair's rails, in order
            return list(zip(_expand(sline[1], shared), _expand(cline[1], shared)))
        found = [dict(zip(line[0], _expand(line[1], shared))) if line else {} for line in got]
        # popped, not read: a rail the pair plans twice gets its sides once (no_result the second time)
        out = [(found[0].pop(rail, None), found[1].pop(rail, None)) for rail in rails]
        self.split.add(pair)  # what the pair does not hold is left by its own keys, for _refused
        self._put_each(pair, ((at, rail, side) for at, left in enumerate(found) for rail, side in left.items()))
        return out

    def flat(self):
        """{(pass, round, rail, server, client): [server side, client side]} of every side left."""
        out = dict(self.sides)
        for (pass_no, round_no, server, client), got in self.lines.items():
            for at, rail, side in _line_sides(got, self.shared):
                out.setdefault((pass_no, round_no, rail, server, client), [None, None])[at] = side
        return out


def _line_sides(got, shared):
    """(at, rail, side) of each side of a pair's lines ``got`` ([server line, client line] or None), server first."""
    for at, line in enumerate(got or ()):
        for rail, side in zip(line[0], _expand(line[1], shared)) if line else ():
            yield at, rail, side


def _clean_server(side, shared):
    """A server side without a failure as the one tuple of its device and port in ``shared`` (it carries nothing else
    the join reads); another side as it is."""
    if side[_KIND] or side[_FAILURE]:
        return side
    port = side[:2]
    got = shared.get(port)
    if got is None:
        got = shared[port] = port + (None,) * (len(SIDE_READS) - 2)
    return got


def _index_columns(index, columns, shared):
    """Index the sides given column by column (_FIELDS, in order: each column the values of a key, in side
    order)."""
    width = len(_KEY_FIELDS)
    for row in zip(*columns):
        role, host, peer, pass_no, round_no, rail = row[:width]
        if host is _NO_HOST or role not in _ROLES:
            continue
        _check_round(role, host, round_no)
        if role == "server":
            index.put(_key(pass_no or 1, round_no, rail, host, peer), 0, _clean_server(row[width:], shared))
        else:
            index.put(_key(pass_no or 1, round_no, rail, peer, host), 1, row[width:])


def _index_table(index, item, where, shared):
    """Index a table item of sides. The common one, a host's round (one role, peer, pass and round, a row per
    rail), is indexed as one line of columns (SideIndex.put_line, _Sides); one whose rows name their rounds (a side
    file written whole) as a line per round (_item_rounds); another, row by row (_index_columns)."""
    const, names, columns, count = resultfile.table_columns(item, where)
    if count and not _ROUND_KEYS.isdisjoint(names):
        made = _item_rounds(index, const, dict(zip(names, columns)), count)
        if made is not None:
            index.put_lines(*made)
            return None
    # the names of hosts, rails and devices as one string object each, and a column of them as one tuple
    # (``shared`` holds them): JSON makes one per value, 8.4 M keys and sides at 1024 hosts x 8 rails all_pairs
    at = dict(zip(names, map(_shared_column, columns, itertools.repeat(shared), itertools.repeat(index.columns))))
    if not _ROUND_KEYS.isdisjoint(at):
        columns = [
            at[name] if name in at else itertools.repeat(const.get(name, missing), count)
            for name, missing in zip(_FIELDS, _MISSING)
        ]
        return _index_columns(index, columns, shared)
    role, host, peer = const.get("role"), const.get("host", _NO_HOST), const.get("peer")
    pass_no, round_no = const.get("pass"), const.get("round")
    if host is _NO_HOST or role not in _ROLES or not count:
        return None
    _check_round(role, host, round_no)
    pass_no, round_no = int(pass_no or 1), int(round_no)
    host, peer = _one(host, shared), _one(peer, shared)
    server, client, slot = (host, peer, 0) if role == "server" else (peer, host, 1)
    rails = at.pop("rail", None) or (_one(const.get("rail"), shared),) * count
    base = tuple(map(const.get, SIDE_READS))
    if str in set(map(type, base)):  # a device, a failure: one string object per text
        base = tuple(_one(value, shared) for value in base)
    own = tuple((_AT[name], column) for name, column in at.items() if name in _AT)
    sides = _sides(base, own, count, slot == 0, shared)
    index.put_line((pass_no, round_no, server, client), slot, tuple(map(str, rails)), sides)
    return None


def _index_rounds(index, items):
    """Index a side file's items at once when each is a runner's round written as a table item (one role, host,
    peer, pass and round as ints, a rail column of strings, rows of its width): what _index_table does an item at a
    time, column by column across the file's rounds, in C. Returns False, having indexed nothing, for any other
    file (it is indexed an item at a time, which also names what is wrong)."""
    tables = _whole_tables(items)
    keys = _round_keys(index.shared, _getter(tables[0])) if tables else None
    if keys is None:
        return False
    consts, names, rows = tables
    shapes = {}  # the items of each role and set of column names, by number
    for number, shape in enumerate(zip(keys[1], map(tuple, names))):
        shapes.setdefault(shape, []).append(number)
    rails, sides = [None] * len(items), [None] * len(items)
    for (slot, shape), numbers in shapes.items():
        tables = _pick(rows, numbers)
        flat = list(itertools.chain.from_iterable(tables))
        if not _all_of(list, flat) or set(map(len, flat)) != {len(shape)}:
            return False
        columns = list(map(tuple, itertools.starmap(zip, tables)))  # each round's, a tuple per name
        by_round = [list(map(operator.itemgetter(at), columns)) for at in range(len(shape))]
        made = _shape_rounds(index, shape, _getter(_pick(consts, numbers)), by_round, slot == 0)
        if made is None:
            return False
        for number, rail, side in zip(numbers, *made):
            rails[number], sides[number] = rail, side
    index.put_lines(keys[0], keys[1], rails, sides)
    return True


def _getter(consts):
    """The shared values of rounds given as their table items' consts: name -> each round's value (None: not
    shared by its rows)."""
    return lambda name: list(map(dict.get, consts, itertools.repeat(name)))


def _item_rounds(index, const, columns, count):
    """(pairs, slots, rails, sides) of the rounds of a table item whose rows name their rounds (a side file written
    whole, sidefiles.write_sides: a host's rounds in a few items): each run of rows with the same role, host, peer,
    pass and round is a round, as _index_rounds makes a runner's line of one: its shared values those of the item
    and of the run's first row, its columns the item's others, cut at the runs. None where a row is read otherwise
    (a role, host or peer that is not a string, a round or pass that is not an int, a rail that is not a string):
    _index_columns reads it row by row, which also names what is wrong. ``columns``: {name: column}."""
    if "rail" in const:  # a host of one rail: its rail column is a value
        columns["rail"] = [const["rail"]] * count
        const = dict((name, value) for name, value in const.items() if name != "rail")
    keys = [columns[name] for name in _KEY_FIELDS[:-1] if name in columns]
    starts = _run_starts(keys)
    ends = starts[1:] + [count]
    rounds = len(starts)

    def shared_values(name):
        if name in columns:
            return list(map(columns[name].__getitem__, starts)) if name in _ROUND_KEYS else [None] * rounds
        return [const.get(name)] * rounds

    keyed = _round_keys(index.shared, shared_values)
    if keyed is None:
        return None
    shape = tuple(name for name in columns if name not in _ROUND_KEYS)
    cuts = list(map(slice, starts, ends))
    by_round = [list(map(tuple, map(columns[name].__getitem__, cuts))) for name in shape]
    slots = keyed[1]
    if len(set(slots)) == 1:
        made = _shape_rounds(index, shape, shared_values, by_round, slots[0] == 0)
        return None if made is None else (keyed[0], slots) + tuple(made)
    rails, sides = [None] * rounds, [None] * rounds  # an item of both roles' rounds: each role's made apart
    for slot in (0, 1):
        numbers = [number for number, has in enumerate(slots) if has == slot]
        by_round_of_slot = [_pick(values, numbers) for values in by_round]
        made = _shape_rounds(index, shape, _picked(shared_values, numbers), by_round_of_slot, slot == 0)
        if made is None:
            return None
        for number, rail, side in zip(numbers, *made):
            rails[number], sides[number] = rail, side
    return keyed[0], slots, rails, sides


def _picked(shared_values, numbers):
    """``shared_values`` of the rounds ``numbers`` alone."""
    return lambda name: _pick(shared_values(name), numbers)


def _run_starts(keys):
    """The first row of each run of rows with the same values in ``keys`` (columns), in C."""
    return [0] + sorted(set().union(*map(resultfile.changes, keys)))


def _whole_tables(items):
    """(consts, column names, rows) of a side file's items when each is a table item of this version with a list of
    rows (resultfile.table_columns' checks, for all at once; _index_rounds checks the rows); None otherwise."""
    if not items or set(map(type, items)) != {dict}:
        return None
    try:
        versions, consts, names, tables = (
            list(map(operator.itemgetter(key), items)) for key in (resultfile.TABLE_KEY, "const", "columns", "rows")
        )
    except KeyError:
        return None
    if versions.count(resultfile.TABLE_VERSION) != len(items) or not _all_of(dict, consts):
        return None
    if not (_all_of(list, names) and _all_of(list, tables)) or 0 in map(len, tables):
        return None
    return consts, names, tables


def _all_of(kind, values):
    return set(map(type, values)) == {kind}


def _pick(values, numbers):
    return [values[number] for number in numbers]


def _round_keys(shared, shared_values):
    """(pairs, slots) of a side file's rounds ((pass, round, server, client), 0 server / 1 client) from their
    shared values (``shared_values``: name -> each round's value), the names as one string each; None unless each
    round holds a role, its host and peer as strings, a round and a pass (absent: 1) as ints."""
    roles, hosts, peers, passes, rounds = map(shared_values, ("role", "host", "peer", "pass", "round"))
    if not (_all_of(str, roles) and _all_of(str, hosts) and _all_of(str, peers) and _all_of(int, rounds)):
        return None
    if not set(roles) <= set(_ROLES) or not set(map(type, passes)) <= {int, type(None)}:
        return None
    slots = list(map(_ROLES.index, roles))
    hosts, peers = (list(map(shared.setdefault, names, names)) for names in (hosts, peers))
    if None in passes or 0 in passes:
        passes = [number or 1 for number in passes]
    servers = map(tuple.__getitem__, zip(hosts, peers), slots)
    clients = map(tuple.__getitem__, zip(peers, hosts), slots)
    return list(zip(passes, rounds, servers, clients)), slots


def _shape_rounds(index, shape, shared_values, by_round, server):
    """(rails, sides) of the rounds of one role (``server``) and set of column names (``shape``), as _index_table
    makes them: ``shared_values`` (name -> each round's value its rows share), ``by_round`` (each of shape's columns
    as a tuple per round). None where one holds what _index_table reads otherwise or refuses (a key of the round as
    a column, a name twice, no rail column, a rail that is not a string)."""
    if not _ROUND_KEYS.isdisjoint(shape) or len(set(shape)) != len(shape) or "rail" not in shape:
        return None
    by_name = {}
    for name, values in zip(shape, by_round):
        # one tuple per distinct column of strings (a column's first value tells one that cannot be)
        if values[0][0].__class__ is str and _all_of(str, itertools.chain.from_iterable(values)):
            values = list(map(index.columns.setdefault, values, values))
        elif name == "rail":
            return None
        by_name[name] = values
    base = []
    for name in SIDE_READS:
        values = shared_values(name)
        if str in set(map(type, values)):
            values = [_one(value, index.shared) for value in values]
        base.append(values)
    counts = map(len, by_name["rail"])
    if any(base[_KIND]) or any(base[_FAILURE]) or "failure_kind" in shape or "failure" in shape:
        own = [zip(itertools.repeat(_AT[name]), by_name[name]) for name in shape if name in _AT]
        owns = list(zip(*own)) if own else [()] * len(by_name["rail"])
        return by_name["rail"], list(
            map(_sides, zip(*base), owns, counts, itertools.repeat(server), itertools.repeat(index.shared))
        )
    # no round failed: _sides' work for all of them at once (a clean server round, its device and port alone)
    kept = [name for name in shape if name in _AT and (_AT[name] < _KIND or not server)]
    own = [zip(itertools.repeat(_AT[name]), by_name[name]) for name in kept]
    owns = zip(*own) if own else itertools.repeat(())
    bases = _clean_bases(index.shared, base[_DEVICE], base[_PORT]) if server else zip(*base)
    made = zip(bases, owns, counts, itertools.repeat(server), itertools.repeat(True))
    return by_name["rail"], list(map(tuple.__new__, itertools.repeat(_Sides), made))


def _clean_bases(shared, devices, ports):
    """_clean_server's side of each (device, port)."""
    ends = list(zip(devices, ports))
    got = list(map(shared.get, ends))
    if None in got:
        got = [_clean_server(end + (None,) * (len(SIDE_READS) - 2), shared) for end in ends]
    return got


def _shared_column(column, shared, columns):
    """A column of strings as the one tuple of those strings in ``columns`` (each string the one object of its text
    in ``shared``); another column as it is."""
    if not column or column[0].__class__ is not str:
        return column
    column = tuple(column)  # a version 2 item's columns are lists
    got = columns.get(column)
    if got is not None:
        return got
    if len(set(map(type, column))) != 1:
        return column
    column = columns[column] = tuple(map(shared.setdefault, column, column))
    return column


def _one(value, shared):
    """A string as the one object of its text in ``shared``; another value as it is."""
    return shared.setdefault(value, value) if value.__class__ is str else value


def side_index(sides, duplicates=None, side_files=()):
    """The SideIndex of side results: ``sides`` (dicts, e.g. the module's arguments) and ``side_files`` ((path,
    items) of side files, sidefiles.iter_side_items: their table items are indexed column by column, with no dict per
    side). Both are iterables read once, never held whole. Each side is a tuple of the values of SIDE_READS
    (side_dict makes it a dict). A second side of the same key and role is never merged: its key goes to
    ``duplicates`` (a list) when given."""
    index = SideIndex(duplicates)
    shared = index.shared
    for side in sides or []:
        if isinstance(side, dict):
            _index_columns(index, _dict_columns(side), shared)
    for path, items in side_files:
        if _index_rounds(index, items):
            continue
        for number, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if resultfile.TABLE_KEY in item:
                _index_table(index, item, "%s[%d]" % (path, number), shared)
            else:
                _index_columns(index, _dict_columns(item), shared)
    return index


def index_sides(sides, duplicates=None, side_files=()):
    """{(pass, round, rail, server, client): [server side, client side]} (None for a side that did not come back):
    side_index's sides by their own keys."""
    return side_index(sides, duplicates, side_files).flat()


def _side_failure(side, role):
    if side is None:
        return "no_result", "%s side: no result came back (the host's schedule did not finish)" % role
    if side.get("failure_kind"):
        return side["failure_kind"], "%s side: %s" % (role, side.get("failure") or side["failure_kind"])
    return None, None


def root_cause(server_side, client_side):
    """(failure_kind, sentence) from the two sides, or (None, None) when both ran cleanly."""
    skind, stext = _side_failure(server_side, "server")
    ckind, ctext = _side_failure(client_side, "client")
    if not skind and not ckind:
        return None, None
    if skind and ckind:
        # The server's cause explains the client's "could not connect"; a dead client explains
        # the server's "no client connected".
        if ckind in _CONSEQUENCES and skind not in _CONSEQUENCES:
            return skind, "%s; %s" % (stext, ctext)
        if skind in _CONSEQUENCES and ckind not in _CONSEQUENCES:
            return ckind, "%s; %s" % (ctext, stext)
        return ckind, "%s; %s" % (ctext, stext)
    if ckind:
        return ckind, ctext
    return ("server_failed" if skind in _CONSEQUENCES else skind), stext


# a result's keys: those every result of a pass holds alike, then those of its pair and rail, its figures (by
# kind) and its verdict. The join makes a pair's results as columns in this order (not a dict per result: a pass
# has millions), writes them so (resultfile.write_chunks) and makes a dict only where one is handed over.
SHARED_KEYS = ("test", "kind", "duration_s", "size", "qps", "bidirectional")
PAIR_KEYS = (
    "server", "server_device", "server_port", "client", "client_device", "client_port", "rail", "round",
    "measured_by", "pass",
)  # fmt: skip
LATENCY_FIGURES = ("t_typical_us", "t_avg_us", "t_min_us", "t_max_us", "p99_us", "p999_us")
LATENCY_BASES = (("t_typical_us", "t_typical"), ("t_avg_us", "t_avg"), ("latency_us", "latency_us"))
VERDICT_KEYS = ("passed", "failure_kind", "failure")
FIGURE_KEYS = {
    "bandwidth": ("bw_avg_gbps", "bw_peak_gbps", "line_rate_gbps", "threshold_gbps", "threshold_basis"),
    "latency": LATENCY_FIGURES + ("latency_basis", "threshold_us"),
}
_PASSED = -len(VERDICT_KEYS)  # where a row holds "passed"
_LATENCY_AT = tuple(_AT[name] for name in LATENCY_FIGURES)
_LATENCY_BASES_AT = tuple((_AT[name], basis) for name, basis in LATENCY_BASES)
_NO_PORT = (None, None, None)  # (device, port, rate_gbps) of a rail the plan does not give a host
_NO_PORTS = {}


def line_rate(srail, crail, bidirectional=False):
    """The slower end's port rate (x2 bidirectional): no figure can be above it. None when a rate is unknown."""
    rates = [r for r in (srail.get("rate_gbps"), crail.get("rate_gbps")) if isinstance(r, (int, float)) and r > 0]
    if len(rates) < 2:
        return None
    return float(min(rates)) * (2 if bidirectional else 1)


class _Join:
    """One pass's join: the indexed sides, the plan's ports, the settings, and what every result of the pass shares
    (worked out once: the keys every result holds alike, the line rate and the gate of each pair of port rates)."""

    columnar = True  # the common pair's results made as columns (_Block); the tests join with it off too
    block_pairs = 512  # the most pairs one chunk of columns holds (a table item's 4096 results at 8 rails)

    def __init__(self, sides, side_files, rails, settings):
        self.settings = settings
        self.test = settings.get("test") or "write"
        self.kind = testkinds.kind_of(self.test)
        self.duplicates = []
        self.index = side_index(sides, self.duplicates, side_files)
        self.duplicate_roles = {}  # key -> the roles that came back twice (once per result, not a scan per result)
        for key, role in self.duplicates:
            self.duplicate_roles.setdefault(key, []).append(role)
        # {host: {rail: (device, port, rate_gbps)}}: what a result takes from the plan's rails
        self.ports = dict(
            (h, dict((r["rail"], (r.get("device"), r.get("port"), r.get("rate_gbps"))) for r in hr))
            for h, hr in rails.items()
        )
        # a float, as the report's normaliser makes it: fabric_join's duration is an int, and an int figure sent
        # every result of a pass down the normaliser's slow path (results.normalize_result): 3.3 us a result, not 1.2
        duration = settings.get("duration")
        number = isinstance(duration, (int, float)) and not isinstance(duration, bool)
        self.bidirectional = bool(settings.get("bidirectional"))
        self.shared = (
            self.test,
            self.kind,
            float(duration) if number else duration,
            # the parameters a baseline compares like with like (report/baseline.py PARAMS)
            settings.get("size"),
            settings.get("qps"),
            self.bidirectional if self.kind == "bandwidth" else None,
        )
        self.figures_of = _bandwidth_figures if self.kind == "bandwidth" else _latency_figures
        self.keys = SHARED_KEYS + PAIR_KEYS + FIGURE_KEYS[self.kind] + VERDICT_KEYS
        self.gates = {}
        self.verdict_sets = {}
        self.port_sets = {}
        self.shared_sets = {}

    def shared_columns(self, count):
        """The columns of what ``count`` results of the pass share (SHARED_KEYS): a new list, the same tuples."""
        got = self.shared_sets.get(count)
        if got is None:
            got = self.shared_sets[count] = [(value,) * count for value in self.shared]
        return list(got)

    def plan_ports(self, host, rails):
        """(devices, ports, rate) the plan gives ``host`` on ``rails`` (a tuple: a device and a port on each, one
        rate for all), once per host and rails; None where it does not (the pair's rows are made one by one)."""
        key = (host, rails)
        got = self.port_sets.get(key, _NO_PORTS)
        if got is _NO_PORTS:
            ports = self.ports.get(host, _NO_PORTS)
            devices, numbers, rates = zip(*[ports.get(rail, _NO_PORT) for rail in rails])
            whole = all(devices) and all(numbers) and len(set(rates)) == 1
            got = self.port_sets[key] = (devices, numbers, rates[0]) if whole else None
        return got

    def verdicts(self, server_rate, client_rate):
        """The _Verdicts of a pair of port rates' gate, once per pair of rates."""
        got = self.verdict_sets.get((server_rate, client_rate))
        if got is None:
            got = self.verdict_sets[(server_rate, client_rate)] = _Verdicts(
                self.bandwidth_gate(server_rate, client_rate)
            )
        return got

    def threshold(self, server_rate, client_rate):
        s = self.settings
        return gate.bandwidth_threshold(
            min_gbps=s.get("min_gbps"),
            min_link_fraction=s.get("min_link_fraction"),
            expect_rate_gbps=s.get("expect_rate_gbps"),
            server_rate_gbps=server_rate,
            client_rate_gbps=client_rate,
            bidirectional=self.bidirectional,
        )

    def bandwidth_gate(self, server_rate, client_rate):
        """(line_rate_gbps, threshold, why no gate applies or None) of a pair of port rates, once per pair of
        rates."""
        got = self.gates.get((server_rate, client_rate))
        if got is None:
            threshold = self.threshold(server_rate, client_rate)
            rate = line_rate({"rate_gbps": server_rate}, {"rate_gbps": client_rate}, self.bidirectional)
            no_rate = threshold["error"] if threshold["threshold_gbps"] is None and threshold.get("error") else None
            got = self.gates[(server_rate, client_rate)] = (rate, threshold, no_rate)
        return got

    def result(self, row):
        return dict(zip(self.keys, row))


def _bandwidth_figures(join, cside, server_rate, client_rate, failure_kind, failure):
    """The bandwidth figures and verdict of a row: the client side's figures (an invalid figure counts against the
    host that produced it) gated against the pair's threshold."""
    bw_avg, bw_peak = (cside[_BW_AVG], cside[_BW_PEAK]) if cside is not None else (None, None)
    rate, threshold, no_rate = join.bandwidth_gate(server_rate, client_rate)
    if failure_kind is None:
        passed, failure_kind, failure = gate.judge_bandwidth(bw_avg, threshold)
        if passed and no_rate:
            failure_kind, failure = "no_rate", no_rate
    return (
        bw_avg, bw_peak, rate, threshold["threshold_gbps"], threshold["basis"], failure_kind is None, failure_kind,
        failure,
    )  # fmt: skip


def _latency_figures(join, cside, _server_rate, _client_rate, failure_kind, failure):
    """The latency figures and verdict of a row: typical latency where printed, else the average (latency_basis
    says which), gated against max_typical_us and max_p99_us."""
    figures = [cside[at] if cside is not None else None for at in _LATENCY_AT]
    typical, basis = None, None
    for at, name in _LATENCY_BASES_AT:
        if cside is not None and cside[at] is not None:
            typical, basis = cside[at], name
            break
    figures[0] = typical
    p99 = figures[4]
    limit = join.settings.get("max_typical_us")
    max_p99 = join.settings.get("max_p99_us")
    if failure_kind is None:
        _passed, failure_kind, failure, _limit = gate.judge_latency(typical, p99, limit, max_p99)
        if failure_kind is None and max_p99 is not None and p99 is None:
            # a ceiling the tool printed no figure for is a gate that could not apply: never a silent pass
            failure_kind = "ungated"
            failure = (
                "max_p99_us is %s us but the latency tool printed no p99 for this pair: it could not be gated on "
                "it (run more iterations, or unset max_p99_us)" % max_p99
            )
    threshold_us = float(limit) if limit is not None else None
    return tuple(figures) + (basis, threshold_us, failure_kind is None, failure_kind, failure)


def _duplicate_failure(join, key):
    roles = join.duplicate_roles.get(key)
    if not roles:
        return None, None
    roles = sorted(roles)
    return "refused", "%s: %s came back twice, refused (not merged): a side is measured once" % (
        _label(key),
        " and ".join("the %s side" % r for r in roles),
    )


def _chunks(join, pairs):
    """Each planned (pair, rail)'s result, in plan order, as (count, columns): one column per key of join.keys, in
    order (a generator). A pair's sides are taken out of the index as it is joined (SideIndex.take): what is left at
    the end is what the plan does not hold (_refused), and the index shrinks as the results are written (a pass
    planning one key twice gets no_result the second time). The common pair (both rounds came back whole and clean,
    a bandwidth test) is made as columns, with the common pairs next to it: up to join.block_pairs of them are one
    chunk (_Block); any other pair ends the block and is made a row per rail (_pair_rows), a chunk of its own."""
    lines = join.index.lines
    width = len(join.keys)
    columnar = join.columnar and join.kind == "bandwidth" and not join.duplicate_roles
    block = _Block(join)
    most = join.block_pairs
    for pair in pairs:
        planned = tuple(pair["rails"])
        names = tuple(map(str, planned))
        key = (int(pair.get("pass") or 1), int(pair["round"]), pair["server"], pair["client"])
        got = lines.get(key) if columnar else None
        if got is not None and block.add(got, key, planned, names):
            del lines[key]  # taken, as SideIndex.take takes it
            if len(block.pairs) >= most:
                yield block.chunk()
            continue
        if block.pairs:
            yield block.chunk()
        rows = list(_pair_rows(join, pair, key[0], key[1], join.index.take(key, names)))
        yield len(rows), (list(zip(*rows)) if rows else [()] * width)
    if block.pairs:
        yield block.chunk()


def _pair_rows(join, pair, pass_no, round_no, taken):
    """The row (join.keys) of each rail of ``pair``, from its sides as taken out of the index."""
    server, client = pair["server"], pair["client"]
    # the latency pass is a first pass of another kind: the report localises and
    # peer-gates it like pass 1 (pass 2 is only ever the bandwidth retest)
    result_pass = 1 if join.kind == "latency" else pass_no
    sports, cports = join.ports.get(server, _NO_PORTS), join.ports.get(client, _NO_PORTS)
    for rail, (sside, cside) in zip(pair["rails"], taken):
        sdevice, sport, srate = sports.get(rail, _NO_PORT)
        cdevice, cport, crate = cports.get(rail, _NO_PORT)
        if sside is None or cside is None or sside[_KIND] or cside[_KIND] or join.duplicate_roles:
            failure_kind, failure = _duplicate_failure(join, (pass_no, round_no, str(rail), server, client))
            if failure_kind is None:
                failure_kind, failure = root_cause(side_dict(sside), side_dict(cside))
        else:
            failure_kind = failure = None
        yield (
            join.shared
            + (
                server,
                sdevice or (sside and sside[_DEVICE]),
                sport or (sside and sside[_PORT]),
                client,
                cdevice or (cside and cside[_DEVICE]),
                cport or (cside and cside[_PORT]),
                rail,
                round_no,
                client,  # measured_by: the figures are the client side's
                result_pass,
            )
            + join.figures_of(join, cside, srate, crate, failure_kind, failure)
        )


class _Block:
    """The results of consecutive clean pairs, made as one chunk of columns (_chunks): what _pair_rows makes of each,
    a column at a time across the pairs (the same verdict per figure and gate, _Verdicts). A pair is clean when its
    two rounds (its lines) came back as columns (_Sides), hold exactly its rails, carry no failure kind and a float
    figure for each rail, and the plan gives its hosts a device, a port and one rate on each of these rails. add()
    keeps what a pair's columns are made of; chunk() makes them, in C (chain, repeat), once per block: a pass's
    524 K pairs at 1024 hosts x 8 rails all_pairs are a thousand chunks, not 524 K of 24 columns each."""

    def __init__(self, join):
        self.join = join
        self.port_sets, self.verdict_sets = join.port_sets, join.verdict_sets
        self.pairs = []  # (server, client, round, pass, count, verdicts, server ports, client ports, rails, bw_avg,
        self.count = 0  # bw_peak) of each pair; the results they hold

    def add(self, got, key, planned, names):
        """Keep the pair ``key`` (pass, round, server, client) whose lines are ``got``, planned on ``planned`` (as
        strings ``names``) when it is clean; False (nothing kept) for any other: its rows are made one by one."""
        sline, cline = got
        if sline is None or cline is None or sline[0] != names or cline[0] != names:
            return False
        ssides, csides = sline[1], cline[1]
        if ssides.__class__ is not _Sides or csides.__class__ is not _Sides or not (ssides[4] and csides[4]):
            return False  # [4]: kind_free
        pass_no, round_no, server, client = key
        port_sets = self.port_sets  # plan_ports' (a pair's two hosts share its rails: one lookup each)
        sports, cports = port_sets.get((server, planned), _NO_PORTS), port_sets.get((client, planned), _NO_PORTS)
        if sports is _NO_PORTS or cports is _NO_PORTS:
            sports, cports = self.join.plan_ports(server, planned), self.join.plan_ports(client, planned)
        if sports is None or cports is None:
            return False
        count = len(names)
        figures = _figure_columns(csides, count)
        if figures is None:
            return False
        rates = (sports[2], cports[2])
        verdicts = self.verdict_sets.get(rates)
        if verdicts is None:
            verdicts = self.join.verdicts(*rates)
        self.pairs.append((server, client, round_no, pass_no, count, verdicts, sports, cports, planned) + figures)
        self.count += count
        return True

    def chunk(self):
        """(count, columns) of the pairs kept, in order; the block is empty again."""
        servers, clients, rounds, passes, counts, verdicts, sports, cports, rails, bw_avg, bw_peak = zip(*self.pairs)
        total = self.count
        self.pairs, self.count = [], 0

        def each(values):  # a value per pair, as a value per result
            return list(_chain(map(itertools.repeat, values, counts)))

        figures = list(_chain(bw_avg))
        clients = each(clients)
        if len(set(map(id, verdicts))) == 1:  # one gate (the common case): its columns once
            gates = verdicts[0].gate_columns(total)
            judged = map(verdicts[0].__getitem__, figures)
        else:
            gates = [each(column) for column in zip(*(_gate_values(got.gate) for got in verdicts))]
            judged = map(dict.__getitem__, each(verdicts), figures)  # a _Verdicts' __missing__ judges a new figure
        passed, kinds, failures = zip(*judged)
        return total, self.join.shared_columns(total) + [
            each(servers),
            list(_chain(map(_FIRST, sports))),
            list(_chain(map(_SECOND, sports))),
            clients,
            list(_chain(map(_FIRST, cports))),
            list(_chain(map(_SECOND, cports))),
            list(_chain(rails)),
            each(rounds),
            clients,  # measured_by
            each(passes),
            figures,
            list(_chain(bw_peak)),
        ] + gates + [passed, kinds, failures]


def _figure_columns(csides, count):
    """(bw_avg, bw_peak) of a clean client round (a _Sides of ``count`` rows) as columns, or None where a bw_avg
    figure is not a float (its pair's rows are made one by one). csides.value(_BW_AVG) and value(_BW_PEAK), in one
    scan."""
    bw_avg = bw_peak = None
    for at, column in csides[1]:
        if at == _BW_AVG:
            bw_avg = column
        elif at == _BW_PEAK:
            bw_peak = column
    if bw_avg is None:
        bw_avg = csides.base[_BW_AVG]
        if bw_avg.__class__ is not float:
            return None
        bw_avg = (bw_avg,) * count
    elif set(map(type, bw_avg)) != {float}:
        return None
    if bw_peak is None:
        bw_peak = (csides.base[_BW_PEAK],) * count
    return bw_avg, bw_peak


_chain = itertools.chain.from_iterable
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def _gate_values(got):
    """(line rate, threshold, basis) of a bandwidth_gate."""
    rate, threshold, _no_rate = got
    return rate, threshold["threshold_gbps"], threshold["basis"]


class _Verdicts(dict):
    """{figure: (passed, failure_kind, failure)} of bandwidth figures against one gate (bandwidth_gate's), as
    _bandwidth_figures judges them: each distinct figure judged once (a pass's millions of results hold a few
    thousand). A zero is never kept (0.0 and -0.0 print apart); a NaN is found again only as the same object."""

    def __init__(self, gate_of):
        super().__init__()
        self.gate = gate_of
        self.gates = {}

    def gate_columns(self, count):
        """The line rate, threshold and basis columns of ``count`` results of this gate (a new list, the same
        tuples)."""
        got = self.gates.get(count)
        if got is None:
            got = self.gates[count] = [(value,) * count for value in _gate_values(self.gate)]
        return list(got)

    def __missing__(self, figure):
        _rate, threshold, no_rate = self.gate
        passed, failure_kind, failure = gate.judge_bandwidth(figure, threshold)
        if passed and no_rate:
            failure_kind, failure = "no_rate", no_rate
        got = (failure_kind is None, failure_kind, failure)
        if figure:
            self[figure] = got
        return got


def _refused(join):
    """A sentence for each side left in the index once every planned pair was joined: the plan does not hold it."""
    return [
        "%s: the plan holds no such pair, refused (not merged)"
        % _label(key, "/".join(sorted(role for role, side in zip(_ROLES, sides) if side is not None)))
        for key, sides in sorted(join.index.flat().items())
    ]


def join_checked(pairs, sides, rails, settings, side_files=()):
    """(results, refused): join_pass's results, and one sentence per side the plan does not hold (refused, never
    merged into a result)."""
    with paused_gc():
        join = _Join(sides, side_files, rails, settings)
        out = [join.result(row) for _count, columns in _chunks(join, pairs) for row in zip(*columns)]
        return out, _refused(join)


def join_written(pairs, sides, rails, settings, dest, side_files=()):
    """(summary, failed results, refused): join_checked's, with the results written to ``dest`` as they are joined
    instead of held, as columns (no dict per result but for those that failed). The file is resultfile.py's: a JSON
    list of results, table-encoded when the pass plans more than resultfile.COMPACT_ABOVE of them. ``dest`` None
    writes nothing (check mode). ``side_files``: as index_sides's."""
    with paused_gc():
        join = _Join(sides, side_files, rails, settings)
        failed = []
        count = [0]

        def counted():
            for number, columns in _chunks(join, pairs):
                count[0] += number
                if not all(columns[_PASSED]):
                    # the failed rows alone: a block of 4096 results holds a few (a row each is 4 M at 1024 x 8)
                    failing = itertools.compress(range(number), map(operator.not_, columns[_PASSED]))
                    failed.extend(join.result(map(operator.itemgetter(at), columns)) for at in failing)
                yield number, columns

        if dest is None:
            for _chunk in counted():
                pass
        else:
            pairs = list(pairs)  # read twice: counted here, joined below
            planned = sum(len(pair["rails"]) for pair in pairs)
            resultfile.write_chunks(dest, join.keys, counted(), compact=planned > resultfile.COMPACT_ABOVE)
        counts = summary(failed)
        counts["results"] = count[0]
        return counts, failed, _refused(join)


def join_pass(pairs, sides, rails, settings):
    """Pair results for every (pair, rail) the plan expected.

    ``pairs``: plan.slice_pass()['pairs']; ``sides``: side results from every host;
    ``rails``: {host: [rail dicts]} with rate_gbps (preflight.host_rails);
    ``settings``: {test, duration, bidirectional, min_gbps, min_link_fraction, expect_rate_gbps,
    max_typical_us, max_p99_us}. A result carries ``line_rate_gbps`` (the slower end's rate: a figure above it is
    invalid in the report), ``measured_by`` (the client) and, for latency, ``latency_basis`` (the figure gated:
    t_typical, or t_avg where the tool printed no typical). A pair with a side that came back twice fails as
    ``refused``; a latency ceiling the tool printed no figure for fails as ``ungated``.
    """
    return join_checked(pairs, sides, rails, settings)[0]


def summary(results):
    """Counts for the controller's one-line progress and the play output."""
    failed = [r for r in results if not r["passed"]]
    kinds = {}
    for res in failed:
        kinds[res["failure_kind"]] = kinds.get(res["failure_kind"], 0) + 1
    return {"results": len(results), "failed": len(failed), "failure_kinds": kinds}
