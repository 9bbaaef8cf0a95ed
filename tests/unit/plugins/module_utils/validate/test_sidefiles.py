"""The pass directory: side files that survive a killed runner, the missing sides named, packs that stay inside."""

import io
import json
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import join, sidefiles


def side(round_no, role, host, peer, rail="mlx5_0:1", **extra):
    doc = {
        "pass": 1,
        "round": round_no,
        "role": role,
        "host": host,
        "peer": peer,
        "rail": rail,
        "device": rail[:6],
        "port": 1,
        "tcp_port": 18515,
    }
    doc.update(extra)
    return doc


def test_a_last_line_cut_by_a_kill_is_a_side_that_did_not_come_back(tmp_path):
    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    sidefiles.append_sides(str(path), [side(1, "server", "a", "b"), side(1, "client", "a", "c")])
    with open(path, "a") as handle:
        handle.write('{"pass": 1, "round": 2, "ro')  # SIGKILL while writing round 2
    assert [s["round"] for s in sidefiles.read_side_file(str(path))] == [1, 1]


def test_a_round_of_sides_is_one_table_line_read_back_as_written_and_a_cut_round_is_dropped_whole(tmp_path):
    """The runner appends a round at a time: the sides that share their keys are one line (resultfile.py's table
    item), read back equal and in order. A kill while writing round 2's line loses round 2 only."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    round1 = [side(1, "client", "a", "b", "mlx5_%d:1" % r, bw_avg_gbps=390.0 + r) for r in range(8)]
    round2 = [side(2, "server", "a", "c", "mlx5_%d:1" % r) for r in range(8)]
    sidefiles.append_sides(str(path), round1)
    sidefiles.append_sides(str(path), round2)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(resultfile.TABLE_KEY in json.loads(line) for line in lines)
    assert sidefiles.read_side_file(str(path)) == round1 + round2
    path.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # SIGKILL while writing round 2
    assert sidefiles.read_side_file(str(path)) == round1
    sidefiles.write_sides(str(path), round1 + round2)  # written whole: the same sides, in order
    assert sidefiles.read_side_file(str(path)) == round1 + round2


def test_a_side_file_written_whole_is_a_few_table_items_read_back_side_for_side_in_order(tmp_path):
    """What a runner that finished leaves (compact_side_file) and what the controller writes (write_sides): runs of
    sides with the same keys as version 2 table items, each row naming its round, read back equal (values and
    types), in order, from a file a fraction of the lines' size."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    written = []
    for number in range(1, 41):
        peer = "h%02d" % number
        if number <= 25:  # a host's rounds as all_pairs plans them: a run as the client, then as the server
            rounds = [side(number, "client", "a", peer, "mlx5_%d:1" % r, bw_avg_gbps=390.0 + r) for r in range(8)]
        else:
            rounds = [side(number, "server", "a", peer, "mlx5_%d:1" % r) for r in range(8)]
        if number == 7:  # a failed side: other keys, its own item
            rounds[3].update(failure_kind="connect", failure="no route", bw_avg_gbps=None, rc=1)
        if number == 11:  # a figure perftest printed as a whole number, and a -0.0
            rounds[0]["bw_avg_gbps"], rounds[1]["bw_avg_gbps"] = 390, -0.0
        sidefiles.append_sides(str(path), rounds)
        written += rounds
    lines = path.read_text()
    sidefiles.compact_side_file(str(path))
    whole = path.read_text()
    back = sidefiles.read_side_file(str(path))
    assert json.dumps(back, sort_keys=True) == json.dumps(written, sort_keys=True)  # types: 390 an int, -0.0
    items = [json.loads(line) for line in whole.splitlines()]
    assert len(items) == 4 and len(whole) * 2 < len(lines)  # client rounds cut by the failed side, server rounds
    tables = [item for item in items if resultfile.TABLE_KEY in item]
    assert {item[resultfile.TABLE_KEY] for item in tables} == {resultfile.COLUMNS_VERSION}
    assert all("round" in item["columns"] and "rail" in item["columns"] for item in tables if item["count"] > 8)
    assert whole == sidefiles.whole_lines(written)
    sidefiles.write_sides(str(path), written)  # the controller's copy of the same sides: the same file
    assert path.read_text() == whole


def test_a_bad_line_before_the_end_is_refused(tmp_path):
    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    path.write_text('{"round": 1}\nnot json\n{"round": 2}\n')
    with pytest.raises(ValueError, match="line 2 is not a side result"):
        sidefiles.read_side_file(str(path))


def test_host_names_never_leave_the_results_directory(tmp_path):
    with pytest.raises(ValueError, match="cannot name a results file"):
        sidefiles.result_path(str(tmp_path), "../etc", sidefiles.SIDES_SUFFIX)


