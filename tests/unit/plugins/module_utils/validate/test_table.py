"""The report's pair results as columns (validate/table.py): a ResultTable reads as the list of dicts it was made
from, writes the same results file, and every step that reads its columns decides what the per-dict code did."""

import copy
import json
import math
import random

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import aggregate
from ansible_collections.ibtune.fabric.plugins.module_utils.report import verdict
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join, localize, peer, resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as R
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import table as T

from . import test_join as TJ
from .test_join import varied_pass


def joined(seed):
    """A varied pass (test_join.varied_pass: missing, failed, doubled and unplanned sides, bad figures, pass 2) as
    the join writes it, bandwidth and latency results in one list."""
    out = []
    for test in ("write", "write_lat"):
        pairs, sides, rails_of, settings = varied_pass(seed, test)
        out += join.join_pass(pairs, sides, rails_of, settings)
    return out


def spoiled(seed):
    """joined() with what other producers send: keys missing or added, text for numbers, infinite and negative
    figures, a pass claimed without a figure, no verdict at all, a rail given as ''."""
    rnd = random.Random(seed)
    out = joined(seed)
    for res in out:
        roll = rnd.random()
        if roll < 0.05:
            res.pop(rnd.choice(["duration_s", "bw_peak_gbps", "failure", "server_port", "round"]), None)
        elif roll < 0.1:
            res[rnd.choice(["server_port", "round", "pass"])] = rnd.choice(["1", 1.0, True, None])
        elif roll < 0.13:
            res["bw_avg_gbps"] = rnd.choice([float("inf"), -2.0, "392", 10**400 / 10**399])
        elif roll < 0.16:
            res.update(passed=True, failure=None, failure_kind=None)
        elif roll < 0.18:
            res.pop("passed")
        elif roll < 0.2:
            res["rail"] = ""
        elif roll < 0.22:
            res["line_rate_gbps"] = rnd.choice([400.0, 100.0, None])
        elif roll < 0.24:
            res["note"] = rnd.choice(["x", None, 3])
    return out


def text(results):
    """JSON text of results: tells True from 1 and 0.0 from -0.0 (and NaN is NaN) where == does not."""
    return json.dumps(list(results), sort_keys=True)


SEEDS = range(20)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_table_reads_as_the_dicts_it_was_made_from_through_every_change(seed):
    rnd = random.Random(seed)
    dicts = spoiled(seed)
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    assert len(table) == len(dicts) and text(table) == text(dicts)
    for index in rnd.sample(range(len(dicts)), min(10, len(dicts))):
        res = table.promote(index)
        res["failure"] = "changed %d" % index
        res["extra_%d" % rnd.randrange(3)] = index
        dicts[index].update(res)
    values = [rnd.random() for _res in dicts]
    table.set_column("score", values)
    for res, value in zip(dicts, values):
        res["score"] = value
    assert text(table) == text(dicts)
    for key in ("server", "failure", "score", "extra_1", "absent"):
        assert table.column(key) == [res.get(key) for res in dicts]
    assert table[-1] == dicts[-1] and table[3:9] == dicts[3:9] and table == dicts
    kept = sorted(rnd.sample(range(len(dicts)), len(dicts) // 2))
    assert text(table.select(kept)) == text([dicts[i] for i in kept])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_results_file_written_from_a_table_is_the_file_written_from_its_dicts(tmp_path, monkeypatch, seed):
    """Byte for byte, with windows (TABLE_ROWS) that cut blocks and promoted results with keys of their own."""
    monkeypatch.setattr(resultfile, "TABLE_ROWS", random.Random(seed).choice([2, 3, 7, 50, 4096]))
    dicts = spoiled(seed)
    table = T.ResultTable.from_dicts(dicts)
    for index in range(0, len(dicts), 5):
        table.promote(index)["peer_median"] = 1.5
        dicts[index] = dict(dicts[index], peer_median=1.5)
    assert "".join(resultfile.results_chunks(table, True)) == "".join(resultfile.results_chunks(dicts, True))
    resultfile.write_results(str(tmp_path / "r.json"), dicts, compact=True)
    back = resultfile.read_table(str(tmp_path / "r.json"))  # blocks with the values their results share held once
    assert text(back) == text(dicts)
    # read back, changed (a key for all, a shared one, a result's own) and written again: the file of the dicts
    monkeypatch.setattr(resultfile, "TABLE_ROWS", random.Random(seed).choice([3, 4, 64]))
    back.set_const("regressed", False)
    back.set_column("baseline_gbps", [float(i % 3) for i in range(len(dicts))])
    for index in range(1, len(dicts), 7):
        back.promote(index)["failure"] = "again %d" % index
    for index, res in enumerate(dicts):
        res.update(regressed=False, baseline_gbps=float(index % 3))
        if index % 7 == 1:
            res["failure"] = "again %d" % index
    assert text(back) == text(dicts)
    assert "".join(resultfile.results_chunks(back, True)) == "".join(resultfile.results_chunks(dicts, True))


def test_an_item_that_is_not_a_pair_result_is_named_by_its_place_among_all_results(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"server": "a"}, 7]))
    with pytest.raises(resultfile.NotAPairResult, match=r"^results\[5\] must be a dict \(a pair result\), got 7$"):
        resultfile.read_table(str(path), offset=4)


