"""The report directory's run folders (report/runs.py) and the run's verdict for the controller and the culprits."""

import os

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import runs


def test_each_run_gets_its_folder_and_latest_points_at_the_newest(tmp_path):
    base = tmp_path / "reports"
    first = runs.start(str(base), "r1")
    second = runs.start(str(base), "r1")
    assert first["run_dir"] == str(base / "r1") and second["run_dir"] == str(base / "r1-2")
    assert os.readlink(str(base / "latest")) == "r1-2"
    assert (base / "r1-2" / runs.MARKER).is_file()
    assert first["changed"] and first["removed"] == []


def test_retention_keeps_the_newest_and_never_touches_what_is_not_a_run(tmp_path):
    base = tmp_path / "reports"
    (base / "baseline-archive").mkdir(parents=True)
    (base / "baseline.json").write_text("{}")
    for n in range(5):
        found = runs.start(str(base), "r%d" % n, keep=3, now=1000 + n)
        os.utime(str(base / found["run_id"] / runs.MARKER), (1000 + n, 1000 + n))
    assert sorted(runs.runs(str(base))) == ["r2", "r3", "r4"]
    assert (base / "baseline-archive").is_dir() and (base / "baseline.json").is_file()
    # keep 0 keeps every run
    runs.start(str(base), "r5", keep=0)
    assert len(runs.runs(str(base))) == 4


def test_a_base_that_cannot_be_used_is_one_sentence_naming_the_variable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(runs.RunDirError) as err:
        runs.start(str(blocker / "reports"))
    assert str(err.value).startswith("ibtune_report_dir=%s cannot be created (Not a directory)" % (blocker / "reports"))
    with pytest.raises(runs.RunDirError) as err:
        runs.start(str(blocker), variable="fabric_validate_report_dir")
    assert "fabric_validate_report_dir=%s is not a directory" % blocker in str(err.value)
    with pytest.raises(runs.RunDirError, match="is not a plain folder name"):
        runs.start(str(tmp_path / "r"), "../escape")
    with pytest.raises(runs.RunDirError, match="ibtune_report_keep=-1"):
        runs.start(str(tmp_path / "r"), keep=-1)


def test_check_mode_writes_nothing(tmp_path):
    base = tmp_path / "reports"
    found = runs.start(str(base), "r1", check_mode=True)
    assert found["run_dir"] == str(base / "r1") and not found["changed"]
    assert not base.exists()


def test_the_verdict_of_a_measured_run_is_the_reports():
    report = {
        "passed": False,
        "msg": "Fabric validation failed: node n3 (2 of 3 pairs).",
        "failed_hosts": [
            {"host": "n3", "reason": "bad link mlx5_0", "failure_kind": "node"},
            {"host": "n3", "reason": "symbol errors", "failure_kind": "counters"},
        ],
    }
    verdict = runs.verdict(["n1", "n2", "n3"], {"n1": report, "n2": report, "n3": report}, {})
    assert verdict == {
        "passed": False,
        "msg": "Fabric validation failed: node n3 (2 of 3 pairs).",
        "hosts": {"n3": "bad link mlx5_0; symbol errors"},
        "measured": True,
    }


def test_without_a_report_preflight_judges_and_says_why():
    problems = {"n1": [], "n2": [{"reason": "rail mlx5_0:1: expected firmware 28.1, found 28.0"}]}
    verdict = runs.verdict(["n1", "n2", "n3"], {}, problems, check_mode=True)
    assert not verdict["passed"]
    assert verdict["msg"] == (
        "FAILED (check mode: preflight and counters only, no pair measured): 2 of 3 host(s) failed preflight: n2, n3"
    )
    assert verdict["hosts"]["n2"] == "FAILED preflight: rail mlx5_0:1: expected firmware 28.1, found 28.0"
    assert verdict["hosts"]["n3"].startswith("unreachable")
    one = runs.verdict(["n1"], {}, {"n1": []})
    assert one == {
        "passed": True,
        "msg": "PASSED (one host: per-node checks only, no pair to test): 1 host(s) passed preflight",
        "hosts": {},
        "measured": False,
    }
