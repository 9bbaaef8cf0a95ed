# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parsers look at each distinct line once (issue 20 part 7: linear time on any input), counted, not timed:
a megabyte of one repeated "#bytes" header line cost 0.4 s when every copy was scanned again."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds, scan
from tests.conftest import read_corpus

HEADER = "#bytes #iterations BW peak average\n"
LAT_HEADER = "#bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"


class _Counted(object):
    def __init__(self, func):
        self.func, self.calls = func, 0

    def __call__(self, text):
        self.calls += 1
        return self.func(text)


@pytest.fixture
def counted(monkeypatch):
    counters = {}
    for name in ("bandwidth_columns", "latency_columns", "header_pairs"):
        counters[name] = _Counted(getattr(scan, name))
        monkeypatch.setattr(scan, name, counters[name])
    return counters


@pytest.mark.parametrize("test", ["write", "write_lat"])
@pytest.mark.parametrize("piece", [HEADER, LAT_HEADER, "Failed status 12: wr_id 0 syndrom 0x81\n"])
def test_a_repeated_line_is_scanned_once(counted, test, piece):
    kinds.parse(test, piece * 2000)
    for name, counter in counted.items():
        assert counter.calls <= 1, (name, counter.calls)


@pytest.mark.parametrize("test", ["write", "write_lat"])
def test_a_report_repeated_parses_as_the_report(test):
    report = read_corpus("ib_write_bw__client-roce-mb-sec-loopback-gid3.txt")
    once, many = kinds.parse(test, report), kinds.parse(test, report * 50)
    assert many == once
