"""perftest_schedule run in-process: the sides' problems fail the task with one sentence, and no sides run no
round (the rounds themselves are tests/unit/plugins/module_utils/validate's)."""

import signal

import pytest

from ansible_collections.ibtune.fabric.plugins.modules import perftest_schedule
from tests.unit.modules_harness import run_module


@pytest.fixture
def keep_signal_handlers():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_a_side_without_its_keys_fails_naming_them():
    result = run_module(perftest_schedule, {"sides": [{}]})
    assert result.failed
    assert result["msg"] == (
        "perftest_schedule: sides[0] lacks round, role, host, peer, rail, device, tcp_port; "
        "sides[0] role=None must be server or client."
    )


def test_no_sides_run_no_round(keep_signal_handlers):
    result = run_module(perftest_schedule, {"sides": []})
    assert not result.failed and result["changed"] is False
    assert (result["sides"], result["rounds"], result["failures"], result["round_seconds"]) == ([], 0, 0, [])
    assert result["msg"] == "0 round(s), 0 side(s), 0 failed, in 0.0 s"
