# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL Inspector output -> Prometheus metrics per job, communicator, collective and message-size bucket.

The NCCL Inspector profiler plugin (NCCL's ext-profiler/inspector, output format v4.0 in NCCL 2.28) writes one
JSON object per line to ``<dump dir>/<hostname>-pid<pid>.log``::

    {"header": {"id": "0x...", "rank": 0, "n_ranks": 2, "nnodes": 2},
     "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "...", "rec_mechanism": "...",
                  "dump_timestamp_us": 1764..., "hostname": "...", "pid": 1234},
     "coll_perf": {"coll": "AllReduce", "coll_sn": 1407, "coll_msg_size_bytes": 17179869184,
                   "coll_exec_time_us": 61974, "coll_timing_source": "kernel_gpu",
                   "coll_algobw_gbs": 277.2, "coll_busbw_gbs": 485.1}}

Its dump thread writes, per communicator, only the LAST collective completed since its previous pass (one
``completedCollInfo`` per communicator, inspector.cc), so the file is a sample. ``coll_sn`` is NCCL's own
per-communicator, per-collective-type sequence number (``comm->seqNumber[func]``, incremented for every
collective, src/plugin/profiler.cc), so the gap between two samples counts the collectives in between exactly.
Each sample stands for the collectives since the previous one: the count is exact, time and bytes are the
sample's times that gap (exact when every collective is sampled).

