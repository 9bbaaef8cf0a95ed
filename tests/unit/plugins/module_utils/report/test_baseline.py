"""The baseline: keyed by the test's parameters (test, size, direction, queue pairs), versioned, kept whole on
rewrite (fields it does not know stay), and locked for concurrent writers."""

import json
import threading
import time

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as B
from ansible_collections.ibtune.fabric.plugins.module_utils.report import module as M
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import normalize_results

LINK = "a/mlx5_0<->b/mlx5_0"


def res(bw, bidirectional=False, size="65536", qps=1, server="a", client="b"):
    return {"server": server, "server_device": "mlx5_0", "client": client, "client_device": "mlx5_0",
            "test": "write", "bw_avg_gbps": bw, "threshold_gbps": 360.0 * (2 if bidirectional else 1),
            "passed": True, "size": size, "qps": qps, "bidirectional": bidirectional, "pass": 1}  # fmt: skip


def test_a_bidirectional_run_is_never_compared_with_a_unidirectional_baseline():
    base = B.update_baseline(None, normalize_results([res(392.0)]), "t1")
    [point] = base["links"][LINK]["history"]
    assert point == {"ts": "t1", "gbps": 392.0, "test": "write", "size": "65536", "bidirectional": False, "qps": 1}
    assert base["version"] == 2
    # 760 Gb/s bidirectional is not a regression of... nothing: no bidirectional history yet
    regressions, medians = B.find_regressions(normalize_results([res(760.0, bidirectional=True)]), base, 0.1)
    assert regressions == [] and medians == {}
    # the same parameters are compared: 300 < 0.9 x 392
    regressions, _medians = B.find_regressions(normalize_results([res(300.0)]), base, 0.1)
    assert [(r["link"], r["params"]["bidirectional"], r["baseline_gbps"]) for r in regressions] == [
        (LINK, False, 392.0)
    ]
    # another message size or QP count is another baseline
    assert B.find_regressions(normalize_results([res(300.0, size="1048576")]), base, 0.1) == ([], {})
    assert B.find_regressions(normalize_results([res(300.0, qps=4)]), base, 0.1) == ([], {})
    both = B.update_baseline(base, normalize_results([res(760.0, bidirectional=True)]), "t2")
    assert [p["bidirectional"] for p in both["links"][LINK]["history"]] == [False, True]


def test_version_1_points_are_kept_but_compared_with_no_result_that_states_its_parameters():
    v1 = {"version": 1, "updated": "t0", "links": {LINK: {"history": [{"ts": "t0", "gbps": 392.0, "test": "write"}]}}}
    base = B.load_baseline(json.dumps(v1))
    assert B.find_regressions(normalize_results([res(100.0)]), base, 0.1) == ([], {})
    # a result that states nothing (an older caller) still meets the version 1 history
    bare = dict(res(100.0), size=None, qps=None, bidirectional=None)
    assert len(B.find_regressions(normalize_results([bare]), base, 0.1)[0]) == 1
    new = B.update_baseline(base, normalize_results([res(391.0)]), "t1")
    assert [p.get("size") for p in new["links"][LINK]["history"]] == [None, "65536"]  # the old point stays
    assert new["version"] == 2


def test_fields_it_does_not_know_are_kept_on_rewrite():
    text = json.dumps({"version": 2, "updated": "t0", "owner": "fabric-team", "links": {LINK: {
        "note": "recabled 2026-11", "history": [{"ts": "t0", "gbps": 392.0, "test": "write", "size": "65536",
                                                 "bidirectional": False, "qps": 1, "ticket": "NET-12"}]}}})  # fmt: skip
    new = B.update_baseline(B.load_baseline(text), normalize_results([res(391.0)]), "t1")
    assert new["owner"] == "fabric-team" and new["links"][LINK]["note"] == "recabled 2026-11"
    assert new["links"][LINK]["history"][0]["ticket"] == "NET-12"
    assert json.loads(json.dumps(new)) == new


def test_a_newer_or_broken_baseline_is_refused_with_a_sentence():
    with pytest.raises(ValueError, match="version 3, newer than this collection's 2: upgrade ibtune.fabric"):
        B.load_baseline(json.dumps({"version": 3, "links": {}}))
    with pytest.raises(ValueError, match="has no 'history' list"):
        B.load_baseline(json.dumps({"version": 2, "links": {LINK: {}}}))


def params(tmp_path, results, **extra):
    out = {"results": results, "results_paths": [], "dest": str(tmp_path / "report"), "baseline_path":
           str(tmp_path / "base" / "baseline.json"), "update_baseline": True, "baseline_keep": 10,
           "counter_violations": [], "saturated": [], "fail_on_failure": False, "regression_tolerance": 0.1,
           "min_gbps": None, "run_id": None, "min_hosts": 1, "min_peer_fraction": 0.9}  # fmt: skip
    out.update(extra)
    return out


def test_two_reports_written_at_once_never_lose_an_update(tmp_path):
    first = params(tmp_path, [res(392.0)])
    second = params(tmp_path, [res(391.0, server="c", client="d")])
    M.run(first)  # creates the directory, the baseline and its lock file
    path = first["baseline_path"]
    done = []
    with B.locked(path):  # another report holds the lock: this one must wait, then read what the other wrote
        worker = threading.Thread(target=lambda: done.append(M.run(second)))
        worker.start()
        time.sleep(0.5)
        assert not done, "the second report did not wait for the lock"
        with open(path) as handle:
            held = json.load(handle)
        held["links"]["x/mlx5_0<->y/mlx5_0"] = {"history": [{"ts": "t", "gbps": 390.0, "test": "write"}]}
        with open(path, "w") as handle:
            json.dump(held, handle)
    worker.join(10)
    assert done
    with open(path) as handle:
        links = json.load(handle)["links"]
    assert sorted(links) == ["a/mlx5_0<->b/mlx5_0", "c/mlx5_0<->d/mlx5_0", "x/mlx5_0<->y/mlx5_0"]
