"""Joining server and client sides into pair results: root causes, absence, and the one gate."""

import re

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import gate
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.sidefiles import slice_sides


def sides_of(planned_pass):
    """{host: [side]}: the sides each host's slice makes (sidefiles.slice_sides, as the runner and the task do)."""
    return dict((h, slice_sides(doc)) for h, doc in planned_pass["slices"].items())


def rails(hosts, rate=400.0, rates=None):
    rates = rates or {}
    return dict(
        (
            h,
            [
                {"rail": n, "device": n.split(":", maxsplit=1)[0], "port": 1, "rate_gbps": rates.get((h, n), rate)}
                for n in ("mlx5_0:1", "mlx5_1:1")
            ],
        )
        for h in hosts
    )


def ok_side(side, bw=392.0):
    out = dict(side, failure_kind=None, failure=None, rc=0)
    if side["role"] == "client":
        out["bw_avg_gbps"] = bw
    return out


def planned(hosts, rails_by_host):
    return plan.plan_pass(hosts, rails_by_host, dict((h, h) for h in hosts))


SETTINGS = {"test": "write", "duration": 10, "min_link_fraction": 0.9}


def test_every_planned_pair_and_rail_gets_a_result_and_healthy_ones_pass():
    hosts = ["n1", "n2", "n3", "n4"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = [ok_side(s) for ss in sides_of(p).values() for s in ss]
    results = join.join_pass(p["pairs"], sides, r, SETTINGS)
    assert len(results) == 6 * 2
    assert all(x["passed"] and x["threshold_gbps"] == 360.0 and x["failure_kind"] is None for x in results)
    assert {x["rail"] for x in results} == {"mlx5_0:1", "mlx5_1:1"}


def test_a_side_that_never_came_back_is_a_failure_not_a_gap():
    hosts = ["n1", "n2"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = [ok_side(s) for s in sides_of(p)["n1"]]  # n2's schedule never returned
    results = join.join_pass(p["pairs"], sides, r, SETTINGS)
    assert len(results) == 2
    assert all(not x["passed"] for x in results)
    assert {x["failure_kind"] for x in results} <= {"no_result", "server_failed"}


def test_server_root_cause_wins_over_the_clients_connect_failure():
    server = {"role": "server", "failure_kind": "no_device", "failure": "perftest found no RDMA device"}
    client = {"role": "client", "failure_kind": "connect", "failure": "could not connect"}
    kind, text = join.root_cause(server, client)
    assert kind == "no_device" and text.startswith("server side: perftest found no RDMA device")


def test_down_trained_port_fails_from_either_side():
    """A 2X port (200 Gb/s) measuring 196 fails whether it serves or is the client: the gate uses the
    higher end's rate, not the client's current rate."""
    hosts = ["good", "bad"]
    r = rails(hosts, rates={("bad", "mlx5_0:1"): 200.0})
    for rounds in ([[["good", "bad"]]], [[["bad", "good"]]]):
        sliced = plan.slice_pass(rounds, r, {"good": "good", "bad": "bad"})
        sides = [
            ok_side(s, bw=196.0 if s["rail"] == "mlx5_0:1" else 392.0) for ss in sides_of(sliced).values() for s in ss
        ]
        results = join.join_pass(sliced["pairs"], sides, r, SETTINGS)
        bad = [x for x in results if x["rail"] == "mlx5_0:1"][0]
        assert not bad["passed"] and bad["failure_kind"] == "below_threshold" and bad["threshold_gbps"] == 360.0


def test_inventory_expected_rate_is_the_gate_base_when_given():
    threshold = gate.bandwidth_threshold(
        min_link_fraction=0.9, expect_rate_gbps=400, server_rate_gbps=200, client_rate_gbps=200
    )
    assert threshold["threshold_gbps"] == 360.0 and "expected" in threshold["basis"]


@pytest.mark.parametrize("value", [float("nan"), -5.0, None, float("inf")])
def test_nan_negative_or_missing_bandwidth_never_passes(value):
    passed, kind, _text = gate.judge_bandwidth(value, {"threshold_gbps": None})
    assert not passed and kind == "invalid"


def test_thresholds_are_checked_before_anything_runs():
    assert "above the 400 Gb/s line rate" in gate.check_thresholds(min_gbps=500, line_rate_gbps=400)[0]
    assert gate.check_thresholds(min_gbps=500, line_rate_gbps=400, bidirectional=True) == []
    assert "finite" in gate.check_thresholds(min_gbps=-1)[0]
    assert gate.check_thresholds(min_link_fraction=1.2)


def test_latency_results_are_gated_on_typical_and_p99():
    hosts = ["a", "b"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = []
    for ss in sides_of(p).values():
        for s in ss:
            out = dict(s, failure_kind=None, failure=None)
            if s["role"] == "client":
                out.update(t_typical_us=9.0 if s["rail"] == "mlx5_1:1" else 1.9, p99_us=2.5)
            sides.append(out)
    results = join.join_pass(p["pairs"], sides, r, {"test": "write_lat", "max_typical_us": 3})
    by_rail = dict((x["rail"], x) for x in results)
    assert by_rail["mlx5_0:1"]["passed"] and by_rail["mlx5_0:1"]["kind"] == "latency"
    assert (
        by_rail["mlx5_1:1"]["failure_kind"] == "above_threshold" and "9.00 us > 3 us" in by_rail["mlx5_1:1"]["failure"]
    )


def test_summary_counts_failure_kinds():
    results = [
        {"passed": True, "failure_kind": None},
        {"passed": False, "failure_kind": "connect"},
        {"passed": False, "failure_kind": "connect"},
    ]
    assert join.summary(results) == {"results": 3, "failed": 2, "failure_kinds": {"connect": 2}}


def latency_sides(p, client_figures):
    """Every side of the plan ok; each client side carries client_figures(rail)."""
    sides = []
    for ss in sides_of(p).values():
        for s in ss:
            out = dict(s, failure_kind=None, failure=None)
            if s["role"] == "client":
                out.update(client_figures(s["rail"]))
            sides.append(out)
    return sides


def test_a_p99_ceiling_the_tool_printed_no_p99_for_fails_the_pair_as_ungated():
    # issue 20 part 4: max_p99_us set, the tool printed a typical but no p99 on mlx5_1: never a silent pass
    hosts = ["a", "b"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = latency_sides(p, lambda rail: {"t_typical_us": 1.9, "p99_us": None if rail == "mlx5_1:1" else 2.5})
    results = join.join_pass(p["pairs"], sides, r, {"test": "write_lat", "max_typical_us": 3, "max_p99_us": 5})
    by_rail = dict((x["rail"], x) for x in results)
    assert by_rail["mlx5_0:1"]["passed"] and by_rail["mlx5_0:1"]["failure_kind"] is None
    ungated = by_rail["mlx5_1:1"]
    assert not ungated["passed"] and ungated["failure_kind"] == "ungated"
    assert ungated["failure"].startswith("max_p99_us is 5 us but the latency tool printed no p99 for this pair")
    # without the ceiling the same figures pass: the gate that could not apply is the reason, nothing else
    results = join.join_pass(p["pairs"], sides, r, {"test": "write_lat", "max_typical_us": 3})
    assert all(x["passed"] for x in results)


def test_the_latency_figure_gated_is_typical_where_printed_else_the_average():
    hosts = ["a", "b"]
    r = rails(hosts)
    p = planned(hosts, r)
    # mlx5_0: typical printed (and an average that would fail); mlx5_1: only an average (send_lat -D style)
    figures = {"mlx5_0:1": {"t_typical_us": 1.9, "t_avg_us": 4.0}, "mlx5_1:1": {"t_avg_us": 4.0}}
    sides = latency_sides(p, lambda rail: figures[rail])
    results = join.join_pass(p["pairs"], sides, r, {"test": "write_lat", "max_typical_us": 3})
    by_rail = dict((x["rail"], x) for x in results)
    assert (by_rail["mlx5_0:1"]["latency_basis"], by_rail["mlx5_0:1"]["passed"]) == ("t_typical", True)
    avg = by_rail["mlx5_1:1"]
    assert (avg["latency_basis"], avg["t_typical_us"], avg["failure_kind"]) == ("t_avg", 4.0, "above_threshold")


def test_a_healthy_result_as_the_join_writes_it_is_already_what_the_report_normalises_it_to():
    """fabric_join's duration is an int; written as one, every result of a pass missed the normaliser's fast path
    (results._clean) and took the slow one: 3.3 instead of 1.2 us a result."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as results_utils

    hosts = ["n1", "n2"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = [ok_side(s) for ss in sides_of(p).values() for s in ss]
    for res in join.join_pass(p["pairs"], sides, r, dict(SETTINGS, duration=10)):
        assert res["duration_s"] == 10.0 and isinstance(res["duration_s"], float)
        assert results_utils._clean(res, results_utils._fetch(res))  # pylint: disable=protected-access
        assert results_utils.normalize_result(dict(res), 0) == dict(res, link=results_utils._link_of(res))  # pylint: disable=protected-access


def varied_pass(seed, test):
    """A pass with everything that can go wrong: sides missing, failed (with and without a sentence), doubled and
    unplanned; figures missing, NaN or negative; rails without a device, a port or a rate; pairs of pass 2."""
    import random

    rnd = random.Random(seed)
    hosts = ["h%d" % i for i in range(rnd.randint(2, 6))]
    rails_of = dict(
        (
            h,
            [
                dict(
                    {
                        "rail": "mlx5_%d:1" % r,
                        "device": rnd.choice(["mlx5_%d" % r, None]),
                        "port": rnd.choice([1, None]),
                    },
                    **({} if rnd.random() < 0.2 else {"rate_gbps": rnd.choice([400.0, 200.0, 400, None])}),
                )
                for r in range(3)
                if rnd.random() > 0.1
            ],
        )
        for h in hosts
    )
    pairs, sides = [], []
    for number, (a, b) in enumerate(((a, b) for i, a in enumerate(hosts) for b in hosts[i + 1 :]), 1):
        pair = {"round": number, "server": a, "client": b, "rails": ["mlx5_%d:1" % r for r in range(3)]}
        if rnd.random() < 0.3:
            pair["pass"] = 2
        pairs.append(pair)
        for rail in pair["rails"]:
            for role, host, peer in (("server", a, b), ("client", b, a)):
                if rnd.random() < 0.05:
                    continue
                s = {
                    "round": number,
                    "role": role,
                    "host": host,
                    "peer": peer,
                    "rail": rail,
                    "device": rail[:6],
                    "port": 1,
                }
                s.update({"pass": pair["pass"]} if "pass" in pair else {})
                if rnd.random() < 0.1:
                    s.update(
                        failure_kind=rnd.choice(["connect", "port_busy", "no_device"]), failure=rnd.choice([None, "x"])
                    )
                if role == "client":
                    s.update(bw_avg_gbps=rnd.choice([392.0, 180.0, None, -1.0, float("nan")]), bw_peak_gbps=0.0)
                    s.update((k, rnd.choice([1.5, 9.0, None])) for k in ("t_typical_us", "t_avg_us", "p99_us"))
                sides.append(s)
                if rnd.random() < 0.03:
                    sides.append(dict(s))
    sides.append({"round": 99, "role": "client", "host": hosts[0], "peer": hosts[-1], "rail": "mlx5_0:1"})
    settings = dict(
        SETTINGS, test=test, bidirectional=rnd.choice([True, False]), max_typical_us=rnd.choice([None, 2.0])
    )
    return pairs, sides, rails_of, settings


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("test", ["write", "write_lat"])
def test_sides_read_from_side_files_join_exactly_as_the_same_sides_given_as_dicts(tmp_path, monkeypatch, seed, test):
    """The side files are indexed column by column from their table items (no dict per side): a runner's round
    (one role, peer and round, a row per rail) on its fast path, any other table row by row. Both give what the
    same sides given one dict each give: the same results, failures and refused sides."""
    import json

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile, sidefiles

    pairs, sides, rails_of, settings = varied_pass(seed, test)
    expected, refused = join.join_checked(pairs, sides, rails_of, settings)
    by_host = {}
    for s in sides:
        by_host.setdefault(s["host"], {}).setdefault(s["round"], []).append(s)
    for host, rounds in by_host.items():  # as runners write them: a round's sides appended at once
        with open(str(tmp_path / (host + sidefiles.SIDES_SUFFIX)), "w") as handle:
            handle.write("".join(sidefiles.side_lines(rounds[r]) for r in sorted(rounds)))
    assert '"ibtune_table"' in "".join(p.read_text() for p in tmp_path.iterdir())
    files = sidefiles.iter_side_items(str(tmp_path))
    got, refused_got = join.join_checked(pairs, [], rails_of, settings, side_files=files)
    assert json.dumps(got) == json.dumps(expected) and refused_got == refused
    for compact_above in (resultfile.COMPACT_ABOVE, 0):  # the plain file, and the table form
        monkeypatch.setattr(resultfile, "COMPACT_ABOVE", compact_above)
        dest = tmp_path / ("results-%d.json" % compact_above)
        counts, failed, refused_written = join.join_written(
            pairs, [], rails_of, settings, str(dest), side_files=sidefiles.iter_side_items(str(tmp_path))
        )
        assert ('"ibtune_table"' in dest.read_text()) == (compact_above == 0)
        # read back with its keys in file order: compared as JSON text with sorted keys (which tells True from 1)
        assert json.dumps(resultfile.read_results(str(dest)), sort_keys=True) == json.dumps(expected, sort_keys=True)
        assert counts == join.summary(expected)
        assert json.dumps(failed) == json.dumps([r for r in expected if not r["passed"]])
        assert refused_written == refused


def cut_rounds(rnd, sides):
    """(sides given as dicts, chunks written as lines): each host's round shuffled or in rail order, cut in one to
    three chunks, a rail sometimes twice in a chunk, a chunk sometimes written twice or given among the dicts."""
    rounds = {}
    for s in sides:
        rounds.setdefault((s["host"], s["round"]), []).append(s)
    as_dicts, chunks = [], []
    for group in rounds.values():
        if rnd.random() < 0.5:
            rnd.shuffle(group)  # else in rail order, as a runner writes a round
        while group:
            cut = rnd.randint(1, len(group)) if rnd.random() < 0.5 else len(group)
            chunk, group = group[:cut], group[cut:]
            if rnd.random() < 0.05:
                chunk.append(dict(rnd.choice(chunk)))  # a rail twice in one line
            if rnd.random() < 0.15:
                as_dicts.extend(chunk)  # given as the module's arguments: indexed first
                continue
            chunks.append(chunk)
            if rnd.random() < 0.1:
                chunks.append(chunk)  # the same line written twice
    rnd.shuffle(chunks)
    return as_dicts, chunks


def write_chunks(directory, chunks, whole=False):
    """The chunks spread over three side files (sidefiles.side_lines; ``whole``: each file written whole,
    sidefiles.whole_lines, as a runner that finished leaves it); returns the sides in the order they are read back
    (files by name, lines in order)."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    files, read_order = {}, []
    for number, chunk in enumerate(chunks):
        files.setdefault("f%d" % (number % 3), []).append(chunk)
    for name in sorted(files):
        in_file = [s for chunk in files[name] for s in chunk]
        with open(str(directory / (name + sidefiles.SIDES_SUFFIX)), "w") as handle:
            if whole:
                handle.write(sidefiles.whole_lines(in_file))
            else:
                handle.write("".join(sidefiles.side_lines(chunk) for chunk in files[name]))
        read_order += in_file
    return read_order


def counted_item_rounds(monkeypatch):
    """join._item_rounds counted: whether it cut each table item it was given into rounds (a list)."""
    taken = []
    item_rounds = join._item_rounds  # pylint: disable=protected-access

    def counted(index, const, columns, count):
        made = item_rounds(index, const, columns, count)
        taken.append(made is not None)
        return made

    monkeypatch.setattr(join, "_item_rounds", counted)
    return taken


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("form", ["lines", "whole"])
def test_rounds_indexed_as_lines_join_exactly_as_their_sides_one_by_one(tmp_path, monkeypatch, seed, form):
    """A runner's round (one role, peer and round, a row per rail) is indexed as one line, not a side per rail
    (join.SideIndex). Whatever else comes for the same pair (a side by itself, the round's rails split over two
    lines, a line written twice, rails the plan does not hold, a side among the dicts), the results, the refused
    sides and the index are those of the same sides given one dict each, in the order they were read. ``whole``:
    each file written whole (a few table items whose rows name their rounds, both roles' rounds in one item where
    they share their keys), its runs of rows cut back into rounds (join._item_rounds)."""
    import json
    import random

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    taken = counted_item_rounds(monkeypatch)
    rnd = random.Random(seed)
    pairs, sides, rails_of, settings = varied_pass(seed, rnd.choice(["write", "write_lat"]))
    for pair in pairs:  # a retest limited to some rails leaves the others' sides to be refused
        if rnd.random() < 0.2:
            pair["rails"] = pair["rails"][1:]
        elif rnd.random() < 0.05:
            pair["rails"] = pair["rails"] + pair["rails"][-1:]  # a rail planned twice: no_result the second time
    as_dicts, chunks = cut_rounds(rnd, sides)
    read_order = write_chunks(tmp_path, chunks, whole=form == "whole")

    def files_read():
        return sidefiles.iter_side_items(str(tmp_path))

    assert any("ibtune_table" in item for _p, items in files_read() for item in items)  # lines to index as such
    expected = join.join_checked(pairs, as_dicts + read_order, rails_of, settings)
    got = join.join_checked(pairs, as_dicts, rails_of, settings, side_files=files_read())
    assert json.dumps(got) == json.dumps(expected)
    duplicates, duplicates_got = [], []
    index = join.index_sides(as_dicts + read_order, duplicates)
    index_got = join.index_sides(as_dicts, duplicates_got, side_files=files_read())
    assert repr(sorted(index_got.items())) == repr(sorted(index.items()))  # repr: a NaN figure equals no other
    assert sorted(duplicates) == sorted(duplicates_got)
    # every table item whose rows name their rounds (a file written whole) was cut into rounds
    naming = [item for _p, items in files_read() for item in items if "round" in item.get("columns", ())]
    assert taken == [True] * len(naming) * 2 and (form == "whole" or not naming)  # read twice: join, index


FIGURES = [392.0, 392.5, 180.0, 391.25]
ODD_FIGURES = [392, None, float("nan"), -0.0, 0.0, -1.0, -1, "392"]


def mostly_clean_pass(seed, hosts=(3, 8), twice=0.02):
    """(pairs, sides, rails, settings) of a pass whose rounds mostly came back whole and clean, as a runner writes
    them (a round's sides at once, their figures shared or as a column), with now and then what sends a pair or a
    whole side file another way: a failed rail, a figure that is an int, None, NaN, -0.0 or 0.0, a rail the plan
    gives no device or another rate, a round planned on fewer rails, a round written twice, a side missing; and
    (blocks of pairs made at once, join._Block) a host on another rate, so that a block's pairs have two gates, a pair
    planned twice, pass 0 or None, a round written in another rail order, a whole round at -1.0. ``hosts``: how
    many (at least, at most); ``twice``: how often a round is written twice."""
    import random

    rnd = random.Random(seed)
    hosts = ["h%02d" % i for i in range(rnd.randint(*hosts))]
    names = ["mlx5_%d:1" % r for r in range(4)]
    rails_of = dict((h, [{"rail": n, "device": n[:6], "port": 1, "rate_gbps": 400.0} for n in names]) for h in hosts)
    for h in hosts:
        if rnd.random() < 0.1:
            rails_of[h][rnd.randrange(4)][rnd.choice(["device", "port"])] = None
        if rnd.random() < 0.1:
            rails_of[h][rnd.randrange(4)]["rate_gbps"] = rnd.choice([200.0, 400, None])
        if rnd.random() < 0.15:
            for rail in rails_of[h]:  # the whole host on another rate: another gate for its pairs
                rail["rate_gbps"] = 200.0
    pairs, sides = [], []
    for number, (a, b) in enumerate(((a, b) for i, a in enumerate(hosts) for b in hosts[i + 1 :]), 1):
        pair = {"round": number, "server": a, "client": b, "rails": names if rnd.random() > 0.05 else names[:2]}
        if rnd.random() < 0.1:
            pair["pass"] = rnd.choice([1, 2, 0, None])
        pairs.append(pair)
        if rnd.random() < 0.03:
            pairs.append(dict(pair))  # planned twice: no_result the second time
        sides += round_sides(rnd, pair, twice)
    return pairs, sides, rails_of, dict(SETTINGS, bidirectional=rnd.choice([True, False]))


def round_sides(rnd, pair, twice):
    """The sides of a pair's two rounds (mostly_clean_pass)."""
    out = []
    same = rnd.choice(FIGURES) if rnd.random() > 0.03 else -1.0
    for role, host, peer in (("server", pair["server"], pair["client"]), ("client", pair["client"], pair["server"])):
        if rnd.random() < 0.02:
            continue  # the round never came back
        order = list(pair["rails"])
        if rnd.random() < 0.03:
            order.reverse()  # written in another rail order than the plan's
        for rail in order:
            side = {"round": pair["round"], "role": role, "host": host, "peer": peer, "rail": rail, "device": rail[:6]}
            side.update(port=1, failure_kind=None, failure=None, rc=0, elapsed_s=10.4, test="write")
            side.update({"pass": pair["pass"]} if "pass" in pair else {})
            if rnd.random() < 0.03:
                side.update(failure_kind=rnd.choice(["connect", "port_busy"]), failure=rnd.choice([None, "x"]))
            elif rnd.random() < 0.02:
                side.update(failure="a sentence without a kind")
            if role == "client":
                bw = same if rnd.random() < 0.7 else rnd.choice(FIGURES)
                side.update(bw_avg_gbps=rnd.choice(ODD_FIGURES) if rnd.random() < 0.03 else bw, bw_peak_gbps=0.0)
            out.append(side)
        if rnd.random() < twice:
            out.extend(dict(s) for s in out[-len(pair["rails"]) :])  # the round written twice
    return out


def write_rounds(directory, sides, rnd, split=False, again=0.1):
    """Each host's side file as a runner writes it: a round's sides at once (sidefiles.side_lines); now and then a
    line written twice (a runner that ran a round again: ``again`` of the files), and (``split``) a round written as
    two lines."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    def round_lines(group):
        if split and len(group) > 1 and rnd.random() < 0.05:
            cut = rnd.randint(1, len(group) - 1)
            return sidefiles.side_lines(group[:cut]) + sidefiles.side_lines(group[cut:])
        return sidefiles.side_lines(group)

    rounds = {}
    for s in sides:
        rounds.setdefault(s["host"], {}).setdefault(s["round"], []).append(s)
    for host, by_round in rounds.items():
        lines = [round_lines(by_round[r]) for r in sorted(by_round)]
        if rnd.random() < again:
            lines.append(rnd.choice(lines))
        with open(str(directory / (host + sidefiles.SIDES_SUFFIX)), "w") as handle:
            handle.write("".join(lines))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("scale", ["varied", "blocks"])
def test_side_files_of_whole_rounds_join_at_once_as_an_item_and_a_row_at_a_time_join_them(
    tmp_path, monkeypatch, seed, scale
):
    """A side file of runners' rounds is indexed at once (join._index_rounds), and the pairs whose two rounds came
    back whole and clean are made as columns, consecutive ones as one block (join._Block). Blocks of 512 pairs, of 3,
    of one pair each and rows made one per rail with each side file indexed an item at a time all give what the same
    sides given as dicts give: the same results, file (byte for byte), failures, refused sides and index. ``blocks``:
    larger passes with no round written twice (a side that came back twice makes every pair's rows one by one), so
    that most pairs are made in blocks, some of them with two gates."""
    import json

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile, sidefiles

    import random

    if scale == "blocks":
        pairs, sides, rails_of, settings = mostly_clean_pass(seed, hosts=(8, 16), twice=0)
        write_rounds(tmp_path, sides, random.Random(seed), split=True, again=0)
    else:
        pairs, sides, rails_of, settings = mostly_clean_pass(seed)
        write_rounds(tmp_path, sides, random.Random(seed), split=True)
    read_back = [s for _path, items in sidefiles.iter_side_items(str(tmp_path)) for s in resultfile.expand_items(items)]
    expected, refused = join.join_checked(pairs, read_back, rails_of, settings)
    seen = {"files": 0, "pairs": 0, "blocks": 0}
    index_rounds, add, chunk = join._index_rounds, join._Block.add, join._Block.chunk  # pylint: disable=protected-access

    def counted_rounds(index, items):
        done = index_rounds(index, items)
        seen["files"] += done
        return done

    def counted_add(block, *args):
        kept = add(block, *args)
        seen["pairs"] += kept
        return kept

    def counted_chunk(block):
        seen["blocks"] += 1
        return chunk(block)

    monkeypatch.setattr(join, "_index_rounds", counted_rounds)
    monkeypatch.setattr(join._Block, "add", counted_add)  # pylint: disable=protected-access
    monkeypatch.setattr(join._Block, "chunk", counted_chunk)  # pylint: disable=protected-access
    monkeypatch.setattr(resultfile, "COMPACT_ABOVE", 0)
    outcomes = []
    for way in (512, 3, 1, "rows"):
        seen.update(files=0, pairs=0, blocks=0)
        if way == "rows":
            monkeypatch.setattr(join, "_index_rounds", lambda index, items: False)
            monkeypatch.setattr(join._Join, "columnar", False)  # pylint: disable=protected-access
        else:
            monkeypatch.setattr(join._Join, "block_pairs", way)  # pylint: disable=protected-access
        files = sidefiles.iter_side_items(str(tmp_path))
        got, refused_got = join.join_checked(pairs, [], rails_of, settings, side_files=files)
        assert json.dumps(got) == json.dumps(expected) and refused_got == refused
        dest = tmp_path / ("results-%s.json" % way)
        counts, failed, refused_written = join.join_written(
            pairs, [], rails_of, settings, str(dest), side_files=sidefiles.iter_side_items(str(tmp_path))
        )
        assert json.dumps(resultfile.read_results(str(dest)), sort_keys=True) == json.dumps(expected, sort_keys=True)
        assert counts == join.summary(expected) and refused_written == refused
        assert json.dumps(failed) == json.dumps([r for r in expected if not r["passed"]])
        duplicates = []
        index = join.index_sides([], duplicates, side_files=sidefiles.iter_side_items(str(tmp_path)))
        outcomes.append((dest.read_text(), repr(sorted(index.items())), sorted(duplicates)))
        if way == "rows":
            assert seen["pairs"] == seen["blocks"] == 0
        else:  # the fast ways were taken (a side that came back twice makes every pair's rows one by one)
            assert seen["files"] >= 1 and (seen["pairs"] >= 1 or duplicates)
            # join_checked and join_written each make every block once, a block of at most ``way`` pairs
            assert seen["pairs"] / way <= seen["blocks"] <= seen["pairs"]
            assert way != 1 or seen["blocks"] == seen["pairs"]
    assert outcomes[1:] == outcomes[:-1]
    duplicates = []
    assert repr(sorted(join.index_sides(read_back, duplicates).items())) == outcomes[0][1]
    assert sorted(duplicates) == outcomes[0][2]
    # the same files written whole (as runners that finished leave them): their items cut into rounds, the same
    # pairs made in blocks, the same file, index and duplicates
    whole = tmp_path / "whole"
    whole.mkdir()
    for path in sorted(tmp_path.glob("*" + sidefiles.SIDES_SUFFIX)):
        sidefiles.write_sides(str(whole / path.name), sidefiles.read_side_file(str(path)))
    monkeypatch.setattr(join, "_index_rounds", index_rounds)
    monkeypatch.setattr(join._Join, "columnar", True)  # pylint: disable=protected-access
    monkeypatch.setattr(join._Join, "block_pairs", 512)  # pylint: disable=protected-access
    taken = counted_item_rounds(monkeypatch)
    seen.update(files=0, pairs=0, blocks=0)
    dest = tmp_path / "results-whole.json"
    counts, failed, refused_written = join.join_written(
        pairs, [], rails_of, settings, str(dest), side_files=sidefiles.iter_side_items(str(whole))
    )
    duplicates = []
    index = join.index_sides([], duplicates, side_files=sidefiles.iter_side_items(str(whole)))
    assert (dest.read_text(), repr(sorted(index.items())), sorted(duplicates)) == outcomes[0]
    assert counts == join.summary(expected) and refused_written == refused
    assert seen["files"] == 0 and True in taken and (seen["pairs"] >= 1 or duplicates)


def test_a_zero_and_a_negative_zero_are_judged_apart(tmp_path):
    """A figure's verdict is worked out once per distinct figure (join._Verdicts), but 0.0 and -0.0 are equal keys
    that print apart: each pair's failure names its own, from side files as from dicts."""
    import json
    import random

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    hosts = ["a", "b", "c", "d"]
    r = rails(hosts)
    p = planned(hosts, r)
    sides = [ok_side(s, bw=(0.0, -0.0)[s["round"] % 2]) for ss in sides_of(p).values() for s in ss]
    expected = join.join_pass(p["pairs"], sides, r, SETTINGS)
    assert {"0.0", "-0.0"} == set(res["failure"].split(" ")[0] for res in expected)
    write_rounds(tmp_path, sides, random.Random(1))
    got = join.join_checked(p["pairs"], [], r, SETTINGS, side_files=sidefiles.iter_side_items(str(tmp_path)))[0]
    assert json.dumps(got) == json.dumps(expected)


@pytest.mark.parametrize(
    "spoil, words",
    [
        (lambda item: item.update(ibtune_table=2), r"\[1\] is a table item of another version"),
        (lambda item: item.update(ibtune_table="1"), r"\[1\] is a table item of another version"),
        (lambda item: item.update(ibtune_table=None), r"\[1\] is a table item of another version"),
        (lambda item: item["rows"][2].pop(), r"\[1\] row 2 does not hold the \d columns"),
        (lambda item: item["rows"][0].append(1), r"\[1\] row 0 does not hold the \d columns"),
        (lambda item: item["rows"].__setitem__(1, "x"), r"\[1\] row 1 does not hold the \d columns"),
    ],
)
def test_a_side_file_with_a_spoiled_table_item_is_refused_by_name(tmp_path, spoil, words):
    """Indexing a side file at once (join._index_rounds) checks what resultfile.table_columns checks of each item:
    a table item of another version, or a row not of its width, is an error that names the file and the item."""
    import json
    import random

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile, sidefiles

    pairs, sides, rails_of, settings = mostly_clean_pass(1)
    write_rounds(tmp_path, sides, random.Random(1))
    path = sorted(tmp_path.iterdir())[0]
    lines = path.read_text().splitlines()
    item = json.loads(lines[1])
    spoil(item)
    lines[1] = json.dumps(item)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(resultfile.ResultsFileError, match=re.escape(path.name) + words):
        join.join_checked(pairs, [], rails_of, settings, side_files=sidefiles.iter_side_items(str(tmp_path)))


@pytest.mark.parametrize("case", ["both_roles", "one_rail"])
def test_a_file_written_whole_joins_as_its_sides_given_as_dicts(tmp_path, monkeypatch, case):
    """Two forms a file written whole takes that the runners' lines never do: an item holding both roles' rounds
    (a client that printed no figure holds a server's keys), and a host of one rail (its rail one value of the item,
    not a column). Each item is cut into rounds (join._item_rounds) and joins as the same sides given as dicts."""
    import json
    import random

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles

    rnd = random.Random(7)
    hosts = ["h%d" % i for i in range(6)]
    r = rails(hosts)
    if case == "one_rail":
        r = dict((h, rails_of[:1]) for h, rails_of in r.items())
    p = planned(hosts, r)
    by_host = dict((h, [ok_side(s, bw=rnd.choice([392.0, 180.0])) for s in ss]) for h, ss in sides_of(p).items())
    if case == "both_roles":
        for h in hosts[:3]:  # clients that printed a peak but no average (some could not connect): a server's keys
            for s in by_host[h]:
                if s["role"] == "client":
                    s.update(bw_peak_gbps=s.pop("bw_avg_gbps"))
                    if s["round"] % 2:
                        s.update(failure_kind="connect", failure="could not connect", rc=1)
                else:
                    s.update(address=None, bw_peak_gbps=None)
    for h, ss in by_host.items():
        sidefiles.write_sides(str(tmp_path / (h + sidefiles.SIDES_SUFFIX)), ss)
    items = [item for _p, got in sidefiles.iter_side_items(str(tmp_path)) for item in got]
    if case == "both_roles":
        assert any(item.get("columns", {}).get("role") for item in items)  # an item of both roles' rounds
    else:
        assert any("rail" in item.get("const", ()) and "round" in item.get("columns", ()) for item in items)
    taken = counted_item_rounds(monkeypatch)
    sides = [s for h in sorted(by_host) for s in by_host[h]]
    expected = join.join_checked(p["pairs"], sides, r, SETTINGS)
    got = join.join_checked(p["pairs"], [], r, SETTINGS, side_files=sidefiles.iter_side_items(str(tmp_path)))
    assert json.dumps(got) == json.dumps(expected) and taken and all(taken)
    assert len({res["failure_kind"] for res in expected[0]}) >= (3 if case == "both_roles" else 1)
    duplicates = []
    index = join.index_sides([], duplicates, side_files=sidefiles.iter_side_items(str(tmp_path)))
    assert repr(sorted(index.items())) == repr(sorted(join.index_sides(sides).items())) and not duplicates