def test_missing_sides_are_exactly_those_that_did_not_come_back_and_the_join_names_them():
    planned = {
        "a": [side(1, "server", "a", "b"), side(2, "client", "a", "c")],
        "b": [side(1, "client", "b", "a", address="a")],
        "c": [side(2, "server", "c", "a")],
    }
    # round 1 came back from both ends; round 2 from neither (the job was cancelled during it)
    back = [dict(planned["a"][0], bw_avg_gbps=None), dict(planned["b"][0], bw_avg_gbps=392.0)]
    missing = sidefiles.missing_sides(planned, back, lambda host: "no result: job 7 was cancelled (%s)" % host)
    assert sorted((s["host"], s["round"], s["role"]) for s in missing) == [("a", 2, "client"), ("c", 2, "server")]
    assert {s["failure_kind"] for s in missing} == {"no_result"}
    pairs = [
        {"pass": 1, "round": 1, "server": "a", "client": "b", "rails": ["mlx5_0:1"]},
        {"pass": 1, "round": 2, "server": "c", "client": "a", "rails": ["mlx5_0:1"]},
    ]
    rails = dict((h, [{"rail": "mlx5_0:1", "device": "mlx5_0", "port": 1, "rate_gbps": 400.0}]) for h in "abc")
    results = join.join_pass(pairs, back + missing, rails, {"test": "write", "min_link_fraction": 0.9})
    by_round = dict((r["round"], r) for r in results)
    assert by_round[1]["passed"] is True
    assert by_round[2]["failure_kind"] == "no_result"
    assert "job 7 was cancelled (a)" in by_round[2]["failure"]


def test_pack_and_unpack_carry_a_pass_directory(tmp_path):
    src = tmp_path / "src"
    (src / "slices").mkdir(parents=True)
    (src / "slices" / "a.json").write_text("[]")
    (src / "settings.json").write_text(json.dumps({"test": "write"}))
    bundle = tmp_path / "b.tar.gz"
    assert sidefiles.pack(str(src), str(bundle), ["settings.json", "slices", "absent"]) == ["settings.json", "slices"]
    dest = tmp_path / "dest"
    sidefiles.fresh_pass_dir(str(dest))
    sidefiles.unpack(str(bundle), str(dest))
    assert json.loads((dest / "settings.json").read_text()) == {"test": "write"}
    assert (dest / "slices" / "a.json").read_text() == "[]"


def test_unpack_refuses_a_member_outside_the_directory(tmp_path):
    bundle = tmp_path / "evil.tar.gz"
    with tarfile.open(bundle, "w:gz") as archive:
        data = b"x"
        info = tarfile.TarInfo("../outside")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(ValueError, match="not a plain file of a pass directory"):
        sidefiles.unpack(str(bundle), str(tmp_path / "dest"))
    assert not (tmp_path / "outside").exists()


def test_a_directory_that_is_not_ours_is_refused_not_emptied(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "data").write_text("keep me")
    with pytest.raises(ValueError, match="not an ibtune pass directory"):
        sidefiles.fresh_pass_dir(str(theirs))
    assert not sidefiles.remove_pass_dir(str(theirs))
    assert (theirs / "data").read_text() == "keep me"
    ours = tmp_path / "ours"
    sidefiles.fresh_pass_dir(str(ours))
    sidefiles.fresh_pass_dir(str(ours))  # ours again: replaced
    assert sidefiles.remove_pass_dir(str(ours)) and not ours.exists()


