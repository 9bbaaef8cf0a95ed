# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one registry of perftest test kinds: bandwidth (write, read, send) and latency (write_lat,
read_lat, send_lat), as data, with the functions every caller uses instead of naming a tool.

- ``TEST_KINDS[test]``: the facts of one test (see _entry below for the keys).
- ``kind_of(test)``: ``"bandwidth"`` or ``"latency"``; ValueError naming the valid tests.
- ``validate_params(test, params)``: sentences about unusable parameters (empty when fine).
- ``build_argv(test, params, json_file=None)``: the argument vector (a list, never a shell string), the one
  builder of every test: what differs between the tools is the entry's ``options``.
- ``parse(test, output)``: the parsed console report (perftest.parse_text / perftest_lat.parse_lat_text).
- ``measurement(test, parsed)``: the headline figures as flat keys (None where not printed).
- ``classify_failure(test, stdout, stderr, rc, parsed=None, role=None)``: {kind, message, hint} or None.

``params`` are the modules' option names: role, server, device, ib_port, gid_index, tcp_port, size,
duration, iterations, use_cuda, executable, extra_args (bandwidth also: qps, bidirectional,
report_gbits, out_json).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import latency as perftest_lat

BANDWIDTH = "bandwidth"
LATENCY = "latency"

BANDWIDTH_METRICS = ("bw_avg_gbps", "bw_peak_gbps", "msg_rate_mpps", "msg_size", "iterations")
LATENCY_METRICS = (
    "t_min_us",
    "t_max_us",
    "t_typical_us",
    "t_avg_us",
    "t_stdev_us",
    "p99_us",
    "p999_us",
    "msg_size",
    "iterations",
    "latency_us",
    "latency_basis",
    "tps_avg",
)

_TITLES = {"write": "RDMA_Write", "read": "RDMA_Read", "send": "Send"}
BANDWIDTH_OPTIONS = ("qps", "bidirectional", "report_gbits", "out_json")
LATENCY_OPTIONS = ("iterations",)
DEFAULT_TCP_PORT = 18515


def _entry(verb, kind):
    lat = kind == LATENCY
    return {
        "test": "%s_lat" % verb if lat else verb,
        "kind": kind,
        "verb": verb,  # write | read | send
        "executable": "ib_%s_%s" % (verb, "lat" if lat else "bw"),
        "title": "%s %s Test" % (_TITLES[verb], "Latency" if lat else "BW"),
        # Does the server side print the result table? Not ib_read_lat's (src/read_lat.c).
        "server_reports": not (lat and verb == "read"),
        "default_size": perftest_lat.DEFAULT_SIZE if lat else 65536,
        "default_iterations": perftest_lat.DEFAULT_ITERATIONS if lat else (5000 if verb == "write" else 1000),
        "metrics": LATENCY_METRICS if lat else BANDWIDTH_METRICS,
        # The figure a gate looks at, its unit and which way is better.
        "headline": "latency_us" if lat else "bw_avg_gbps",
        "unit": "us" if lat else "Gb/s",
        "better": "lower" if lat else "higher",
        # The largest size is the bandwidth headline, the smallest the latency one.
        "headline_size": "smallest" if lat else "largest",
        # The options only this kind of tool takes (-n: latency; -q, -b, --report_gbits, --out_json: bandwidth).
        "options": LATENCY_OPTIONS if lat else BANDWIDTH_OPTIONS,
    }


TEST_KINDS = dict(
    (entry["test"], entry)
    for entry in [_entry(verb, BANDWIDTH) for verb in ("write", "read", "send")]
    + [_entry(verb, LATENCY) for verb in ("write", "read", "send")]
)
TESTS = tuple(TEST_KINDS)
BANDWIDTH_TESTS = tuple(t for t in TESTS if TEST_KINDS[t]["kind"] == BANDWIDTH)
LATENCY_TESTS = tuple(t for t in TESTS if TEST_KINDS[t]["kind"] == LATENCY)


def get(test):
    """The registry entry of a test; ValueError naming the valid tests for an unknown one."""
    try:
        return TEST_KINDS[test]
    except (KeyError, TypeError):
        raise ValueError("unknown perftest test %r: use one of %s" % (test, ", ".join(TESTS)))


def kind_of(test):
    return get(test)["kind"]


def is_latency(test):
    return kind_of(test) == LATENCY


def executable(test, params=None):
    """The program to run: params' executable when set, else the registry's ib_<verb>_<bw|lat>."""
    return (params or {}).get("executable") or get(test)["executable"]


# --------------------------------------------------------------------------------------------
# parameters and argv


def _size_is_all(size):
    return str(size).strip().lower() == "all"


def _common_problems(params, options):
    """What every tool refuses: a client without server, a bad size, port, duration or count."""
    problems = []
    if params.get("role") == "client" and not params.get("server"):
        problems.append("role=client needs server (the address of the host running the server side)")
    size = params.get("size")
    if size is not None and not _size_is_all(size):
        try:
            if int(str(size)) <= 0:
                raise ValueError
        except ValueError:
            problems.append("size=%r is neither a positive number of bytes nor 'all'" % (size,))
    for name in ("qps", "ib_port"):
        value = params.get(name) if name in options or name == "ib_port" else None
        if value is not None and int(value) < 1:
            problems.append("%s=%s must be at least 1" % (name, value))
    port = params.get("tcp_port")
    if port is not None and not 1 <= int(port) <= 65535:
        problems.append("tcp_port=%s is not a TCP port (1..65535)" % port)
    duration = params.get("duration")
    if duration is not None and int(duration) < 1:
        problems.append("duration=%s must be at least 1 second (or unset for an iteration count)" % duration)
    if duration is not None and size is not None and _size_is_all(size):
        problems.append("size=all (-a) and duration (-D) cannot be combined: perftest rejects it")
    return problems


