# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Linear-time scanners for the parts of a perftest report that a regular expression reads in quadratic time.

A lazy run followed by a delimiter (``[A-Za-z][...]*?\\s*:``, ``[A-Za-z][A-Za-z0-9 ]*?\\[``) is tried again from
every position of a long run that never meets its delimiter: 19.5 KB of stderr without a colon took 11 s. Each
function below returns exactly what the regular expression named in its docstring returns with ``findall`` or
``finditer`` (tests/unit/plugins/module_utils/perftest/test_scan.py compares them on random text), but looks at
every character a bounded number of times: a run's end and the next closing bracket are found once and reused.

Every parser also calls ``complete_lines(text)``: perftest ends every line it prints with a newline, so a text
that does not end with one was cut (a killed run, a partial capture), and its last line, whose last number may be
cut too (2.404708 read as 2), is set aside instead of parsed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import string

LETTERS = frozenset(string.ascii_letters)
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-.*/ ]*")  # matched on the reversed text before a colon
_LETTER = re.compile(r"[A-Za-z]")
_VALUE = re.compile(r"\s*(\S+)")
_BW_RUN = re.compile(r"[A-Za-z0-9 ]*")
_LAT_RUN = re.compile(r"[\w ]*")
_DIGIT_RUN = re.compile(r"\d*")
_BW_START = re.compile(r"[#A-Za-z]")
_LAT_START = re.compile(r"[#A-Za-z_]|\d")
_LAT_INNER_START = re.compile(r"t|\d")  # inside a run whose bracket failed, only these can still start a column
_HASH_WORD = re.compile(r"#\w+")
_WORD = re.compile(r"[A-Za-z]\w*")
_TPS = re.compile(r"tps\s+average")
_LAT_NO_BRACKET = re.compile(r"#\w+|tps\s+average")  # latency_columns' pattern less its alternatives with a "]"
_PERCENTILE_TAIL = re.compile(r"(?:\.\d+)?%\s*percentile\s*\[")


# perftest prints at most 12 columns and 3 "key : value" pairs a line: a line with more is no header of
# its (the scanners stop there, so a megabyte-long line of either costs no more than a short one)
MAX_COLUMNS = 32
MAX_PAIRS = 32
# what str.splitlines() ends a line at
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def complete_lines(text):
    """(lines, cut): the text's complete lines, and its last line when the text does not end with a line break
    (else None)."""
    lines = text.splitlines()
    if lines and text[-1] not in LINE_BREAKS:
        return lines[:-1], lines[-1]
    return lines, None


class _Closer(object):
    """The next ``]`` at or after a position: one forward search serves every later position up to it."""

    def __init__(self, text):
        self.text = text
        self.searched_from = 0
        self.found = -2  # the first "]" at or after searched_from (-1: none); -2: not searched yet
        self.none_after = len(text) + 1  # no "]" at or after this position

    def at_or_after(self, pos):
        if pos >= self.none_after:
            return -1
        if not (self.searched_from <= pos <= self.found):
            self.searched_from, self.found = pos, self.text.find("]", pos)
            if self.found < 0:
                self.none_after = pos
        return self.found


def header_pairs(line):
    """[(key, value)] as ``re.finditer(r"(?P<key>[A-Za-z][A-Za-z0-9_\\-.*/ ]*?)\\s*:\\s*(?P<value>\\S+)", line)``
    gives them (the key without the whitespace before the colon), the first MAX_PAIRS of them.

    A match ends at the first colon after its start (the key cannot hold one): so for each colon, walk back over
    the whitespace before it and the key characters before that (never past the previous match or colon), and
    the key starts at the first letter there."""
    out = []
    low = 0  # no match starts before this position
    colon = line.find(":")
    while colon >= 0:
        before = line[low:colon]
        tail = low + len(before.rstrip())  # the whitespace before the colon is neither key nor value
        start = tail - _KEY_RUN.match(before[: tail - low][::-1]).end()
        first = _LETTER.search(line, start, tail)
        value = _VALUE.match(line, colon + 1) if first else None
        if value:
            out.append((line[first.start() : tail], value.group(1)))
            if len(out) == MAX_PAIRS:
                break
            low = value.end()
        else:
            low = colon + 1
        colon = line.find(":", low)
    return out


