"""The test runner's guard against ansible-playbook hanging after its results thread died (playbook_process)."""

import sys
import time

import pytest

from tests.unit.playbook_process import run_playbook

HANGS = 'import sys, time; sys.stderr.write("Exception in thread Thread-3 (results_thread_main):\\n"); time.sleep(60)'


def test_a_run_whose_results_thread_died_is_killed_early_and_tried_twice(capsys):
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"lost its results thread and hung, 3 times:\nException in thread"):
        run_playbook([sys.executable, "-c", HANGS], timeout=50, grace_s=1)
    assert time.monotonic() - started < 45  # three tries of ~1.5 s each, never the 3 x 50 s of the timeouts
    assert "running it once more" in capsys.readouterr().err


def test_a_run_that_ends_keeps_its_output_and_rc():
    result = run_playbook([sys.executable, "-c", "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"])
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err")


def test_a_run_past_its_timeout_without_the_marker_fails_naming_the_timeout():
    with pytest.raises(AssertionError, match="did not end within 1 s"):
        run_playbook([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)
