"""common/memory.py: the cyclic collector is paused inside the block and left as it was after, also on an error."""

import gc

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc


def test_the_collector_is_off_inside_and_back_on_after_even_when_the_block_raises():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_the_caller_had_paused_stays_paused():
    gc.disable()
    try:
        with paused_gc():
            with paused_gc():  # nested: the inner block must not turn it back on for the outer
                pass
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
