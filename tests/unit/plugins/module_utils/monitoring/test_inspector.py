"""NCCL Inspector output -> metrics, on the real files the Inspector of NCCL v2.28.9-1 wrote on the lent H200
(tests/fixtures/monitoring/README.md), on malformed and partial input, and on a synthetic 10,000-collective job."""

import json
import random
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring import inspector
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import samples

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "monitoring" / "inspector-v2.28.9-1-h200"
# torch_job.py: per collective and size 3 warm-up + 40 timed ops; a barrier (a 1-element AllReduce) after each of
# the 12 (collective, size) rounds and one at the end; two ranks, both on this node.
OPS_PER_ROUND = 43
SIZES = ("64KiB", "1MiB", "16MiB", "256MiB")  # 64 KiB, 1 MiB, 16 MiB and 64 MiB messages
RANKS = 2


def _records(path):
    return [inspector.parse_line(line) for line in path.read_bytes().splitlines() if line.strip()]


def _aggregate(files, job=("4243", "")):
    agg = inspector.Aggregator()
    for path in files:
        for record in _records(path):
            agg.feed(str(path), job, record, 1000.0)
    return agg


def _samples_of(text, name):
    return {tuple(sorted(lab.items())): float(v) for n, lab, v in samples(text) if n == name}


def test_real_files_parse_completely():
    files = sorted(FIXTURES.rglob("*.log"))
    assert len(files) == 6
    for path in files:
        records = _records(path)
        assert records, path
        assert {r["version"] for r in records} == {"v4.0"}
        assert {r["timing_source"] for r in records} == {"kernel_gpu"}
        assert {(r["nranks"], r["nnodes"]) for r in records} == {(2, 2)}
        # one process per file: the pid in the name is the pid in every record
        assert {r["pid"] for r in records} == {inspector.file_identity(path.name)[1]}
        assert all(r["seconds"] > 0 and r["busbw_gbs"] is not None for r in records)


def test_real_dense_dump_counts_every_collective_exactly():
    """At the README's 500 (slept as 500 ns by 2.28) nearly every collective is a sample: counts are exact."""
    agg = _aggregate(sorted((FIXTURES / "interval-500").rglob("*.log")))
    text = inspector.render(agg)
    counts = _samples_of(text, "ibtune_nccl_collectives_total")
    got = {(dict(k)["collective"], dict(k)["size_le"]): v for k, v in counts.items()}
    for coll in ("AllReduce", "AllGather", "ReduceScatter"):
        for size in SIZES:
            extra = 13 if (coll, size) == ("AllReduce", "64KiB") else 0  # the 13 barriers
            assert got[(coll, size)] == RANKS * (OPS_PER_ROUND + extra), (coll, size)
    assert agg.skipped == {reason: 0 for reason in inspector.SKIP_REASONS}


def test_real_sparse_dump_counts_from_sequence_numbers():
    """At 1 s the file holds 6 samples per rank, yet coll_sn counts every collective up to the last sample."""
    files = sorted((FIXTURES / "interval-1s").glob("*.log"))
    agg = _aggregate(files, job=("4242", ""))
    counts = _samples_of(inspector.render(agg), "ibtune_nccl_collectives_total")
    per_coll = {}
    for key, value in counts.items():
        per_coll[dict(key)["collective"]] = per_coll.get(dict(key)["collective"], 0) + value
    last = {}
    for path in files:
        for record in _records(path):
            last[(path.name, record["coll"])] = record["sn"]
    for coll, value in per_coll.items():
        assert value == sum(sn + 1 for (_name, c), sn in last.items() if c == coll)
    # never more than the job ran (collectives after the process's last dump are not written)
    assert per_coll["AllReduce"] <= RANKS * (4 * OPS_PER_ROUND + 13)
    assert sum(len(_records(p)) for p in files) == 12