def _iteration_problems(params):
    iterations = params.get("iterations")
    if iterations is None:
        return []
    problems = []
    try:
        if int(iterations) < perftest_lat.MIN_ITERATIONS:
            raise ValueError
    except (TypeError, ValueError):
        problems.append(
            "iterations=%r must be a whole number of at least %d (perftest's minimum)"
            % (iterations, perftest_lat.MIN_ITERATIONS)
        )
    if params.get("duration"):
        problems.append("iterations (-n) and duration (-D) cannot be combined: perftest ignores -n with -D")
    return problems


def validate_params(test, params):
    """Problems (sentences) with the parameters for this test; empty when usable."""
    options = get(test)["options"]
    problems = _common_problems(params, options)
    if "iterations" in options:
        problems += _iteration_problems(params)
    if "out_json" not in options and params.get("out_json"):
        problems.append("out_json is not supported for latency tests: the console table is parsed")
    return problems


def _size_argv(size, default):
    size = default if size is None else size
    return ["-a"] if _size_is_all(size) else ["-s", str(int(str(size)))]


def _json_argv(params, json_file, options):
    if "out_json" not in options:
        if params.get("out_json") or json_file:
            raise ValueError("out_json is not supported for latency tests")
        return []
    if not params.get("out_json"):
        return []
    if not json_file:
        raise ValueError("out_json needs a json_file path")
    return ["--out_json", "--out_json_file=%s" % json_file]


def build_argv(test, params, json_file=None):
    """The perftest argument vector for this test, one builder for every tool:

    [executable, -d dev, -i port, (-x gid)?, (-q qps)?, -s size | -a, (-D secs | -n iterations)?, (-b)?,
     (--use_cuda=<n>)?, -p tcp_port, (--report_gbits)?, -F, (--out_json --out_json_file=F)?, *extra_args,
     server (client only)]

    -q, -b, --report_gbits and --out_json are the bandwidth tools' (``options`` of the entry), -n the latency
    tools' (which print usec without an option); -F keeps a CPU frequency warning from failing the run.
    """
    entry = get(test)
    options = entry["options"]
    json_argv = _json_argv(params, json_file, options)
    argv = [executable(test, params), "-d", str(params["device"]), "-i", str(params.get("ib_port") or 1)]
    if params.get("gid_index") is not None:
        argv += ["-x", str(params["gid_index"])]
    if "qps" in options:
        argv += ["-q", str(params.get("qps") or 1)]
    argv += _size_argv(params.get("size"), entry["default_size"])
    if params.get("duration"):
        argv += ["-D", str(params["duration"])]
    elif "iterations" in options and params.get("iterations"):
        argv += ["-n", str(int(params["iterations"]))]
    if "bidirectional" in options and params.get("bidirectional"):
        argv.append("-b")
    if params.get("use_cuda") is not None:
        argv.append("--use_cuda=%s" % params["use_cuda"])
    argv += ["-p", str(params.get("tcp_port") or DEFAULT_TCP_PORT)]
    if "report_gbits" in options and params.get("report_gbits", True):
        argv.append("--report_gbits")
    argv.append("-F")
    argv += json_argv + [str(a) for a in (params.get("extra_args") or [])]
    if params.get("role") == "client":
        argv.append(str(params["server"]))
    return argv


# --------------------------------------------------------------------------------------------
# results


def parse(test, output):
    """The console report parsed: perftest.parse_text (bandwidth) or perftest_lat.parse_lat_text."""
    if is_latency(test):
        return perftest_lat.parse_lat_text(output)
    return perftest.parse_text(output)


def measurement(test, parsed):
    """The headline figures as flat keys, None where perftest printed no such value.

    Bandwidth: bw_avg_gbps, bw_peak_gbps, msg_rate_mpps, msg_size, iterations (largest size).
    Latency: t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, p99_us, p999_us, msg_size,
    iterations, tps_avg (smallest size), plus latency_us: the value a latency gate checks, the
    typical (median) latency or, where perftest prints only the average (-D, --output=latency),
    t_avg_us; latency_basis says which ("t_typical" / "t_avg").
    """
    entry = get(test)
    out = dict((key, None) for key in entry["metrics"])
    head = (parsed or {}).get("headline")
    if not head:
        return out
    if entry["kind"] == BANDWIDTH:
        for key in BANDWIDTH_METRICS:
            out[key] = head.get(key)
        return out
    for key in entry["metrics"]:
        if key in head:
            out[key] = head[key]
    out["latency_us"], out["latency_basis"] = perftest_lat.headline_latency(head)
    return out


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def has_result(test, parsed):
    return bool((parsed or {}).get("rows"))


def classify_failure(test, stdout, stderr, rc, parsed=None, role=None):
    """Classify a finished run of this test; None when it succeeded.

    The known failures (no device, connect, port busy, QP to RTR, memory registration, completion
    error, crash, unknown exit code) are perftest.classify_failure's, the same in every tool. A run
    that exited 0 without a result table is a failure, except the server side of a test whose
    server prints none (ib_read_lat): ``role="server"`` says which side ran; without ``role`` a side
    that printed perftest's "Waiting for client to connect" banner is taken for the server.
    """
    entry = get(test)
    if parsed is None:
        parsed = parse(test, _text(stdout) + "\n" + _text(stderr))
    if role is None and parsed.get("server_banner"):
        role = "server"
    expect_table = entry["server_reports"] or role != "server"
    return perftest.classify_failure(stdout, stderr, rc, parsed, expect_table=expect_table)