def test_join_written_streams_the_side_files_and_writes_what_join_checked_returns(tmp_path):
    """fabric_join's path: the side files read one host's file at a time (iter_side_items), the results written as
    joined. The file is byte for byte plan.write_json of join_checked's list over the same sides read as dicts, and
    the summary counts the same."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    results_dir = tmp_path / "results"
    results_dir.mkdir()
    pairs = [
        {"pass": 1, "round": r, "server": s, "client": c, "rails": ["mlx5_0:1", "mlx5_1:1"]}
        for r, (s, c) in enumerate([("a", "b"), ("c", "a"), ("b", "c")], 1)
    ]
    back = []
    for p in pairs:
        for rail in p["rails"]:
            slow = p["round"] == 2 and rail == "mlx5_1:1"
            back.append(side(p["round"], "server", p["server"], p["client"], rail, failure_kind=None))
            if not (p["round"] == 3 and rail == "mlx5_0:1"):  # b's client never came back on this one
                back.append(
                    side(p["round"], "client", p["client"], p["server"], rail, bw_avg_gbps=90.0 if slow else 392.0)
                )
    back.append(side(9, "client", "a", "b"))  # a side the plan does not hold: refused
    for host in "abc":
        sidefiles.append_sides(
            str(results_dir / (host + sidefiles.SIDES_SUFFIX)), [s for s in back if s["host"] == host]
        )
    rails = dict(
        (h, [{"rail": "mlx5_%d:1" % i, "device": "mlx5_%d" % i, "port": 1, "rate_gbps": 400.0} for i in (0, 1)])
        for h in "abc"
    )
    settings = {"test": "write", "min_link_fraction": 0.9}
    as_dicts = [
        s for host in "abc" for s in sidefiles.read_side_file(str(results_dir / (host + sidefiles.SIDES_SUFFIX)))
    ]
    expected, refused = join.join_checked(pairs, as_dicts, rails, settings)
    plan.write_json(str(tmp_path / "whole.json"), expected)
    dest = tmp_path / "out" / "pass1-results.json"
    counts, failed, refused_written = join.join_written(
        pairs, [], rails, settings, str(dest), side_files=sidefiles.iter_side_items(str(results_dir))
    )
    assert dest.read_text() == (tmp_path / "whole.json").read_text()
    assert (
        counts
        == join.summary(expected)
        == {
            "results": 6,
            "failed": 2,
            "failure_kinds": {"below_threshold": 1, "no_result": 1},
        }
    )
    assert failed == [r for r in expected if not r["passed"]]
    assert refused_written == refused and len(refused) == 1 and "round 9" in refused[0]
    counts_check, _f, _r = join.join_written(
        pairs, [], rails, settings, None, side_files=sidefiles.iter_side_items(str(results_dir))
    )
    assert counts_check == counts and not (tmp_path / "check").exists()


def test_the_join_index_keeps_only_what_it_reads_and_one_tuple_per_clean_server_port(tmp_path):
    """The index holds each side as a tuple of what the join reads, from side dicts and from a side file's table
    items alike (indexed column by column, never a dict per side), and every clean server side of a port is one."""
    sides = [
        side(r, "server", "a", "b", rc=0, attempts=1, elapsed_s=10.4, failure_kind=None, tcp_port=18515 + r)
        for r in (1, 2, 3)
    ]
    sides += [side(1, "client", "b", "a", rc=0, bw_avg_gbps=392.0, bw_peak_gbps=0.0, msg_size=65536, failure=None)]
    sides += [side(4, "server", "a", "b", failure_kind="port_busy", failure="port 18519 in use")]
    sides += [{"round": 5, "role": "observer", "host": "a"}, {"round": 5, "role": "server", "peer": "b"}]  # not sides
    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    sidefiles.write_sides(str(path), sides[:3] + sides[4:])
    assert '"ibtune_table"' in path.read_text()  # the three clean server sides are one table line
    from_dicts = join.index_sides(sides)
    from_file = join.index_sides([sides[3]], side_files=[(str(path), sidefiles.read_side_items(str(path)))])
    for index in (from_dicts, from_file):
        assert sorted(index) == [(1, r, "mlx5_0:1", "a", "b") for r in (1, 2, 3, 4)]
        servers = [index[(1, r, "mlx5_0:1", "a", "b")][0] for r in (1, 2, 3)]
        assert all(s is servers[0] for s in servers) and join.side_dict(servers[0]) == {"device": "mlx5_0", "port": 1}
        assert join.side_dict(index[(1, 1, "mlx5_0:1", "a", "b")][1]) == {
            "device": "mlx5_0",
            "port": 1,
            "bw_avg_gbps": 392.0,
            "bw_peak_gbps": 0.0,
        }
        assert [join.side_dict(s) for s in index[(1, 4, "mlx5_0:1", "a", "b")]] == [
            {"device": "mlx5_0", "port": 1, "failure_kind": "port_busy", "failure": "port 18519 in use"},
            None,
        ]


def test_a_side_without_a_round_is_an_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="a client side of b names no round"):
        join.index_sides([{"role": "client", "host": "b", "peer": "a", "rail": "mlx5_0:1"}])


def test_a_side_split_over_two_lines_is_refused_not_read_as_one(tmp_path):
    """The whole file is parsed in one call when it can be; two halves of a side that would join into one JSON
    document are still a bad line, as reading line by line finds."""
    path = tmp_path / ("a" + sidefiles.SIDES_SUFFIX)
    path.write_text('{"round": 1, "role": "server"\n"host": "a"}\n{"round": 2}\n')
    with pytest.raises(ValueError, match="line 1 is not a side result"):
        sidefiles.read_side_file(str(path))
    path.write_text('{"round": 1}\n\n{"round": 2}\n7\n')
    assert sidefiles.read_side_file(str(path)) == [{"round": 1}, {"round": 2}]


# --- a host's slice (format 2) makes exactly the sides the plan used to list one by one ---------------------


def reference_sides(rounds, rails, addresses, pass_no, base, gid_index):
    """The sides as slice_pass listed them before format 2 (commit 79e299e), per host: the reference."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    order = plan.rail_order(rails)
    index_of = dict((name, i) for i, name in enumerate(order))
    by_name = dict((host, dict((r["rail"], r) for r in host_rails)) for host, host_rails in rails.items())
    out = dict((host, []) for host in rails)
    for round_index, round_pairs in enumerate(rounds):
        for entry in round_pairs:
            server, client = entry[0], entry[1]
            only = entry[2] if len(entry) > 2 and entry[2] else None
            srails, crails = by_name.get(server, {}), by_name.get(client, {})
            common = [n for n in order if n in srails and n in crails and (only is None or n in only)]
            for name in common:
                port = plan.tcp_port_for(base, round_index, index_of[name], len(order))
                for host, peer, role in ((server, client, "server"), (client, server, "client")):
                    mine = by_name[host][name]
                    side = {
                        "pass": pass_no, "round": round_index + 1, "role": role, "host": host, "peer": peer,
                        "rail": name, "device": mine["device"], "port": mine["port"], "tcp_port": port,
                    }  # fmt: skip
                    if role == "client":
                        side["address"] = addresses[server]
                    gid = mine.get("gid_index") if gid_index == "auto" else gid_index
                    if gid is not None:
                        side["gid_index"] = int(gid)
                    out[host].append(side)
    return out