Cardinality is bounded by construction: labels are job, pod, the communicator's shape (its ``nranks`` and
``nnodes``: the 8-rank tensor-parallel group and the 512-rank data-parallel one stay apart, while the random
communicator hashes, one per group, never become labels; at most ``max_shapes`` shapes per job, the rest fold
into ``nranks="_other"``), collective (NCCL's function names) and one of ``len(SIZE_BUCKETS) + 1`` size buckets;
at most ``max_jobs`` jobs at once (the rest fold into ``job_id="_overflow"``). Nothing per call, per
communicator, per rank or per pid is a label. Pure: the service (training_exporter.py) reads, this decides.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import posixpath
import re

FORMAT_MAJOR = "v4"
# NCCL's ncclFunc names as the Inspector prints them (inspector.cc ncclFuncToString).
COLLECTIVES = ("AllGather", "AllReduce", "Broadcast", "Recv", "Reduce", "ReduceScatter", "SendRecv", "Send")
# Upper bounds of the message-size buckets (bytes) and their label values; larger messages are "+Inf".
SIZE_BUCKETS = (
    (64 << 10, "64KiB"),
    (1 << 20, "1MiB"),
    (16 << 20, "16MiB"),
    (256 << 20, "256MiB"),
    (4 << 30, "4GiB"),
)
SIZE_INF = "+Inf"
OTHER_SHAPE = ("_other", "_other")
OVERFLOW_JOB = "_overflow"
UNKNOWN_JOB = "unknown"
DEFAULTS = {"max_jobs": 16, "max_shapes": 16, "expire_seconds": 600.0}
# Why a line was not used (the values of the skipped-lines counter's reason label: a fixed set).
SKIP_REASONS = (
    "not_json",
    "not_an_object",
    "missing_field",
    "bad_value",
    "unsupported_version",
    "too_long",
    "duplicate",
)
MAX_LINE_BYTES = 65536
_COMM_RE = re.compile(r"^0x[0-9a-fA-F]{1,32}$")
_FILE_RE = re.compile(r"^(?P<host>.+)-pid(?P<pid>[0-9]{1,10})\.log$")
_JOB_DIR_RE = re.compile(r"^(?:nccl-inspector-)?(?P<job>[0-9]{1,12}(?:_[0-9]{1,9})?)$")
_LABEL_SAFE_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_FIELDS = {
    "header": ("id", "rank", "n_ranks", "nnodes"),
    "metadata": ("inspector_output_format_version", "dump_timestamp_us", "hostname", "pid"),
    "coll_perf": ("coll", "coll_sn", "coll_msg_size_bytes", "coll_exec_time_us"),
}


class Skip(Exception):
    """A line the exporter does not use; ``reason`` is one of SKIP_REASONS."""

    def __init__(self, reason, detail=""):
        Exception.__init__(self, "%s: %s" % (reason, detail) if detail else reason)
        self.reason = reason


def size_bucket(size_bytes):
    """The size label of a message: the smallest bucket bound it fits under, or "+Inf"."""
    for bound, label in SIZE_BUCKETS:
        if size_bytes <= bound:
            return label
    return SIZE_INF


def _int_field(value, name, minimum=0):
    # bool is an int in Python; JSON true/false are no counts
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise Skip("bad_value", "%s=%r" % (name, value))
    return value


def _number_field(value, name):
    """A finite non-negative number; the Inspector writes NaN as the string "nan" (json.cc): None."""
    if value == "nan":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or math.isinf(value):
        raise Skip("bad_value", "%s=%r" % (name, value))
    return float(value)


def _sections(doc):
    if not isinstance(doc, dict):
        raise Skip("not_an_object")
    for section, fields in _FIELDS.items():
        part = doc.get(section)
        if not isinstance(part, dict):
            raise Skip("missing_field", section)
        missing = [f for f in fields if f not in part]
        if missing:
            raise Skip("missing_field", "%s.%s" % (section, missing[0]))
    return doc["header"], doc["metadata"], doc["coll_perf"]


def _version(meta):
    version = meta["inspector_output_format_version"]
    if not isinstance(version, str) or version.split(".")[0] != FORMAT_MAJOR:
        raise Skip("unsupported_version", repr(version))
    return version


def _text_field(value, name, pattern=_LABEL_SAFE_RE):
    if not isinstance(value, str) or not pattern.match(value):
        raise Skip("bad_value", "%s=%r" % (name, value))
    return value


def parse_record(doc):
    """One decoded Inspector object -> a flat record; raises Skip naming why it cannot be used."""
    header, meta, perf = _sections(doc)
    coll = perf["coll"]
    if coll not in COLLECTIVES:
        raise Skip("bad_value", "coll=%r" % (coll,))
    return {
        "version": _version(meta),
        "comm": _text_field(header["id"], "id", _COMM_RE).lower(),
        "rank": _int_field(header["rank"], "rank"),
        "nranks": _int_field(header["n_ranks"], "n_ranks", 1),
        "nnodes": _int_field(header["nnodes"], "nnodes", 1),
        "hostname": _text_field(meta["hostname"], "hostname"),
        "pid": _int_field(meta["pid"], "pid"),
        "time": _int_field(meta["dump_timestamp_us"], "dump_timestamp_us") / 1e6,
        "coll": coll,
        "sn": _int_field(perf["coll_sn"], "coll_sn"),
        "bytes": _int_field(perf["coll_msg_size_bytes"], "coll_msg_size_bytes"),
        "seconds": _number_field(perf["coll_exec_time_us"], "coll_exec_time_us") / 1e6,
        "busbw_gbs": _number_field(perf.get("coll_busbw_gbs", "nan"), "coll_busbw_gbs"),
        "timing_source": perf.get("coll_timing_source") if isinstance(perf.get("coll_timing_source"), str) else "",
    }


def parse_line(line):
    """A line of an Inspector file (bytes or text) -> a record; raises Skip (blank lines are not passed here)."""
    if len(line) > MAX_LINE_BYTES:
        raise Skip("too_long", "%d bytes" % len(line))
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    # a hole punched into a live file (training_exporter's rotation) reads as NUL bytes before the next line
    line = line.lstrip("\x00").strip()
    try:
        doc = json.loads(line)
    except ValueError as exc:
        raise Skip("not_json", str(exc)[:80])
    return parse_record(doc)


def split_lines(buffer, final=False):
    """(complete lines, rest): only lines ended by a newline are complete while the writer may still append;
    ``final`` (the writer is gone) makes the rest a line too. Blank lines are dropped."""
    parts = buffer.split(b"\n")
    rest = parts.pop()
    if final and rest.strip(b"\x00 \t\r"):
        parts.append(rest)
        rest = b""
    return [p for p in parts if p.strip(b"\x00 \t\r")], rest


def file_identity(relpath):
    """(hostname, pid) from an Inspector file name ``<hostname>-pid<pid>.log``, or None for another file."""
    match = _FILE_RE.match(posixpath.basename(relpath))
    if not match:
        return None
    return match.group("host"), int(match.group("pid"))


def job_from_path(relpath):
    """The Slurm job id a file's directory names (relative to the dump dir): ``<job>/`` or
    ``nccl-inspector-<job>/`` (the Inspector's own default), as NVIDIA's README lays logs out; else None."""
    for part in posixpath.dirname(relpath).split("/"):
        match = _JOB_DIR_RE.match(part)
        if match:
            return match.group("job")
    return None


def job_from_environ(environ):
    """(job id or None, pod or "") from a process environment: Slurm's SLURM_JOB_ID (SLURM_JOBID before 17.x),
    and on Kubernetes the downward-API POD_NAME or else HOSTNAME (a pod's hostname is its name)."""
    environ = environ or {}
    job = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if job is not None and not _JOB_DIR_RE.match(job):
        job = None
    pod = ""
    if environ.get("KUBERNETES_SERVICE_HOST"):
        pod = environ.get("POD_NAME") or environ.get("HOSTNAME") or ""
    if pod and not _LABEL_SAFE_RE.match(pod):
        pod = ""
    return job, pod


def job_identity(relpath, environ=None):
    """(job_id, pod) of an Inspector file: the process environment first, then the directory, else "unknown"."""
    job, pod = job_from_environ(environ)
    return job or job_from_path(relpath) or UNKNOWN_JOB, pod


class Aggregator:
    """Cumulative series per job; feed() records in file order, expire() drops dead jobs, render() writes text.

    A series is (job_id, pod, nranks, nnodes, collective, size) -> [collectives, seconds, bytes, bus bytes];
    totals only grow while the job lives (a file that ends keeps its contribution), so every counter is monotonic.
    """

    def __init__(
        self,
        max_jobs=DEFAULTS["max_jobs"],
        max_shapes=DEFAULTS["max_shapes"],
        expire_seconds=DEFAULTS["expire_seconds"],
    ):
        self.max_jobs = max_jobs
        self.max_shapes = max_shapes
        self.expire_seconds = expire_seconds
        self.jobs = {}
        self.skipped = dict((reason, 0) for reason in SKIP_REASONS)
        self.expired_jobs = 0

    def _job(self, key, now):
        if key not in self.jobs and len(self.jobs) >= self.max_jobs:
            key = (OVERFLOW_JOB, "")
        if key not in self.jobs:
            self.jobs[key] = {"series": {}, "shapes": {}, "last_sn": {}, "files": {}, "records": 0, "last_record": now}
        return key, self.jobs[key]

    def _shape(self, job, record):
        shape = (str(record["nranks"]), str(record["nnodes"]))
        if shape not in job["shapes"] and len(job["shapes"]) >= self.max_shapes:
            shape = OTHER_SHAPE
        job["shapes"].setdefault(shape, set()).add(record["comm"])
        return shape

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def feed(self, file_key, job_key, record, now):
        """Count one record of file ``file_key`` for job ``job_key`` ((job_id, pod)); False when a duplicate."""
        _key, job = self._job(job_key, now)
        seq = (file_key, record["comm"], record["rank"], record["coll"])
        last = job["last_sn"].get(seq)
        if last is not None and record["sn"] == last:
            self.skip("duplicate")
            return False
        # the first sample stands for every collective of its kind since the communicator began (sn counts from
        # 0); a lower sn than the last one is a new communicator with the same hash
        gap = record["sn"] - last if last is not None and record["sn"] > last else record["sn"] + 1
        job["last_sn"][seq] = record["sn"]
        shape = self._shape(job, record)
        values = job["series"].setdefault(shape + (record["coll"], size_bucket(record["bytes"])), [0, 0.0, 0, 0.0])
        values[0] += gap
        values[1] += record["seconds"] * gap
        values[2] += record["bytes"] * gap
        if record["busbw_gbs"] is not None:
            values[3] += record["busbw_gbs"] * 1e9 * record["seconds"] * gap
        job["records"] += 1
        job["last_record"] = max(job["last_record"], now)
        job["files"][file_key] = now
        return True

    def touch(self, job_key, file_key, now):
        """A file of the job still grows or its process still runs: keep the job alive."""
        if job_key in self.jobs:
            self.jobs[job_key]["files"][file_key] = now

    def expire(self, now, alive_jobs=()):
        """Drop every job that had no sign of life for expire_seconds and none of whose processes is known to
        run (``alive_jobs``); returns the dropped (job_id, pod) keys."""
        dead = []
        for key, job in self.jobs.items():
            last = max([job["last_record"]] + list(job["files"].values()))
            if key not in alive_jobs and now - last > self.expire_seconds:
                dead.append(key)
        for key in dead:
            del self.jobs[key]
        self.expired_jobs += len(dead)
        return dead

    def series_count(self):
        """Number of samples render() writes (what Prometheus stores per scrape of this file)."""
        return sum(1 for line in render(self).splitlines() if line and not line.startswith("#"))


_COUNTERS = (
    (
        "ibtune_nccl_collectives_total",
        "counter",
        0,
        "Collectives completed (NCCL's per-communicator sequence numbers), summed over this node's ranks.",
    ),
    (
        "ibtune_nccl_collective_seconds_total",
        "counter",
        1,
        "Time spent in collectives (Inspector's measured execution time of each sample x the collectives it stands "
        "for), summed over this node's ranks.",
    ),
    (
        "ibtune_nccl_collective_bytes_total",
        "counter",
        2,
        "Message bytes of those collectives (algorithm bandwidth = rate of this / rate of the seconds).",
    ),
    (
        "ibtune_nccl_collective_bus_bytes_total",
        "counter",
        3,
        "Bus bytes (Inspector's busbw x time; bus bandwidth = rate of this / rate of the seconds).",
    ),
)


def _escape(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs):
    return "{" + ",".join('%s="%s"' % (name, _escape(value)) for name, value in pairs) + "}"


def _number(value):
    if isinstance(value, float):
        return repr(round(value, 9))
    return str(value)


def _series_lines(agg, index):
    lines = []
    for (job_id, pod), job in sorted(agg.jobs.items()):
        for (nranks, nnodes, coll, size), values in sorted(job["series"].items()):
            labels = _labels(
                (
                    ("job_id", job_id),
                    ("pod", pod),
                    ("nranks", nranks),
                    ("nnodes", nnodes),
                    ("collective", coll),
                    ("size_le", size),
                )
            )
            lines.append("%s %s" % (labels, _number(values[index])))
    return lines


def _job_lines(agg):
    out = {"records": [], "comm": [], "last": []}
    for (job_id, pod), job in sorted(agg.jobs.items()):
        base = (("job_id", job_id), ("pod", pod))
        out["records"].append("%s %d" % (_labels(base), job["records"]))
        out["last"].append("%s %s" % (_labels(base), _number(float(job["last_record"]))))
        for (nranks, nnodes), comms in sorted(job["shapes"].items()):
            labels = base + (("nranks", nranks), ("nnodes", nnodes))
            out["comm"].append("%s %d" % (_labels(labels), len(comms)))
    return out


def _family(name, kind, help_text, samples):
    lines = ["# HELP %s %s" % (name, help_text), "# TYPE %s %s" % (name, kind)]
    return lines + [name + ("" if sample.startswith("{") else " ") + sample for sample in samples]


def render(agg):
    """The Prometheus text exposition of everything the aggregator holds (stable order)."""
    lines = []
    for name, kind, index, help_text in _COUNTERS:
        lines += _family(name, kind, help_text, _series_lines(agg, index))
    per_job = _job_lines(agg)
    lines += _family(
        "ibtune_nccl_communicators",
        "gauge",
        "Communicators of this shape (nranks ranks on nnodes nodes) the job's ranks on this node use.",
        per_job["comm"],
    )
    lines += _family(
        "ibtune_nccl_inspector_records_total", "counter", "Inspector samples used for the job.", per_job["records"]
    )
    lines += _family(
        "ibtune_nccl_inspector_last_record_timestamp_seconds",
        "gauge",
        "When the exporter last read a sample of the job.",
        per_job["last"],
    )
    lines += _family(
        "ibtune_nccl_inspector_skipped_lines_total",
        "counter",
        "Lines of Inspector files not used, by reason (malformed, partial, duplicate...).",
        ['{reason="%s"} %d' % (r, n) for r, n in sorted(agg.skipped.items())],
    )
    lines += _family(
        "ibtune_nccl_inspector_expired_jobs_total",
        "counter",
        "Jobs whose series were dropped after they stopped.",
        ["%d" % agg.expired_jobs],
    )
    return "\n".join(lines) + "\n"


def max_series(max_jobs=DEFAULTS["max_jobs"], max_shapes=DEFAULTS["max_shapes"]):
    """The most samples render() can ever write, whatever the job does: the bound the cardinality test checks."""
    shapes = max_shapes + 1
    per_job = shapes * len(COLLECTIVES) * (len(SIZE_BUCKETS) + 1) * len(_COUNTERS) + shapes + 2
    return (max_jobs + 1) * per_job + len(SKIP_REASONS) + 1
