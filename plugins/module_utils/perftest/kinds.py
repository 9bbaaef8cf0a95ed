# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one registry of perftest test kinds: bandwidth (write, read, send) and latency (write_lat,
read_lat, send_lat), as data, with the functions every caller uses instead of naming a tool.

- ``TEST_KINDS[test]``: the facts of one test (see _entry below for the keys).
- ``kind_of(test)``: ``"bandwidth"`` or ``"latency"``; ValueError naming the valid tests.
- ``validate_params(test, params)``: sentences about unusable parameters (empty when fine).
- ``build_argv(test, params, json_file=None)``: the argument vector (a list, never a shell string).
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


def validate_params(test, params):
    """Problems (sentences) with the parameters for this test; empty when usable."""
    if not is_latency(test):
        return perftest.validate_params(params)
    problems = perftest.validate_params(dict(params, qps=None))
    iterations = params.get("iterations")
    if iterations is not None:
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
    if params.get("out_json"):
        problems.append("out_json is not supported for latency tests: the console table is parsed")
    return problems


def build_argv(test, params, json_file=None):
    """The perftest argument vector for this test.

    Bandwidth: perftest.build_argv (see there). Latency:
    [executable, -d dev, -i port, (-x gid)?, -s size | -a, (-D secs)?, (-n iterations)?,
     (--use_cuda=<n>)?, -p tcp_port, -F, *extra_args, server (client only)]
    perftest's latency tools print usec without an option (no --report_gbits); -F keeps a CPU
    frequency warning from failing the run.
    """
    entry = get(test)
    if entry["kind"] == BANDWIDTH:
        return perftest.build_argv(dict(params, test=entry["verb"], executable=executable(test, params)), json_file)
    if params.get("out_json") or json_file:
        raise ValueError("out_json is not supported for latency tests")
    argv = [executable(test, params)]
    argv += ["-d", str(params["device"]), "-i", str(params.get("ib_port") or 1)]
    if params.get("gid_index") is not None:
        argv += ["-x", str(params["gid_index"])]
    size = params.get("size")
    if size is None:
        size = entry["default_size"]
    if _size_is_all(size):
        argv.append("-a")
    else:
        argv += ["-s", str(int(str(size)))]
    if params.get("duration"):
        argv += ["-D", str(params["duration"])]
    elif params.get("iterations"):
        argv += ["-n", str(int(params["iterations"]))]
    if params.get("use_cuda") is not None:
        argv.append("--use_cuda=%s" % params["use_cuda"])
    argv += ["-p", str(params.get("tcp_port") or perftest.DEFAULT_TCP_PORT)]
    argv.append("-F")
    argv += [str(a) for a in (params.get("extra_args") or [])]
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