@pytest.mark.parametrize("seed", SEEDS)
def test_normalising_a_table_decides_what_normalising_each_dict_does(seed):
    dicts = spoiled(seed)
    expected = R.normalize_results(copy.deepcopy(dicts))
    got = T.normalize_table(T.ResultTable.from_dicts(copy.deepcopy(dicts)))
    assert text(got) == text(expected)


def test_a_clean_block_is_taken_whole_and_one_bad_value_sends_it_the_slow_way():
    """block_clean is results._clean over columns: the join's results pass it, and each kind of bad value fails it
    (so the block is normalised a dict at a time, and gets what the dict path gives)."""
    hosts = ["n%d" % i for i in range(6)]
    rails_of = TJ.rails(hosts)
    planned = TJ.planned(hosts, rails_of)
    sides = [TJ.ok_side(s, 180.0 if s["host"] == "n2" else 392.0) for ss in TJ.sides_of(planned).values() for s in ss]
    good = join.join_pass(planned["pairs"], sides, rails_of, TJ.SETTINGS)
    assert good and all(R._clean(r, R._fetch(dict(r))) for r in good)  # pylint: disable=protected-access
    table = T.ResultTable.from_dicts(good)
    ((_keys, const, columns, count),) = table._blocks  # pylint: disable=protected-access
    assert not const and T.block_clean(const, columns, count)
    spoils = {
        "server": "",
        "server_device": "",
        "server_port": True,
        "round": 1.0,
        "test": "",
        "rail": None,
        "bw_avg_gbps": float("nan"),
        "bw_peak_gbps": -0.5,
        "threshold_gbps": float("inf"),
        "duration_s": 10,
        "kind": "latency",
        "passed": 1,
    }
    for key, value in spoils.items():
        bad = dict(columns, **{key: list(columns[key])})
        bad[key][-1] = value
        assert not T.block_clean({}, bad, count), key
        shared = dict((k, v[0]) for k, v in columns.items() if len(set(map(repr, v))) == 1)
        if key in shared:  # the same value held once for the block, as a results file's table item holds it
            varying = dict((k, v) for k, v in columns.items() if k not in shared)
            assert T.block_clean(shared, varying, count)
            assert not T.block_clean(dict(shared, **{key: value}), varying, count), key
    passed = [i for i, ok in enumerate(columns["passed"]) if ok]
    failed = [i for i, ok in enumerate(columns["passed"]) if not ok]
    for key, index, value in (
        ("failure", passed[0], "x"),
        ("bw_avg_gbps", passed[0], None),
        ("bw_avg_gbps", passed[0], columns["threshold_gbps"][passed[0]] - 1.0),
        ("failure_kind", failed[0], ""),
        ("failure", failed[0], None),
    ):
        bad = dict(columns, **{key: list(columns[key])})
        bad[key][index] = value
        assert not T.block_clean({}, bad, count), key
    rest = dict((k, v) for k, v in columns.items() if k != "line_rate_gbps")
    assert not T.block_clean({"line_rate_gbps": 100.0}, rest, count)  # 392 Gb/s measured on a 100 Gb/s port
    assert T.block_clean({"line_rate_gbps": 400.0}, rest, count)


