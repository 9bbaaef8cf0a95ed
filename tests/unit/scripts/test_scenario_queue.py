"""scripts/test.sh's scenario queue: every scenario exactly once, longest first by molecule/DURATIONS, an unlisted
scenario first; two lanes popping it concurrently never run a scenario twice or skip one."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "test.sh"
DRAIN = 'make_queue; while s=$(pop_scenario) && [ -n "$s" ]; do echo "$s"; done'


def _queue_functions():
    """The make_queue and pop_scenario functions, cut from scripts/test.sh as they are."""
    lines = SCRIPT.read_text().splitlines()
    out, keep = [], False
    for line in lines:
        if line.startswith(("make_queue()", "pop_scenario()")):
            keep = True
        if keep:
            out.append(line)
            if line == "}":
                keep = False
    assert len([line for line in out if line == "}"]) == 2, "scripts/test.sh lost make_queue or pop_scenario"
    return "\n".join(out)


def _bash(script, tmp_path, scenarios=None):
    env = {"PATH": "/usr/bin:/bin", "root": str(ROOT), "logs": str(tmp_path)}
    if scenarios is not None:
        env["SCENARIOS"] = scenarios
    return subprocess.run(
        ["bash", "-c", _queue_functions() + "\n" + script], env=env, capture_output=True, text=True, check=True
    ).stdout.split()


def _durations():
    rows = [line.split() for line in (ROOT / "molecule" / "DURATIONS").read_text().splitlines()]
    return dict((r[0], int(r[1])) for r in rows if r and not r[0].startswith("#"))


def test_durations_name_only_scenarios_that_exist():
    scenarios = set(p.parent.name for p in (ROOT / "molecule").glob("*/molecule.yml"))
    assert set(_durations()) <= scenarios


def test_the_queue_holds_every_scenario_once_longest_first(tmp_path):
    popped = _bash(DRAIN, tmp_path)
    listing = [str(ROOT / "scripts" / "list-scenarios.sh")]
    scenarios = subprocess.run(listing, check=True, capture_output=True, text=True).stdout
    assert sorted(popped) == sorted(scenarios.split())
    costs = _durations()
    listed = [s for s in popped if s in costs]
    assert listed == sorted(listed, key=lambda s: -costs[s])
    assert popped[0] == "lab" or popped[0] not in costs


def test_an_unlisted_scenario_goes_first(tmp_path):
    popped = _bash(DRAIN, tmp_path, "default brandnew lab")
    assert popped == ["brandnew", "lab", "default"]


def test_two_lanes_popping_at_once_share_the_queue_without_loss(tmp_path):
    names = " ".join("s%02d" % i for i in range(40))
    script = (
        "make_queue\n"
        'lane() { while s=$(pop_scenario) && [ -n "$s" ]; do echo "$s"; done; }\n'
        "lane > $logs/a & lane > $logs/b & wait; cat $logs/a $logs/b"
    )
    popped = _bash(script, tmp_path, names)
    assert sorted(popped) == names.split()