def test_real_time_and_bandwidth_add_up():
    """rate(bytes) / rate(seconds) is the algorithm bandwidth the Inspector printed (the dense dump)."""
    agg = _aggregate(sorted((FIXTURES / "interval-500").rglob("*.log")))
    text = inspector.render(agg)
    key = (
        ("collective", "AllReduce"),
        ("job_id", "4243"),
        ("nnodes", "2"),
        ("nranks", "2"),
        ("pod", ""),
        ("size_le", "256MiB"),
    )
    seconds = _samples_of(text, "ibtune_nccl_collective_seconds_total")[key]
    algbw = _samples_of(text, "ibtune_nccl_collective_bytes_total")[key] / seconds / 1e9
    busbw = _samples_of(text, "ibtune_nccl_collective_bus_bytes_total")[key] / seconds / 1e9
    printed = [
        r["busbw_gbs"]
        for p in sorted((FIXTURES / "interval-500").rglob("*.log"))
        for r in _records(p)
        if r["coll"] == "AllReduce" and r["bytes"] == 64 << 20
    ]
    assert min(printed) <= busbw <= max(printed)
    # all_reduce on 2 ranks: busbw = algbw x 2(n-1)/n = algbw
    assert busbw == pytest.approx(algbw, rel=1e-3)
    # 86 ops of ~36 ms each (torch_job.py measured 36.2 ms per op on NET/Socket over loopback)
    assert 2.5 < seconds < 3.5


def test_exported_live_metrics_match_a_replay_of_the_same_files():
    """The exporter ran beside the job on the H200 (exporter-h200/interval-1s-live.prom); replaying the files it
    read gives the same collective counts."""
    live = (FIXTURES.parent / "exporter-h200" / "interval-1s-live.prom").read_text()
    replay = inspector.render(_aggregate(sorted((FIXTURES / "interval-1s").glob("*.log")), job=("4242", "")))
    name = "ibtune_nccl_collectives_total"
    assert _samples_of(live, name) == _samples_of(replay, name)


def test_sparse_samples_of_an_interleaved_communicator_lag_for_the_rarer_kind():
    """The 2.28 Inspector keeps only the LAST collective per communicator between two dumps. torch_long.py runs a
    4-byte Broadcast before every 64 MiB AllReduce on one communicator, so at 1 s nearly every sample is a
    Broadcast: the AllReduce count (exact at each of its own samples) lags until the next AllReduce sample."""
    files = sorted((FIXTURES / "interval-1s-with-pcie-load").glob("*.log"))
    records = {path.name: _records(path) for path in files}
    for recs in records.values():
        kinds = [r["coll"] for r in recs]
        assert kinds.count("Broadcast") > 5 * kinds.count("AllReduce") >= 5
    agg = _aggregate(files, job=("4244", ""))
    counts = _samples_of(inspector.render(agg), "ibtune_nccl_collectives_total")
    got = {dict(k)["collective"]: v for k, v in counts.items()}
    run = json.loads((FIXTURES.parent / "runs-h200" / "run3" / "long.json").read_text())
    ran = RANKS * (3 + len(run["ops"]) + 2)  # warm-up, timed ops, two barriers, per rank
    assert got["AllReduce"] == sum(
        max(r["sn"] for r in recs if r["coll"] == "AllReduce") + 1 for recs in records.values()
    )
    assert got["AllReduce"] < ran
    # the exporter that ran beside the job wrote the same counts in its last window
    live = sorted((FIXTURES.parent / "exporter-h200" / "with-pcie-load").glob("ibtune_nccl_inspector-*.prom"))[-1]
    assert _samples_of(live.read_text(), "ibtune_nccl_collectives_total") == counts


BASE = json.loads((FIXTURES / "interval-1s" / "vm-pid1198.log").read_text().splitlines()[0])


def _mutated(path, value):
    doc = json.loads(json.dumps(BASE))
    section, key = path.split(".")
    if value is KeyError:
        del doc[section][key]
    else:
        doc[section][key] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not_json"),
        ('{"header": {"id": "0x1"', "not_json"),  # a line cut short
        ("\x00\x00\x00garbage", "not_json"),
        ("[1, 2, 3]", "not_an_object"),
        ('"text"', "not_an_object"),
        ('{"header": {}}', "missing_field"),
        (_mutated("coll_perf.coll_sn", KeyError), "missing_field"),
        (_mutated("coll_perf.coll_sn", -1), "bad_value"),
        (_mutated("coll_perf.coll_sn", "12"), "bad_value"),
        (_mutated("coll_perf.coll_sn", True), "bad_value"),
        (_mutated("coll_perf.coll_exec_time_us", 1e400), "bad_value"),
        (_mutated("coll_perf.coll", "AllToEverything"), "bad_value"),
        (_mutated("header.id", "not-a-hash"), "bad_value"),
        (_mutated("header.n_ranks", 0), "bad_value"),
        (_mutated("metadata.hostname", 'a"b'), "bad_value"),
        (_mutated("metadata.inspector_output_format_version", "v5.1"), "unsupported_version"),
        (_mutated("metadata.inspector_output_format_version", None), "unsupported_version"),
        ("{" * (inspector.MAX_LINE_BYTES + 1), "too_long"),
    ],
)
def test_malformed_lines_are_refused_with_a_reason(line, reason):
    with pytest.raises(inspector.Skip) as info:
        inspector.parse_line(line.encode())
    assert info.value.reason == reason
    assert reason in inspector.SKIP_REASONS