def per_dict_by_host_rail(results):
    """by_host_rail as it was written over dicts (the spec of the column form)."""
    groups = {}
    for res in results:
        test = res.get("test")
        value = res.get("t_typical_us") if res.get("kind") == "latency" else res.get("bw_avg_gbps")
        for key in ((res["server"], res.get("server_device"), test), (res["client"], res.get("client_device"), test)):
            tally = groups.setdefault(key, [res.get("kind") or "bandwidth", 0, [], []])
            tally[1] += 1
            if not res.get("passed"):
                tally[2].append(res)
            if value is not None:
                tally[3].append(float(value))
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(p) for p in k)):
        kind, pairs, failing, values = groups[key]
        out.append(
            {
                "host": key[0],
                "device": key[1],
                "test": key[2],
                "kind": kind,
                "pairs": pairs,
                "failing": failing,
                "failed": len(failing),
                "worst": (max(values) if kind == "latency" else min(values)) if values else None,
                "median": aggregate._median(values),  # pylint: disable=protected-access
            }
        )
    return out


def columns_by_host_rail(results):
    """aggregate.by_host_rail as it was first written over columns (a dict of (host, device, test) lists filled a
    result at a time, server ends then client ends): the spec of the one filled in C."""
    servers, server_devices, clients, client_devices, tests, kinds, passed, bws, lats = T.columns_of(
        results, "server", "server_device", "client", "client_device", "test", "kind", "passed", "bw_avg_gbps",
        "t_typical_us",
    )  # fmt: skip
    figures = [lat if kind == "latency" else bw for kind, bw, lat in zip(kinds, bws, lats)]
    groups = {}
    for index in range(len(servers)):
        server_end = (servers[index], server_devices[index], tests[index])
        for key in (server_end, (clients[index], client_devices[index], tests[index])):
            groups.setdefault(key, [kinds[index] or "bandwidth", 0, [], []])[1] += 1
    for side in ((servers, server_devices), (clients, client_devices)):
        for key, value in zip(zip(side[0], side[1], tests), figures):
            if value is not None:
                groups[key][3].append(value)
    for index in T.failed_indices(passed):
        res = T.row_reader(results)(index)
        groups[(servers[index], server_devices[index], tests[index])][2].append(res)
        groups[(clients[index], client_devices[index], tests[index])][2].append(res)
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(p) for p in k)):
        kind, pairs, failing, values = groups[key]
        numbers = [float(v) for v in values]
        out.append(
            {"host": key[0], "device": key[1], "test": key[2], "kind": kind, "pairs": pairs, "failing": failing,
             "failed": len(failing), "median": aggregate._median(numbers),  # pylint: disable=protected-access
             "worst": (max(numbers) if kind == "latency" else min(numbers)) if numbers else None}
        )  # fmt: skip
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_by_host_rail_in_c_sums_up_what_the_loops_over_results_summed_up(seed):
    """by_host_rail (each end's group and its figures gathered in C) against the loop over columns it replaces and
    the per-dict spec: bandwidth and latency results, figures missing (None) or given as int, results without a kind,
    a second test on some results, failed results promoted (the peer gate) and changed by hand."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        roll = rnd.random()
        if roll < 0.1:
            res["kind"] = None
        elif roll < 0.2 and not res["passed"]:  # a failed result may have no figure
            res["bw_avg_gbps" if res["kind"] != "latency" else "t_typical_us"] = None
        elif roll < 0.25:
            res["test"] = "read"
        elif roll < 0.3 and res["kind"] == "latency":
            res["t_typical_us"] = rnd.choice([3, 2.5])
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    peer.peer_gate(table, 0.99)
    for index in rnd.sample(range(len(dicts)), min(5, len(dicts))):
        table.promote(index).update(passed=False, failure="by hand", failure_kind="below_threshold", bw_avg_gbps=None)
    rows = list(table)
    assert aggregate.by_host_rail(table) == columns_by_host_rail(table) == per_dict_by_host_rail(rows)
    assert aggregate.by_host_rail(rows) == columns_by_host_rail(rows)
    assert any(e["kind"] == "latency" for e in aggregate.by_host_rail(table))


def test_by_host_rail_takes_the_lowest_and_the_median_as_ever_when_a_figure_is_nan():
    """A NaN figure (a list of dicts not normalised) is not ordered by sorting: min and the median of the values
    in their order, as the loop over columns took them."""
    results = [
        {"server": "a", "client": "b", "test": "write", "kind": "bandwidth", "passed": True, "bw_avg_gbps": bw}
        for bw in (392.0, math.nan, 180.0, 390.0)
    ]
    assert text(aggregate.by_host_rail(results)) == text(columns_by_host_rail(results))  # NaN is not == NaN
    assert aggregate.by_host_rail(results)[0]["worst"] == 180.0


def per_dict_rails_measured(results):
    flags = {}
    for res in results:
        key = (res.get("kind") or "bandwidth", res.get("rail"))
        for host in (res["server"], res["client"]):
            if not flags.get((host, key)):
                flags[(host, key)] = res["passed"]
    out = {}
    for (host, key), passed in flags.items():
        out.setdefault(host, {})[key] = bool(passed)
    return out


def plane_state(planes):
    return dict(
        (key, (p.ok, p.bad, p.failed, p.retests, p.devices, p.roles, p.process, p.process_pairs))
        for key, p in planes.items()
    )


def planes_by_loop(results, exclude_hosts=()):
    """localize.build_planes as it was first written over columns (a passed first-pass result's ends added to each
    other's partners a result at a time): the spec of the one that groups the ends in C."""
    planes = {}
    columns = T.columns_of(
        results, "kind", "rail", "passed", "pass", "server", "client", "server_device", "client_device"
    )
    for index, (kind, rail, passed, pass_no, server, client, sdev, cdev) in enumerate(zip(*columns)):
        key = (kind or "bandwidth", rail)
        plane = planes.get(key)
        if plane is None:
            plane = planes[key] = localize.Plane(key)
        if passed and (pass_no or 1) == 1:
            for host, partner, device in ((server, client, sdev), (client, server, cdev)):
                if host not in plane.ok:
                    plane.ok[host] = set()
                    plane.devices[host] = device
                plane.ok[host].add(partner)
        elif server and client:
            res = T.row_reader(results)(index)
            if localize.implicates_link(res, exclude_hosts):
                plane.add(res)
    return planes


@pytest.mark.parametrize("seed", SEEDS)
def test_the_planes_grouped_in_c_are_the_planes_the_loop_over_results_built(seed):
    """build_planes against the loop it replaces: passed, failed and retested (pass 2, pass None) results, results
    without a kind, a host whose first result on a rail failed on another device than its first passed one (the
    passed one's device is the host's), clients on other devices than their servers, excluded hosts, promoted
    results; the planes in the order first met."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        roll = rnd.random()
        if roll < 0.1:
            res["kind"] = None
        elif roll < 0.15:
            res["pass"] = None
        elif roll < 0.25 and not res["passed"]:
            res["server_device"] = "other"
        elif roll < 0.5:
            res["client_device"] = "c%s" % res["client_device"]  # a client's device is not its server's
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    for index in rnd.sample(range(len(dicts)), min(4, len(dicts))):
        table.promote(index).update(passed=False, failure="by hand", failure_kind="below_threshold")
    for results in (table, list(table), [r for r in table if (r["pass"] or 1) == 1]):
        for exclude in ((), frozenset(["h1"])):
            got, spec = localize.build_planes(results, exclude), planes_by_loop(results, exclude)
            assert list(got) == list(spec) and plane_state(got) == plane_state(spec)
            assert all(list(p.retests) == list(spec[k].retests) for k, p in got.items())


@pytest.mark.parametrize("seed", SEEDS)
def test_the_steps_over_columns_decide_what_they_decided_over_dicts(seed):
    """by_host_rail, the planes localisation starts from, the rails each host had measured, the line rate and the
    peer gate, on a normalised table and on its dicts: the same answers (the per-dict forms of the first two are
    written out above as the spec), and a table's failed results are its own promoted dicts."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    assert text(T.normalize_table(T.ResultTable.from_dicts(copy.deepcopy(spoiled(seed))))) == text(dicts)
    for res in dicts:  # a result without a kind (read as bandwidth) among them
        if rnd.random() < 0.1:
            res["kind"] = None
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    for fraction in (0.9, 0.99):
        a, b = copy.deepcopy(dicts), T.ResultTable.from_dicts(copy.deepcopy(dicts))
        assert peer.peer_gate(a, fraction) == peer.peer_gate(b, fraction)
        assert text(a) == text(b)
    assert aggregate.by_host_rail(table) == per_dict_by_host_rail(dicts) == aggregate.by_host_rail(dicts)
    assert verdict._rails_measured(table) == per_dict_rails_measured(dicts)  # pylint: disable=protected-access
    assert list(verdict._rails_measured(table).items()) == list(per_dict_rails_measured(dicts).items())  # pylint: disable=protected-access
    assert plane_state(localize.build_planes(table, {"h1"})) == plane_state(localize.build_planes(dicts, {"h1"}))
    assert verdict.line_rate_of(table) == verdict.line_rate_of(dicts)
    failed = T.failed_rows(table)
    assert failed == [r for r in dicts if not r["passed"]]
    promoted = [table.promote(i) for i, ok in enumerate(table.column("passed")) if not ok]
    assert all(a is b for a, b in zip(T.failed_rows(table), promoted))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_rails_each_host_had_measured_in_c_are_the_per_dict_loops_in_its_order(seed):
    """verdict._rails_measured (each end's (host, kind, rail) grouped in C) against the per-dict loop: results without
    a kind, failed and promoted ones, a host passing on a rail only as a client; hosts and their planes in the order
    first met."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        if rnd.random() < 0.1:
            res["kind"] = None
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    for index in rnd.sample(range(len(dicts)), min(4, len(dicts))):
        table.promote(index).update(passed=not table[index]["passed"])
    spec = per_dict_rails_measured(list(table))
    for results in (table, list(table)):
        got = verdict._rails_measured(results)  # pylint: disable=protected-access
        assert [(h, list(v.items())) for h, v in got.items()] == [(h, list(v.items())) for h, v in spec.items()]


def peer_gate_by_loop(results, fraction):
    """peer.peer_gate as it was first written over columns (each result's group a tuple, the values gathered a
    result at a time): the spec of the one that gathers them in C."""
    passes, kinds, tests, rails, bws, lats, failure_kinds, passed = T.columns_of(
        results, "pass", "kind", "test", "rail", "bw_avg_gbps", "t_typical_us", "failure_kind", "passed"
    )
    figures = [lat if kind == "latency" else bw for kind, bw, lat in zip(kinds, bws, lats)]
    planes = list(zip(kinds, tests, rails))
    groups, retests = {}, []
    for index, (pass_no, key, value, failure_kind, ok) in enumerate(
        zip(passes, planes, figures, failure_kinds, passed)
    ):
        if pass_no != 1:
            retests.append(index)
        elif value is not None and failure_kind != "invalid":
            group = groups.setdefault(key, [[], None])
            group[0].append(value)
            if ok and (group[1] is None or peer._worse(key[0], value, group[1])):  # pylint: disable=protected-access
                group[1] = value
    stats, suspicious = peer._bounds(groups, fraction)  # pylint: disable=protected-access
    read, change = T.row_reader(results), T.row_changer(results)
    failed = 0
    for index, (pass_no, key, value, ok) in enumerate(zip(passes, planes, figures, passed)):
        bound = suspicious.get(key)
        if pass_no == 1 and ok and bound is not None and peer._worse(key[0], value, bound):  # pylint: disable=protected-access
            failed += peer._peer_check(read, change, index, stats[key][0], None, fraction)  # pylint: disable=protected-access
    for index in retests:
        entry = stats.get(planes[index])
        if entry is not None:
            failed += peer._peer_check(read, change, index, entry[0], entry[1], fraction)  # pylint: disable=protected-access
    return failed


@pytest.mark.parametrize("seed", SEEDS)
def test_the_peer_gate_in_c_fails_what_the_loop_over_results_failed(seed):
    """peer_gate (groups numbered and their values gathered in C) against the loop it replaces, at two fractions:
    figures spread so that some pass their threshold and not their peers, bandwidth and latency, retests (pass 2),
    invalid and missing figures, a second test, a passed result promoted; a table of one test and rail (the groups
    told apart by no column) and of first-pass results only (no retest flags)."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        if res["passed"] and res["kind"] == "bandwidth":
            res["bw_avg_gbps"] = rnd.choice([392.0, 391.0, 380.0, 370.0, 361.0])
        elif res["passed"] and res["kind"] == "latency" and res.get("t_typical_us") is not None:
            res["t_typical_us"] = rnd.choice([2.0, 2.1, 2.5, 2.9])
        if rnd.random() < 0.1:
            res["test"] = "read"
    many = [dict(dicts[0], server="s%d" % i, bw_avg_gbps=float(360 + i % 40)) for i in range(30)] if dicts else []
    for data in (dicts, [r for r in dicts if r["pass"] == 1], many):
        for fraction in (0.9, 0.99, 0.0):
            table = T.ResultTable.from_dicts(copy.deepcopy(data))
            if len(table) > 3:
                table.promote(2)
            spec = T.ResultTable.from_dicts(copy.deepcopy(list(table)))
            assert peer.peer_gate(table, fraction) == (peer_gate_by_loop(spec, fraction) if fraction else 0)
            assert text(table) == text(spec)
            rows = copy.deepcopy(data)
            assert peer.peer_gate(rows, fraction) == (
                peer_gate_by_loop(copy.deepcopy(data), fraction) if fraction else 0
            )


@pytest.mark.parametrize("seed", SEEDS)
def test_groups_are_numbered_by_their_first_result_as_a_dict_of_tuples_numbers_them(seed):
    """group_numbers and end_groups against a dict filled a result at a time: no column varying, one, several
    (values that are == across types fall in one group, as in a dict), and no result at all."""
    rnd = random.Random(seed)
    size = rnd.randrange(0, 30)
    kinds = [rnd.choice(["bandwidth", "latency"]) for _i in range(size)]
    tests = ["write"] * size
    rails = [rnd.choice(["r0", "r1", 1, 1.0, True]) for _i in range(size)]
    for columns in ((tests,), (tests, rails), (kinds, tests, rails), (rails, kinds)):
        spec = {}
        numbers = [spec.setdefault(key, index) for index, key in enumerate(zip(*columns))]
        keys, got = T.group_numbers(*columns)
        assert got == numbers and list(keys.items()) == list(spec.items())
    ends = {}
    spec = [ends.setdefault(key, number) for number, key in enumerate(x for pair in zip(kinds, rails) for x in pair)]
    assert T.end_groups(kinds, rails) == (ends, spec)


@pytest.mark.parametrize("seed", SEEDS)
def test_links_ordered_in_a_comprehension_are_the_links_min_and_max_made(seed):
    """links against the maps over min and max it replaces: ends without a device, equal ends (a host with itself),
    ends that order either way, one end's text a prefix of the other's."""
    rnd = random.Random(seed)
    size = rnd.randrange(0, 40)
    ends = [(rnd.choice(["a", "b", "ab", "b0"]), rnd.choice([None, "", "mlx5_0", "mlx5_1"])) for _i in range(2 * size)]
    server, server_device = [e[0] for e in ends[:size]], [e[1] for e in ends[:size]]
    client, client_device = [e[0] for e in ends[size:]], [e[1] for e in ends[size:]]
    first = [R.link_end(h, d) for h, d in zip(server, server_device)]
    second = [R.link_end(h, d) for h, d in zip(client, client_device)]
    spec = [min(a, b) + "<->" + max(a, b) for a, b in zip(first, second)]
    assert T.links(server, server_device, client, client_device) == spec


def rates_ok_by_loop(bw, rate):
    """table._rates_ok's check as it was first written (a figure and its rate at a time): the spec."""
    if set(rate) == {None}:
        return True
    if not set(map(type, rate)) <= {float, type(None)}:
        return False
    return all(r is None or v is None or v <= r * (1.0 + R.LINE_RATE_MARGIN) for v, r in zip(bw, rate))


def failures_ok_by_loop(passed, failure, failure_kind):
    """The failed results' half of table._verdicts_ok as it was first written (a result at a time): the spec."""
    for ok, text, kind in zip(passed, failure, failure_kind):
        if not ok and (text.__class__ is not str or text == "" or kind.__class__ is not str or kind == ""):
            return False
    return True


@pytest.mark.parametrize("seed", range(200))
def test_a_blocks_rates_and_failures_checked_in_c_are_what_the_loops_checked(seed):
    """_rates_ok (one rate for the block, NaN, -0.0, several rates, none) and the failed results' sentences and
    kinds of _verdicts_ok (missing, empty, not text) against the loops they replace; a shared rate and threshold
    given once (None, NaN, zeros) as given for every result."""
    rnd = random.Random(seed)
    size = rnd.randrange(1, 12)
    rates = rnd.choice([[400.0], [400.0, 200.0], [None], [None, 400.0], [math.nan], [-0.0], [400]])
    bw = [rnd.choice([None, 392.0, 410.0, 450.0, 180.0, math.nan, 0.0]) for _i in range(size)]
    rate = [rnd.choice(rates) for _i in range(size)]
    assert T._rates_ok(bw, rate) == rates_ok_by_loop(bw, rate)  # pylint: disable=protected-access
    passed = [rnd.random() < 0.5 for _i in range(size)]
    failure = [None if ok else rnd.choice(["slow", "", None, 3]) for ok in passed]
    failure_kind = [None if ok else rnd.choice(["below_threshold", "", None]) for ok in passed]
    figures, limits = [392.0] * size, [360.0] * size
    verdicts = T._verdicts_ok(passed, failure, failure_kind, figures, limits)  # pylint: disable=protected-access
    assert verdicts == failures_ok_by_loop(passed, failure, failure_kind)
    # a block's shared rate and threshold given once (a list of one): as given for every result
    shared = rnd.choice(rates)
    assert T._rates_ok(bw, [shared]) == rates_ok_by_loop(bw, [shared] * size)  # pylint: disable=protected-access
    gate = rnd.choice([360.0, 392.0, 400.0, None, math.nan, 0.0, -0.0])
    figures = [rnd.choice([None, 392.0, 359.9, 0.0, -1.0, math.nan]) for _i in range(size)]
    failure = [None if ok else "slow" for ok in passed]
    failure_kind = [None if ok else "below_threshold" for ok in passed]
    columns = (passed, failure, failure_kind, figures)
    assert T._verdicts_ok(*columns, [gate]) == T._verdicts_ok(*columns, [gate] * size)  # pylint: disable=protected-access


def test_links_are_the_dict_paths_links_and_a_nan_never_counts_as_a_clean_figure():
    ends = (["b", "a", "a"], ["mlx5_0", None, "mlx5_1"], ["a", "b", "a"], ["mlx5_1", "mlx5_0", "mlx5_0"])
    assert T.links(*ends) == ["a/mlx5_1<->b/mlx5_0", "a<->b/mlx5_0", "a/mlx5_0<->a/mlx5_1"]
    assert not T._floats_ok([1.0, math.nan]) and not T._floats_ok([math.inf])  # pylint: disable=protected-access
    assert T._floats_ok([None, 0.0, 2.5]) and not T._floats_ok([1])  # pylint: disable=protected-access


def _end_key_columns(results):
    return T.columns_of(results, "server", "server_device", "client", "client_device", "kind", "rail", "test")


def ends_grouped_by_hand(results, key):
    """table.grouped_ends as end_groups over each end's projected key (a tuple per end): the spec."""
    servers, server_devices, clients, client_devices, kinds, rails, tests = _end_key_columns(results)
    return T.end_groups(
        [key(*k) for k in zip(servers, server_devices, kinds, rails, tests)],
        [key(*k) for k in zip(clients, client_devices, kinds, rails, tests)],
    )


KEYS = (
    lambda host, device, kind, rail, test: (host, device, test),
    lambda host, device, kind, rail, test: (host, kind or "bandwidth", rail),
    lambda host, device, kind, rail, test: (kind or "bandwidth", rail, host),
    lambda host, device, kind, rail, test: host,
    lambda host, device, kind, rail, test: (host, device, kind, rail, test),
)


@pytest.mark.parametrize("seed", SEEDS)
def test_ends_grouped_once_and_merged_are_the_ends_grouped_by_each_key(seed):
    """grouped_ends (the table's ends grouped once, host_ends, then merged by a key) against end_groups over that
    key, on a table and on its dicts: keys that merge no group (the same numbers, the same list) and keys that merge
    several (a second device, test or kind for a host on a rail, kinds None and 'bandwidth')."""
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        roll = rnd.random()
        if roll < 0.1:
            res["kind"] = None
        elif roll < 0.2:
            res["test"] = "read"
        elif roll < 0.3:
            res["client_device"] = "c%s" % res["client_device"]
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    for key in KEYS:
        spec = ends_grouped_by_hand(dicts, key)
        for results in (table, dicts):
            first, ends = T.grouped_ends(results, key)
            assert (first, ends) == spec and list(first.items()) == list(spec[0].items())
    assert T.grouped_ends(table, KEYS[-1])[1] is table.host_ends()[1]  # nothing merged: the table's own list


def test_the_ends_a_table_grouped_are_kept_until_a_change_could_alter_them():
    """host_ends is made once and kept through promoting results and setting columns it does not read; made again
    after a result or block is added, a column of its keys set, or a promoted result's end changed by hand (found
    when asked). Each time the same as made anew for the same results."""
    dicts = R.normalize_results(copy.deepcopy(joined(3)))
    table = T.ResultTable.from_dicts(copy.deepcopy(dicts))
    kept = table.host_ends()
    assert kept == T.host_ends(list(table)) and table.host_ends() is kept
    table.promote(5)["passed"] = False
    table.set_column("score", list(range(len(table))))
    table.set_const("note", "x")
    assert table.host_ends() is kept
    changes = (
        lambda t: t.promote(7).update(server="elsewhere"),
        lambda t: t.promote(5).update(client_device="mlx5_9"),
        lambda t: t.set_column("rail", ["r%d" % (i % 3) for i in range(len(t))]),
        lambda t: t.set_const("test", "read"),
        lambda t: t.add_dict(dict(t[-1], server="new")),  # into the last block, or a new one
        lambda t: t.extend(T.ResultTable.from_dicts([dict(dicts[1], client="other")])),
        T.normalize_table,
    )
    for change in changes:
        for changed in (table, T.ResultTable.from_dicts(copy.deepcopy(dicts))):  # a table with no result promoted
            before = changed.host_ends()
            change(changed)
            after = changed.host_ends()
            assert after == T.host_ends(list(changed)) and changed.host_ends() is after
            assert after is not before
    after = table.host_ends()
    table.promote(9)
    assert table.host_ends() is after  # promoted as it was: nothing to group again


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("searched", [0, 10**6])
@pytest.mark.parametrize("devices", ["one", "two"])
def test_pass_one_partners_from_the_shared_ends_are_the_loops_partners(seed, searched, devices, monkeypatch):
    """build_planes on the ends the table grouped once (one device per host and rail: no group merged) or, when a
    host has two devices on a rail, on its own grouping: the planes the loop built, the first selected end of each
    group found by searching (list.index) or by one pass over the selected ends, every result selected or not."""
    monkeypatch.setattr(localize, "SEARCHED", searched)
    rnd = random.Random(seed)
    dicts = R.normalize_results(copy.deepcopy(spoiled(seed)))
    for res in dicts:
        if rnd.random() < 0.1:
            res["kind"] = None
        if devices == "two" and rnd.random() < 0.3:
            res["client_device"] = "c%s" % res["client_device"]
    passing = [dict(r, passed=True, failure=None, failure_kind=None, **{"pass": 1}) for r in dicts]
    for data in (dicts, passing):
        table = T.ResultTable.from_dicts(copy.deepcopy(data))
        for index in rnd.sample(range(len(data)), min(3, len(data))):
            table.promote(index).update(passed=False, failure="by hand", failure_kind="below_threshold")
        for results in (table, list(table)):
            got, spec = localize.build_planes(results), planes_by_loop(results)
            assert list(got) == list(spec) and plane_state(got) == plane_state(spec)
            assert [list(p.ok) for p in got.values()] == [list(p.ok) for p in spec.values()]
