"""fabric_plan and fabric_join run in-process: files on disk, check mode, bad input."""

import json

from ansible_collections.ibtune.fabric.plugins.modules import fabric_join, fabric_plan
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.sidefiles import slice_sides
from tests.unit.modules_harness import run_module

HOSTS = ["n1", "n2", "n3", "n4"]
RAILS = dict(
    (h, [{"rail": "mlx5_%d:1" % i, "device": "mlx5_%d" % i, "port": 1, "rate_gbps": 400.0} for i in range(2)])
    for h in HOSTS
)
ADDR = dict((h, "10.0.0.%s" % h[1]) for h in HOSTS)


def test_plan_writes_one_slice_per_host_and_join_reads_the_plan(tmp_path):
    res = run_module(
        fabric_plan, {"hosts": HOSTS, "rails": RAILS, "addresses": ADDR, "dest": str(tmp_path), "run_s": 10}
    )
    assert not res.failed and res["rounds"] == 3 and res["pairs"] == 6 and res["sides"] == 24
    assert res["participants"] == HOSTS and res["host_failures"] == []
    assert res["ideal_s"] == 30 and res["eta_msg"] == "about 0.6 min (3 x 10 s tests, every rail in parallel)"
    slices = dict((h, slice_sides(json.loads((tmp_path / "pass1" / ("%s.json" % h)).read_text()))) for h in HOSTS)
    assert all(len(s) == 6 for s in slices.values())  # 3 rounds x 2 rails
    sides = []
    for sides_of_host in slices.values():
        for side in sides_of_host:
            side = dict(side, failure_kind=None, failure=None)
            if side["role"] == "client":
                side["bw_avg_gbps"] = (
                    180.0
                    if (side["host"], side["peer"], side["rail"])
                    in (("n3", "n2", "mlx5_0:1"), ("n2", "n3", "mlx5_0:1"))
                    else 392.0
                )
            sides.append(side)
    dest = tmp_path / "pass1-results.json"
    joined = run_module(
        fabric_join, {"plan": res["plan_file"], "sides": sides, "min_link_fraction": 0.9, "dest": str(dest)}
    )
    assert joined["result_count"] == 12 and joined["failed_results"] == 1
    # "results" is Ansible's loop key: a module returning it gets it renamed with a warning on every run (issue 21)
    assert "results" not in joined
    assert joined["failure_kinds"] == {"below_threshold": 1}
    assert "180.0 Gb/s < 360.0 Gb/s" in joined["failures"][0]
    assert len(json.loads(dest.read_text())) == 12


def test_a_pass_above_compact_above_is_table_encoded_and_every_reader_reads_it_alike(tmp_path, monkeypatch):
    """The join writes the table form above resultfile.COMPACT_ABOVE (here 4 results); the second pass's planner
    (retest_from) and fabric_report (results_paths) read it as they read the plain list."""
    from ansible_collections.ibtune.fabric.plugins.modules import fabric_report
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

    res = run_module(fabric_plan, {"hosts": HOSTS, "rails": RAILS, "addresses": ADDR, "dest": str(tmp_path)})
    sides = []
    for host in HOSTS:
        for side in slice_sides(json.loads((tmp_path / "pass1" / ("%s.json" % host)).read_text())):
            slow = side["role"] == "client" and {side["host"], side["peer"]} == {"n2", "n3"}
            sides.append(dict(side, failure_kind=None, failure=None, bw_avg_gbps=180.0 if slow else 392.0))
    plain, table = tmp_path / "plain.json", tmp_path / "table.json"
    run_module(fabric_join, {"plan": res["plan_file"], "sides": sides, "min_link_fraction": 0.9, "dest": str(plain)})
    monkeypatch.setattr(resultfile, "COMPACT_ABOVE", 4)
    joined = run_module(
        fabric_join, {"plan": res["plan_file"], "sides": sides, "min_link_fraction": 0.9, "dest": str(table)}
    )
    assert joined["result_count"] == 12 and joined["failed_results"] == 2
    items = json.loads(table.read_text())
    assert any(resultfile.TABLE_KEY in item for item in items) and len(items) < 12
    assert resultfile.read_results(str(table)) == json.loads(plain.read_text())

    def retest(path):
        return run_module(
            fabric_plan,
            {"hosts": HOSTS, "rails": RAILS, "addresses": ADDR, "dest": str(tmp_path / path.stem), "pass_number": 2,
             "retest_from": str(path)},
        )  # fmt: skip

    from_plain, from_table = retest(plain), retest(table)
    assert not from_table.failed and from_table["participants"] == from_plain["participants"]
    assert from_table["pairs"] == from_plain["pairs"] > 0

    def report(path):
        return run_module(
            fabric_report, {"results_paths": [str(path)], "dest": str(tmp_path / ("report-" + path.stem))}
        )

    by_plain, by_table = report(plain), report(table)
    assert by_table["passed"] is by_plain["passed"] is False
    assert by_table["failed_pairs"] == by_plain["failed_pairs"] and len(by_table["failed_pairs"]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('[{"ibtune_table": 1, "const": {}, "columns": ["server"], "rows": [["a", "b"]]}]')
    refused = retest(bad)
    assert refused.failed and "fabric_plan: retest_from %s[0] row 0 does not hold the 1 columns" % bad in refused["msg"]


def test_second_pass_retests_against_known_good_and_bars_excluded(tmp_path):
    first = []
    for a, b in (("n1", "n2"), ("n3", "n4"), ("n1", "n3"), ("n2", "n4"), ("n1", "n4"), ("n2", "n3")):
        ok = (a, b) != ("n2", "n3")
        first.append({"server": a, "client": b, "passed": ok, "pass": 1, "bw_avg_gbps": 390.0 if ok else 150.0})
    path = tmp_path / "first.json"
    path.write_text(json.dumps(first))
    res = run_module(
        fabric_plan,
        {
            "hosts": HOSTS,
            "rails": RAILS,
            "addresses": ADDR,
            "dest": str(tmp_path),
            "pass_number": 2,
            "retest_from": str(path),
            "exclude": ["n1"],
        },
    )
    partners = set(res["participants"])
    assert "n1" not in partners  # barred: its counters rose
    assert {"n2", "n3"} <= partners


def test_check_mode_writes_nothing(tmp_path):
    res = run_module(
        fabric_plan, {"hosts": HOSTS, "rails": RAILS, "addresses": ADDR, "dest": str(tmp_path / "p")}, check_mode=True
    )
    assert not res.failed and not (tmp_path / "p").exists()


def test_bad_base_port_is_one_sentence(tmp_path):
    res = run_module(
        fabric_plan, {"hosts": HOSTS, "rails": RAILS, "addresses": ADDR, "dest": str(tmp_path), "base_tcp_port": 65535}
    )
    assert res.failed and "fabric_validate_base_tcp_port=65535" in res["msg"]