def test_nan_bandwidth_and_a_punched_hole_before_the_line_are_read():
    doc = json.loads(json.dumps(BASE))
    doc["coll_perf"]["coll_busbw_gbs"] = "nan"
    record = inspector.parse_line(b"\x00" * 4096 + json.dumps(doc).encode())
    assert record["busbw_gbs"] is None and record["sn"] == BASE["coll_perf"]["coll_sn"]
    agg = inspector.Aggregator()
    agg.feed("f", ("1", ""), record, 0.0)
    bus = _samples_of(inspector.render(agg), "ibtune_nccl_collective_bus_bytes_total")
    assert list(bus.values()) == [0.0]


def test_the_readme_pretty_printed_example_is_skipped_not_fatal():
    """NVIDIA's README shows the records indented over many lines; the plugin writes one per line. Indented
    input is refused line by line, and nothing is counted from it."""
    pretty = json.dumps(BASE, indent=2).encode()
    lines, rest = inspector.split_lines(pretty + b"\n")
    reasons = set()
    for line in lines:
        try:
            inspector.parse_line(line)
        except inspector.Skip as skip:
            reasons.add(skip.reason)
    assert rest == b"" and reasons <= {"not_json", "not_an_object"} and reasons


def test_split_lines_keeps_a_partial_last_line_until_the_writer_is_gone():
    data = b'{"a": 1}\n{"b": 2}\n{"c":'
    lines, rest = inspector.split_lines(data)
    assert lines == [b'{"a": 1}', b'{"b": 2}'] and rest == b'{"c":'
    lines, rest = inspector.split_lines(data, final=True)
    assert lines[-1] == b'{"c":' and rest == b""
    assert inspector.split_lines(b"\n\n\x00\x00\n")[0] == []


def test_duplicates_and_restarted_communicators():
    record = dict(_records(FIXTURES / "interval-1s" / "vm-pid1198.log")[0])
    agg = inspector.Aggregator()
    job = ("7", "")
    assert agg.feed("f", job, record, 0.0)
    assert not agg.feed("f", job, dict(record), 1.0)  # the same sample twice
    assert agg.skipped["duplicate"] == 1
    agg.feed("f", job, dict(record, sn=record["sn"] + 10), 2.0)
    agg.feed("f", job, dict(record, sn=4), 3.0)  # lower: a new communicator with the same hash
    total = sum(_samples_of(inspector.render(agg), "ibtune_nccl_collectives_total").values())
    assert total == (record["sn"] + 1) + 10 + 5


def _synthetic(n_collectives, shapes=4, seed=7):
    """A job of n collectives over several communicators, 8 ranks on this node, every collective kind, message
    sizes from 1 byte to 16 GiB, every one of them a sample."""
    rng = random.Random(seed)
    comms = ["0x%014x" % rng.getrandbits(56) for _unused in range(shapes * 3)]
    shape_of = {c: (2 ** (1 + i % shapes), 1 + i % shapes) for i, c in enumerate(comms)}
    seq = {}
    for _unused in range(n_collectives):
        comm, rank, coll = rng.choice(comms), rng.randrange(8), rng.choice(inspector.COLLECTIVES)
        sn = seq.get((comm, rank, coll), -1) + 1
        seq[(comm, rank, coll)] = sn
        size = 2 ** rng.randrange(0, 35)
        nranks, nnodes = shape_of[comm]
        yield {
            "version": "v4.0",
            "comm": comm,
            "rank": rank,
            "nranks": nranks,
            "nnodes": nnodes,
            "hostname": "n1",
            "pid": 100 + rank,
            "time": 0.0,
            "coll": coll,
            "sn": sn,
            "bytes": size,
            "seconds": size / 40e9 + 5e-6,
            "busbw_gbs": 40.0,
            "timing_source": "kernel_gpu",
        }


def _feed_all(agg, records, job=("99", "")):
    for record in records:
        agg.feed("pid%d" % record["pid"], job, record, 0.0)
    return agg