def bandwidth_columns(text):
    """``re.findall(r"#\\w+|[A-Za-z][A-Za-z0-9 ]*?\\[[^\\]]*\\]|[A-Za-z]\\w*", text)``; None beyond MAX_COLUMNS."""
    out = []
    closer = _Closer(text)
    run_end = -1
    start = _BW_START.search(text)
    while start:
        pos = start.start()
        if text[pos] == "#":
            match = _HASH_WORD.match(text, pos)
            end = match.end() if match else pos + 1
        else:
            if pos >= run_end:  # a later start inside the same run meets the same end
                run_end = _BW_RUN.match(text, pos + 1).end()
            close = closer.at_or_after(run_end + 1) if text[run_end : run_end + 1] == "[" else -1
            match = None if close >= 0 else _WORD.match(text, pos)
            end = close + 1 if close >= 0 else match.end()
            if close >= 0:
                out.append(text[pos:end])
        if match:
            out.append(match.group())
        if len(out) > MAX_COLUMNS:
            return None
        start = _BW_START.search(text, end)
    return out


class _LatencyColumns(object):
    """latency_columns' state: the runs and the closing bracket already found, reused by later starts."""

    def __init__(self, text):
        self.text = text
        self.closer = _Closer(text)
        self.run_end, self.digits_end, self.digits_close = -1, -1, -1

    def percentile_end(self, pos):
        """Where ``\\d+(?:\\.\\d+)?%\\s*percentile\\s*\\[[^\\]]*\\]`` at pos ends, or None (every start inside a
        run of digits meets the same tail)."""
        if pos >= self.digits_end:
            self.digits_end = _DIGIT_RUN.match(self.text, pos).end()
            tail = _PERCENTILE_TAIL.match(self.text, self.digits_end)
            self.digits_close = self.closer.at_or_after(tail.end()) if tail else -1
        return self.digits_close + 1 if self.digits_close >= 0 else None

    def bracketed_end(self, pos):
        """Where ``[A-Za-z_][\\w ]*?\\[[^\\]]*\\]`` at pos ends, or None."""
        text = self.text
        if pos >= self.run_end:
            self.run_end = _LAT_RUN.match(text, pos + 1).end()
        close = self.closer.at_or_after(self.run_end + 1) if text[self.run_end : self.run_end + 1] == "[" else -1
        return close + 1 if close >= 0 else None

    def column_end(self, pos):
        """Where the column that starts at pos ends (the alternatives in the pattern's order), or None."""
        char = self.text[pos]
        if char == "#":
            match = _HASH_WORD.match(self.text, pos)
            return match.end() if match else None
        found = self.percentile_end(pos) if char.isdigit() else None
        if found is None and char == "t":
            match = _TPS.match(self.text, pos)
            found = match.end() if match else None
        if found is None and (char in LETTERS or char == "_"):
            found = self.bracketed_end(pos)
        return found

    def next_start(self, pos, found):
        if found is not None:
            return _LAT_START.search(self.text, found)
        if self.text[pos] in LETTERS or self.text[pos] == "_":  # the rest of this run fails the same way,
            # but at a digit or a "t"
            return _LAT_INNER_START.search(self.text, pos + 1, self.run_end) or _LAT_START.search(
                self.text, self.run_end
            )
        return _LAT_START.search(self.text, pos + 1)


def latency_columns(text):
    """``re.findall(PATTERN, text)`` with PATTERN the alternation of ``#\\w+``,
    ``\\d+(?:\\.\\d+)?%\\s*percentile\\s*\\[[^\\]]*\\]``, ``tps\\s+average`` and
    ``[A-Za-z_][\\w ]*?\\[[^\\]]*\\]``; None beyond MAX_COLUMNS."""
    out = []
    state = _LatencyColumns(text)
    start = _LAT_START.search(text)
    while start:
        pos = start.start()
        if state.closer.at_or_after(pos) < 0:  # no "]" from here on: only the two alternatives without one match
            out.extend(_LAT_NO_BRACKET.findall(text, pos))
            return out if len(out) <= MAX_COLUMNS else None
        found = state.column_end(pos)
        if found is not None:
            out.append(text[pos:found])
            if len(out) > MAX_COLUMNS:
                return None
        start = state.next_start(pos, found)
    return out


def bracketed_after(line, prefix):
    """The text between ``prefix`` (ending in ``[``) and the next ``]``, as
    ``re.search(re.escape(prefix) + r"(?P<name>[^\\]]+)\\]", line)`` finds it; None when there is none."""
    start = line.find(prefix)
    while start >= 0:
        begin = start + len(prefix)
        close = line.find("]", begin)
        if close < 0:
            return None  # no "]" after this one: none after a later one either
        if close > begin:
            return line[begin:close]
        start = line.find(prefix, start + 1)
    return None
