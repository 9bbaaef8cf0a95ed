"""The pass's progress line (validate/progress.py) counts the hosts that run, not only those heard from."""

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import progress


def _state(done, total=3, seconds=(10.0,)):
    return {"rounds_total": total, "rounds_done": done, "failures": 0, "round_seconds": list(seconds)}


def test_the_line_counts_the_hosts_running_and_those_reported():
    states = {"n1": _state(1), "n2": _state(1)}
    assert progress.line(states, "pass 1", running=4) == (
        "pass 1: round 2/3, 0 sides failing, ETA 20 s (4 hosts running, 2 reported so far)"
    )
    states.update(n3=_state(1), n4=_state(1))
    assert progress.line(states, "pass 1", running=4).endswith("(4 hosts running)")


def test_without_the_count_the_line_says_only_what_it_knows():
    assert progress.line({"n1": _state(3)}, "pass 2") == "pass 2: 3/3 rounds done, 0 sides failing (1 host running)"
    assert progress.line({}, "pass 1", running=4) is None