def test_cardinality_is_bounded_on_a_10000_collective_job():
    small = _feed_all(inspector.Aggregator(), _synthetic(1000))
    big = _feed_all(inspector.Aggregator(), _synthetic(10000))
    per_job = 4 * len(inspector.COLLECTIVES) * (len(inspector.SIZE_BUCKETS) + 1) * 4
    assert big.series_count() <= per_job + 4 + 2 + len(inspector.SKIP_REASONS) + 1
    assert big.series_count() <= inspector.max_series()
    # ten times the collectives, the same series: nothing grows with the number of calls
    assert big.series_count() - small.series_count() <= 4 * 8 * 4
    text = inspector.render(big)
    label_names = {name for _n, labels, _v in samples(text) for name in labels}
    assert label_names == {"job_id", "pod", "nranks", "nnodes", "collective", "size_le", "reason"}
    total = sum(_samples_of(text, "ibtune_nccl_collectives_total").values())
    assert total == 10000


def test_communicator_shapes_and_jobs_fold_past_their_limits():
    agg = inspector.Aggregator(max_jobs=3, max_shapes=2)
    records = list(_synthetic(3000, shapes=6))
    for i, record in enumerate(records):
        agg.feed("f%d" % (i % 10), ("job%d" % (i % 10), ""), record, 0.0)
    assert agg.series_count() <= inspector.max_series(max_jobs=3, max_shapes=2)
    keys = set(agg.jobs)
    assert len(keys) == 4 and (inspector.OVERFLOW_JOB, "") in keys
    for job in agg.jobs.values():
        assert len(job["shapes"]) <= 3
    text = inspector.render(agg)
    assert 'nranks="_other"' in text


def test_dead_jobs_expire_and_live_ones_stay():
    agg = inspector.Aggregator(expire_seconds=600)
    record = _records(FIXTURES / "interval-1s" / "vm-pid1198.log")[0]
    agg.feed("a", ("1", ""), record, 1000.0)
    agg.feed("b", ("2", ""), record, 1000.0)
    assert agg.expire(1500.0) == []
    assert agg.expire(1700.0, alive_jobs={("2", "")}) == [("1", "")]
    text = inspector.render(agg)
    assert 'job_id="1"' not in text and 'job_id="2"' in text
    assert "ibtune_nccl_inspector_expired_jobs_total 1" in text
    agg.touch(("2", ""), "b", 1650.0)
    assert agg.expire(2200.0) == []
    assert agg.expire(2300.0) == [("2", "")]


@pytest.mark.parametrize(
    ("relpath", "environ", "expected"),
    [
        ("vm-pid12.log", {"SLURM_JOB_ID": "4242"}, ("4242", "")),
        ("vm-pid12.log", {"SLURM_JOBID": "17"}, ("17", "")),
        ("4243/vm-pid12.log", None, ("4243", "")),
        ("nccl-inspector-88/vm-pid12.log", None, ("88", "")),
        ("555_3/vm-pid12.log", {}, ("555_3", "")),
        ("logs/vm-pid12.log", {}, ("unknown", "")),
        ("vm-pid12.log", {"SLURM_JOB_ID": "$(rm -rf)"}, ("unknown", "")),
        ("vm-pid12.log", {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "train-0"}, ("unknown", "train-0")),
        ("vm-pid12.log", {"KUBERNETES_SERVICE_HOST": "x", "POD_NAME": "p-1", "SLURM_JOB_ID": "9"}, ("9", "p-1")),
        ("vm-pid12.log", {"HOSTNAME": "login01"}, ("unknown", "")),
    ],
)
def test_job_identity(relpath, environ, expected):
    assert inspector.job_identity(relpath, environ) == expected


def test_file_identity():
    assert inspector.file_identity("4243/vm-pid1300.log") == ("vm", 1300)
    assert inspector.file_identity("gpu-node-07.cluster-pid9.log") == ("gpu-node-07.cluster", 9)
    assert inspector.file_identity("notes.txt") is None
    assert inspector.file_identity("vm-pid.log") is None


def test_size_buckets():
    assert inspector.size_bucket(0) == "64KiB"
    assert inspector.size_bucket(64 << 10) == "64KiB"
    assert inspector.size_bucket((64 << 10) + 1) == "1MiB"
    assert inspector.size_bucket(64 << 20) == "256MiB"
    assert inspector.size_bucket(16 << 30) == "+Inf"
