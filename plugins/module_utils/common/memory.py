# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Python's cyclic garbage collector paused while a pass's millions of dicts are made (layer 0).

The plan, the join and the report make no reference cycles, yet with millions of new dicts alive the collector's
full passes run over all of them again and again: at 512 hosts x 8 rails all_pairs they were half the join's time
(bench/bench_scale.py). Reference counting still frees everything as usual while the collector sleeps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import gc


@contextlib.contextmanager
def paused_gc():
    """The cyclic collector off inside the block, and back as it was after (also when the block raises)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
