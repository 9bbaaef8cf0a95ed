# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the perftest_bw and perftest_lat modules do: one side of one test, by one path for every test kind.

run(params, host, check_mode) checks the parameters (kinds.validate_params and the gate's settings), builds the
argument vector (kinds.build_argv), runs the side with retry (run.run_with_retry), parses and classifies it
(kinds.parse, kinds.classify_failure), reads its figures (kinds.measurement) and judges them (gate.py). What a
bandwidth and a latency side do differently (the JSON report file, the figures returned, the gate's sentences) is
the two small classes below. ``host`` is the module (get_bin_path); ModuleError carries the failure sentence and
the result so far.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex
import shutil
import tempfile

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import read_port_rate_gbps
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth, gate, kinds
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import run as perftest_run

BELOW_HINT = "check the link's error counters, its rate and PCIe width (ib_facts), and the peer"
ABOVE_HINT = "check the link's error counters (ib_counters), its rate and the peer, and that no other traffic shares it"


def _common_result(**fields):
    """The keys every side returns, before anything ran."""
    return dict(changed=False, passed=None, failure=None, cmd=[], stdout="", stderr="", rc=None, attempts=0, **fields)


def format_gbps(value):
    return "%.1f" % float(value)


def format_us(value):
    return "%.2f" % float(value)


def _fmt(value):
    value = float(value)
    return ("%d" % value) if value.is_integer() else ("%g" % value)


class _Side(object):
    """One side of one test: the steps every kind shares; a kind's class fills in the rest."""

    module = None  # the module's name, for its one-sentence failures

    def __init__(self, params, host, check_mode):
        self.params = params
        self.host = host
        self.check_mode = check_mode
        self.test = params["test"]
        self.where = perftest_run.where(kinds.executable(self.test), params)
        self.result = None

    def problems(self):
        problems = kinds.validate_params(self.test, self.params) + self.gate_problems()
        if self.params["timeout"] <= 0:
            problems.append("timeout=%s must be positive" % self.params["timeout"])
        return problems

    def fail(self, msg, **extra):
        raise ModuleError(msg, **dict(self.result or {}, **extra))

    def run(self):
        problems = self.problems()
        if problems:
            raise ModuleError("%s: %s." % (self.module, "; ".join(problems)))
        link_rate = read_port_rate_gbps(self.params["sysfs_root"], self.params["device"], self.params["ib_port"])
        self.result = self.empty_result(link_rate)
        if self.check_mode:
            self.result["cmd"] = self.check_mode_argv()
            self.result["msg"] = "check mode: perftest not run; would run: %s" % " ".join(
                shlex.quote(a) for a in self.result["cmd"]
            )
            return self.result
        return self.measure(self.executable())

    def executable(self):
        found, error = perftest_run.resolve_executable(kinds.executable(self.test, self.params), self.host.get_bin_path)
        if error:
            self.fail_executable(error)
        return found

    def run_side(self, argv, classify, before_attempt=None):
        """Run perftest (retrying a client); the outcome, with the run's figures in the result."""
        self.result["cmd"] = argv
        test = self.test

        def parse(text):
            return kinds.parse(test, text)

        outcome = perftest_run.run_with_retry(argv, self.params, parse, classify, before_attempt)
        self.result.update((k, outcome[k]) for k in ("attempts", "elapsed_s", "stdout", "stderr", "rc"))
        return outcome

    def interrupted(self, outcome):
        self.fail("%s: interrupted by signal %s, perftest stopped." % (self.where, outcome["interrupted"]))

    def failed(self, failure):
        self.fail("%s: %s; %s." % (self.where, failure["message"], failure["hint"]))


class BandwidthSide(_Side):
    """ib_write_bw, ib_read_bw, ib_send_bw: Gb/s, the --out_json file, the min_gbps / min_link_fraction gate."""

    module = "perftest_bw"

    def gate_problems(self):
        return []

    def empty_result(self, link_rate):
        p = self.params
        verdict = gate.side_bandwidth(None, p["min_gbps"], p["min_link_fraction"], link_rate, p["bidirectional"])
        warnings_seen = []
        if verdict["error"]:
            rate_path = os.path.join(p["sysfs_root"], "class", "infiniband", p["device"], "ports", str(p["ib_port"]))
            rate_path = os.path.join(rate_path, "rate")
            if p["min_gbps"] is None:
                raise ModuleError(
                    "%s: min_link_fraction=%s needs the port rate, but %s is missing or unreadable: check device "
                    "and ib_port (ib_facts) or sysfs_root, or gate with min_gbps."
                    % (self.where, p["min_link_fraction"], rate_path),
                    link_rate_gbps=None,
                    passed=False,
                )
            warnings_seen.append("port rate unknown (%s): gated on min_gbps only" % rate_path)
        result = _common_result(rows=[], link_type=None, link_rate_gbps=link_rate, elapsed_s=0.0)
        result.update(dict.fromkeys(kinds.BANDWIDTH_METRICS))
        result.update(threshold_gbps=verdict["threshold_gbps"], threshold_basis=verdict["basis"])
        result["warnings_seen"] = warnings_seen
        return result

    def check_mode_argv(self):
        return kinds.build_argv(self.test, self.params, "<tmp>")

    def fail_executable(self, error):
        raise ModuleError(error, cmd=[kinds.executable(self.test, self.params)])

    def measure(self, exe):
        json_dir = tempfile.mkdtemp(prefix="perftest_bw-") if self.params["out_json"] else None
        try:
            return self._measure(exe, os.path.join(json_dir, "perftest.json") if json_dir else None)
        finally:
            if json_dir:
                shutil.rmtree(json_dir, ignore_errors=True)

    def _measure(self, exe, json_file):
        def before_attempt():
            if json_file and os.path.exists(json_file):
                os.unlink(json_file)

        def classify(run, parsed):
            failure = kinds.classify_failure(self.test, run["stdout"], run["stderr"], run["rc"], parsed, "client")
            if json_file and run["rc"] == 0 and (failure is None or failure["kind"] == "unknown"):
                # "no result table" on the console is fine when the JSON file has the result.
                parsed, failure = merge_json(parsed, json_file, self.params["report_gbits"])
            return parsed, failure

        argv = kinds.build_argv(self.test, dict(self.params, executable=exe), json_file)
        outcome = self.run_side(argv, classify, before_attempt)
        if outcome["interrupted"]:
            self.result.update(passed=False, failure=outcome["failure"])
            self.interrupted(outcome)
        self._fill(outcome["parsed"])
        if outcome["failure"]:
            self.result.update(failure=outcome["failure"], passed=False)
            self.failed(outcome["failure"])
        return self._judge()

    def _fill(self, parsed):
        self.result.update(rows=parsed["rows"], link_type=parsed["link_type"])
        self.result["warnings_seen"] = self.result["warnings_seen"] + parsed["warnings"]
        if parsed["headline"]:
            self.result.update(kinds.measurement(self.test, parsed))

    def _judge(self):
        p, result = self.params, self.result
        verdict = gate.side_bandwidth(
            result["bw_avg_gbps"], p["min_gbps"], p["min_link_fraction"], result["link_rate_gbps"], p["bidirectional"]
        )
        result["passed"] = bool(verdict["passed"])
        average = format_gbps(result["bw_avg_gbps"])
        if verdict["threshold_gbps"] is not None and not verdict["passed"]:
            message = "%s Gb/s average is below the threshold %s Gb/s (%s)" % (
                average,
                format_gbps(verdict["threshold_gbps"]),
                verdict["basis"],
            )
            result["failure"] = {"kind": "below_threshold", "message": message, "hint": BELOW_HINT}
            self.fail("%s: %s" % (self.where, message))
        result["msg"] = "%s: %s Gb/s average at %s B" % (self.where, average, result["msg_size"])
        if verdict["threshold_gbps"] is not None:
            met = (format_gbps(verdict["threshold_gbps"]), verdict["basis"])
            result["msg"] += ", threshold %s Gb/s (%s) met" % met
        return result


def merge_json(parsed, json_file, report_gbits):
    """The console parse with the --out_json file's headline: (parsed, failure or None)."""
    unit = parsed["unit"] or ("Gb/sec" if report_gbits else bandwidth.DEFAULT_UNIT)
    try:
        with open(json_file, "rb") as handle:
            doc = bandwidth.parse_json(handle.read(), unit=unit)
    except (IOError, OSError) as exc:
        if parsed["rows"]:
            parsed["warnings"].append("no --out_json file (%s): used the console table" % exc)
            return parsed, None
        message = "perftest wrote no JSON report (%s)" % exc
        return parsed, {"kind": "json", "message": message, "hint": "use perftest 24.01+"}
    except ValueError as exc:
        if parsed["rows"]:
            parsed["warnings"].append("%s: used the console table" % exc)
            return parsed, None
        return parsed, {"kind": "json", "message": str(exc), "hint": "use perftest 24.01+ for valid JSON"}
    merged = dict(parsed)
    merged["headline"] = doc["headline"]
    if not parsed["rows"]:
        merged["rows"] = doc["rows"]
    for key in ("link_type", "device", "transport", "gid_index", "mtu"):
        if merged.get(key) is None:
            merged[key] = doc.get(key)
    return merged, None


class LatencySide(_Side):
    """ib_write_lat, ib_read_lat, ib_send_lat: microseconds, the max_typical_us / max_p99_us ceilings."""

    module = "perftest_lat"

    def gate_problems(self):
        p = self.params
        return gate.check_latency_options(p["max_typical_us"], p["max_p99_us"], p["duration"])

    def empty_result(self, link_rate):
        result = _common_result(format=None, rows=[], link_type=None, link_rate_gbps=link_rate)
        result.update(dict.fromkeys(kinds.LATENCY_METRICS))
        result.update(threshold_us=self.params["max_typical_us"], warnings_seen=[], elapsed_s=0.0)
        return result

    def check_mode_argv(self):
        return kinds.build_argv(self.test, self.params)

    def fail_executable(self, error):
        self.fail(error)

    def measure(self, exe):
        def classify(run, parsed):
            role = self.params["role"]
            return parsed, kinds.classify_failure(self.test, run["stdout"], run["stderr"], run["rc"], parsed, role)

        outcome = self.run_side(kinds.build_argv(self.test, dict(self.params, executable=exe)), classify)
        parsed = outcome["parsed"]
        measured = kinds.measurement(self.test, parsed)
        self.result.update(measured, format=parsed["format"], rows=parsed["rows"], link_type=parsed["link_type"])
        self.result["warnings_seen"] = parsed["warnings"]
        if outcome["failure"]:
            self.result.update(failure=outcome["failure"], passed=False)
            if outcome["interrupted"]:
                self.interrupted(outcome)
            self.failed(outcome["failure"])
        p = self.params
        judged = judge_latency_side(
            self.where, self.test, measured, bool(parsed["rows"]), p["max_typical_us"], p["max_p99_us"]
        )
        self.result["warnings_seen"] += judged["warnings"]
        self.result.update(passed=judged["passed"], threshold_us=judged["threshold_us"], failure=judged["failure"])
        if judged["failure"]:
            self.fail(judged["msg"])
        self.result["msg"] = judged["msg"]
        return self.result


def latency_summary(where, measured):
    """'ib_write_lat mlx5_0:1 -> node1: typical 0.98 us, p99 1.00 us at 2 B'."""
    parts = []
    if measured.get("latency_us") is not None:
        word = "typical" if measured.get("latency_basis") == "t_typical" else "average"
        parts.append("%s %s us" % (word, format_us(measured["latency_us"])))
    if measured.get("p99_us") is not None:
        parts.append("p99 %s us" % format_us(measured["p99_us"]))
    text = "%s: %s" % (where, ", ".join(parts) or "no latency printed")
    if measured.get("msg_size") is not None:
        text += " at %s B" % measured["msg_size"]
    return text


def judge_latency_side(where, test, measured, has_table, max_typical_us=None, max_p99_us=None):
    """The outcome of a latency side that ran cleanly: {passed, failure, threshold_us, warnings, msg}.

    A side without a table (the server of ib_read_lat, which kinds.classify_failure let through) passes with
    nothing to gate; else gate.latency_verdict decides and ``msg`` is the one-line summary (with the failed
    ceiling's sentence, or the ceilings met).
    """
    if not has_table:
        msg = "%s: served its client (the client measures %s)" % (where, test)
        return {"passed": True, "failure": None, "threshold_us": max_typical_us, "warnings": [], "msg": msg}
    judged = gate.latency_verdict(measured, max_typical_us, max_p99_us)
    text = latency_summary(where, measured)
    out = {
        "passed": bool(judged["passed"]),
        "failure": None,
        "threshold_us": judged["threshold_us"],
        "warnings": ["%s not checked" % u for u in judged["unchecked"]],
    }
    if not judged["passed"]:
        out["failure"] = {"kind": judged["failure_kind"], "message": judged["failure"], "hint": ABOVE_HINT}
        out["msg"] = "%s: %s" % (text, judged["failure"])
        return out
    ceilings = [
        "%s %s us" % (name, _fmt(value))
        for name, value in (("max_typical_us", max_typical_us), ("max_p99_us", max_p99_us))
        if value is not None and not any(u.startswith(name) for u in judged["unchecked"])
    ]
    out["msg"] = text + (", within %s" % " and ".join(ceilings) if ceilings else "")
    return out


# The options both modules take, with the same meaning (the perftest doc fragment documents the connection ones,
# connect_timeout and extra_args; the sysfs fragment sysfs_root; each module documents the rest in its own words).
SHARED_SPEC = dict(
    role=dict(type="str", required=True, choices=["server", "client"]),
    server=dict(type="str"),
    device=dict(type="str", required=True),
    ib_port=dict(type="int", default=1),
    gid_index=dict(type="int"),
    tcp_port=dict(type="int", default=kinds.DEFAULT_TCP_PORT),
    duration=dict(type="int"),
    use_cuda=dict(type="int"),
    timeout=dict(type="float", default=120),
    connect_timeout=dict(type="float", default=30),
    executable=dict(type="str"),
    extra_args=dict(type="list", elements="str", default=[]),
    sysfs_root=dict(type="path", default="/sys"),
)
# The AnsibleModule arguments besides argument_spec, the same for both.
MODULE_KWARGS = dict(required_if=[("role", "client", ("server",))], supports_check_mode=True)


def argument_spec(**kind_options):
    """SHARED_SPEC with one module's own options (a fresh dict of fresh option dicts: AnsibleModule may alter them)."""
    spec = dict((name, dict(option)) for name, option in SHARED_SPEC.items())
    spec.update(kind_options)
    return spec


def run(params, host, check_mode=False):
    """The result of one perftest_bw or perftest_lat side (see the modules' RETURN)."""
    side = LatencySide if kinds.is_latency(params["test"]) else BandwidthSide
    return side(params, host, check_mode).run()
