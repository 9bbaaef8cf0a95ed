"""fabric_join reading the hosts' side files (sides_dir, as schedule_wait and slurm_pass write them) joins exactly
what it joins from module arguments, and a host's file missing is that host's sides as no_result."""

import json

from ansible_collections.ibtune.fabric.plugins.modules import fabric_join, fabric_plan
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles
from tests.unit.modules_harness import run_module

HOSTS = ["n1", "n2", "n3", "n4"]
RAILS = dict(
    (h, [{"rail": "mlx5_%d:1" % i, "device": "mlx5_%d" % i, "port": 1, "rate_gbps": 400.0} for i in range(2)])
    for h in HOSTS
)


def planned_sides(tmp_path):
    plan = run_module(
        fabric_plan, {"hosts": HOSTS, "rails": RAILS, "addresses": dict((h, h) for h in HOSTS), "dest": str(tmp_path)}
    )
    by_host = {}
    for host in HOSTS:
        for side in sidefiles.slice_sides(json.loads((tmp_path / "pass1" / ("%s.json" % host)).read_text())):
            side = dict(side, failure_kind=None, failure=None)
            if side["role"] == "client":
                side["bw_avg_gbps"] = 180.0 if (host, side["rail"]) == ("n2", "mlx5_1:1") else 392.0
            by_host.setdefault(host, []).append(side)
    return plan, by_host


def join(plan, dest, **args):
    return run_module(fabric_join, dict(plan=plan["plan_file"], min_link_fraction=0.9, dest=str(dest), **args))


def test_side_files_join_as_the_module_arguments_do(tmp_path):
    plan, by_host = planned_sides(tmp_path)
    sides_dir = tmp_path / "pass1-sides"
    for host, sides in by_host.items():
        sidefiles.write_sides(str(sides_dir / (host + sidefiles.SIDES_SUFFIX)), sides)
    from_files = join(plan, tmp_path / "a.json", sides_dir=str(sides_dir))
    from_args = join(plan, tmp_path / "b.json", sides=[s for sides in by_host.values() for s in sides])
    slow = len([s for s in by_host["n2"] if s["role"] == "client" and s["rail"] == "mlx5_1:1"])
    assert not from_files.failed and from_files["result_count"] == 12 and from_files["failed_results"] == slow > 0
    assert from_args["result_count"] == 12
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()


def test_a_host_whose_side_file_never_came_is_no_result(tmp_path):
    plan, by_host = planned_sides(tmp_path)
    sides_dir = tmp_path / "pass1-sides"
    for host, sides in by_host.items():
        if host != "n4":
            sidefiles.write_sides(str(sides_dir / (host + sidefiles.SIDES_SUFFIX)), sides)
    joined = join(plan, tmp_path / "r.json", sides_dir=str(sides_dir))
    results = json.loads((tmp_path / "r.json").read_text())
    lost = [r for r in results if "n4" in (r["server"], r["client"])]
    # n4 as client: no_result; as server: its client ran alone and is failed by the server's absence
    assert len(lost) == 6 and {r["failure_kind"] for r in lost} <= {"no_result", "server_failed"}
    assert all("no result came back" in r["failure"] for r in lost)
    assert joined["failure_kinds"]["no_result"] + joined["failure_kinds"]["server_failed"] == 6


def test_the_plan_file_is_decoded_with_the_cyclic_collector_paused(tmp_path, monkeypatch):
    """The plan file is hundreds of MB at 1024 hosts x 8 rails all_pairs (a dict per pair): fabric_join decodes it
    with the collector paused, as the join runs, and the collector is back as it was after."""
    import gc

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import module as validate_module

    plan, by_host = planned_sides(tmp_path)
    decoded = []

    def load(handle):
        decoded.append(gc.isenabled())
        return json.loads(handle.read())

    monkeypatch.setattr(validate_module.json, "load", load)
    was = gc.isenabled()
    gc.enable()
    try:
        joined = join(plan, tmp_path / "r.json", sides=[s for sides in by_host.values() for s in sides])
        assert gc.isenabled()
    finally:
        if not was:
            gc.disable()
    assert decoded == [False] and joined["result_count"] == 12