@st.composite
def passes(draw):
    hosts = ["h%d" % i for i in range(draw(st.integers(2, 7)))]
    names = ["mlx5_%d:1" % i for i in (0, 1, 2, 10)]
    rails = {}
    for host in hosts:
        have = draw(st.lists(st.sampled_from(names), unique=True, max_size=4))
        rails[host] = [
            {"rail": n, "device": n[:-2], "port": 1, "gid_index": draw(st.sampled_from([None, 3]))} for n in have
        ]
    rounds = []
    for _round in range(draw(st.integers(0, 6))):
        free = list(hosts)
        round_pairs = []
        while len(free) >= 2 and draw(st.booleans()):
            server = free.pop(draw(st.integers(0, len(free) - 1)))
            client = free.pop(draw(st.integers(0, len(free) - 1)))
            only = draw(st.one_of(st.none(), st.lists(st.sampled_from(names), unique=True, max_size=2)))
            round_pairs.append([server, client] + ([only] if only is not None else []))
        rounds.append(round_pairs)
    gid = draw(st.sampled_from([None, "auto", 5]))
    return hosts, rails, rounds, gid, draw(st.sampled_from([18515, 65530 - 4 * 3]))


@settings(max_examples=300, deadline=None)
@given(passes(), st.integers(1, 2))
def test_a_slice_makes_the_sides_the_plan_listed_one_by_one(drawn, pass_no):
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    hosts, rails, rounds, gid, base = drawn
    addresses = dict((h, "10.0.0.%d" % i) for i, h in enumerate(hosts))
    sliced = plan.slice_pass(rounds, rails, addresses, pass_no=pass_no, base_tcp_port=base, gid_index=gid)
    expected = reference_sides(rounds, rails, addresses, pass_no, base, gid)
    made = dict((h, sidefiles.slice_sides(json.loads(json.dumps(doc)))) for h, doc in sliced["slices"].items())
    assert made == expected
    assert dict((h, sidefiles.slice_size(doc)) for h, doc in sliced["slices"].items()) == dict(
        (h, len(s)) for h, s in expected.items()
    )


def test_a_list_of_sides_is_still_a_slice_and_anything_else_is_named():
    sides = [side(1, "server", "a", "b")]
    assert sidefiles.slice_sides(sides) is sides and sidefiles.slice_size(sides) == 1
    with pytest.raises(ValueError, match="format-2 slice, got format 3: re-plan the pass"):
        sidefiles.slice_sides({"format": 3, "entries": []})
    with pytest.raises(ValueError, match="got str"):
        sidefiles.slice_size("sides")


def test_a_slice_is_an_eighth_of_the_sides_it_makes_on_eight_rails():
    """What the format is for: one entry per round and pair, not per rail (1024 hosts x 8 rails all_pairs: 1 M
    entries, not 8.4 M side dicts)."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan

    hosts = ["h%d" % i for i in range(16)]
    rails = dict(
        (h, [{"rail": "mlx5_%d:1" % r, "device": "mlx5_%d" % r, "port": 1, "rate_gbps": 400.0} for r in range(8)])
        for h in hosts
    )
    out = plan.plan_pass(hosts, rails, dict((h, h) for h in hosts))
    doc = out["slices"]["h3"]
    assert len(doc["entries"]) == 15 and sidefiles.slice_size(doc) == 15 * 8
    assert all(entry[5] is None for entry in doc["entries"])  # every rail: the rails are not repeated per entry
    assert len(json.dumps(doc)) * 4 < len(json.dumps(sidefiles.slice_sides(doc)))
