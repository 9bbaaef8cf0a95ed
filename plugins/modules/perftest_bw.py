#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: perftest_bw
short_description: Run one side of a perftest bandwidth test (ib_write_bw, ib_read_bw, ib_send_bw) and gate it
version_added: 0.1.0
description:
  - Runs the server or the client side of C(ib_write_bw), C(ib_read_bw) or C(ib_send_bw) from perftest
    with an argument list (never a shell string), parses the report and returns the bandwidth in Gb/s
    (10^9 bit/s; perftest's C(MB/sec) and C(MiB/sec) are 2^20 bytes per second and are converted).
  - The client retries the connection until O(connect_timeout), because perftest itself tries once and
    exits with C(Couldn't connect). The server waits for one client up to O(timeout) and is then killed.
  - perftest runs in its own session and process group. On a timeout, on a signal to the module and on any
    error of the module itself the whole group is stopped (SIGTERM, then SIGKILL after 2 s) and reaped; the
    child also gets C(PR_SET_PDEATHSIG) so that it dies with the module even when the module is SIGKILLed.
    No perftest process outlives the module.
  - Known failures (no RDMA device, cannot connect, TCP port busy, QP cannot reach RTR, memory registration,
    completion with error, crash, perftest's own BW limit, timeout) fail the task with one sentence that
    names the host-side facts and says what to check.
  - Gate, only when O(min_gbps) or O(min_link_fraction) is given. The threshold is
    C(max(min_gbps, min_link_fraction x port rate x (2 if bidirectional))), the port rate is read from
    C(<sysfs_root>/class/infiniband/<device>/ports/<ib_port>/rate). The BW average is gated, since perftest
    does not measure the peak with C(-D).
  - The task never reports C(changed), since a measurement does not change the host.
extends_documentation_fragment:
  - ibtune.fabric.perftest
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
options:
  qps:
    description: Number of queue pairs (perftest C(-q)).
    type: int
    default: 1
  size:
    description:
      - Message size in bytes (perftest C(-s)), or C(all) for every size from 2 bytes to 8 MiB (perftest C(-a));
        the largest size is the headline result and every size is returned in RV(rows).
    type: str
    default: "65536"
  duration:
    description:
      - Run for this many seconds (perftest C(-D)) instead of a fixed iteration count. perftest does not
        measure the peak bandwidth then (it prints 0).
    type: int
  bidirectional:
    description: Measure both directions at once (perftest C(-b)); the link-rate gate doubles.
    type: bool
    default: false
  use_cuda:
    description:
      - Use the memory of this CUDA GPU (perftest C(--use_cuda=<n>)) to measure GPUDirect RDMA. Needs a
        perftest built with CUDA and nvidia-peermem or dma-buf.
    type: int
  test:
    description: Which perftest tool to run, C(ib_<test>_bw).
    type: str
    default: write
    choices: [write, read, send]
  timeout:
    description:
      - Seconds one perftest run may take before it is killed. For the server this includes the wait for the
        client, so make it cover the time until the client starts plus the test.
    type: float
    default: 120
  connect_timeout:
    description:
      - Client only. Seconds during which a refused connection (server not yet listening) is retried, about
        every 0.5 s.
    type: float
    default: 30
  min_gbps:
    description: Fail when the average bandwidth is below this many Gb/s.
    type: float
  min_link_fraction:
    description:
      - Fail when the average bandwidth is below this fraction of the port rate read from sysfs (x2 when
        O(bidirectional)). For example C(0.9) on a 400 Gb/s NDR port requires 360 Gb/s.
      - The task fails before running when the port rate cannot be read and O(min_gbps) is not given.
    type: float
  executable:
    description:
      - The perftest program to run, a path or a name looked up on C(PATH). Defaults to C(ib_<test>_bw)
        on C(PATH); point it at another build (e.g. a CUDA-enabled perftest) when needed.
    type: str
  extra_args:
    description: More perftest arguments, appended as separate list items before the server address.
    type: list
    elements: str
    default: []
  report_gbits:
    description:
      - Pass C(--report_gbits) so perftest prints Gb/s. Results are returned in Gb/s either way.
    type: bool
    default: true
  out_json:
    description:
      - Also pass C(--out_json --out_json_file=<temporary file>) (perftest 24.01+ writes valid JSON) and
        take the headline result from that file. With O(size=all) the file holds only the largest size;
        RV(rows) still come from the console table.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: In check mode perftest is not run; RV(cmd) shows what would run.
  diff_mode:
    support: none
notes:
  - Start the server side first (for example with C(async) and C(poll=0)), then the client; the client's
    retry makes the order of the two starts uncritical within O(connect_timeout).
  - Since perftest 26.01 both sides must agree on symmetric options (size, qps, duration, bidirectional...);
    pass the same values to both.
seealso:
  - module: ibtune.fabric.ib_facts
  - module: ibtune.fabric.ib_counters
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Start the server side on node1 (returns when the client has finished)
  ibtune.fabric.perftest_bw:
    role: server
    device: mlx5_0
    tcp_port: 18515
    duration: 10
    timeout: 90
  async: 120
  poll: 0
  register: server_job

- name: Run the client on node2 and require 90% of the port rate
  ibtune.fabric.perftest_bw:
    role: client
    server: node1
    device: mlx5_0
    tcp_port: 18515
    duration: 10
    min_link_fraction: 0.9
  register: bw

- name: RoCE with an explicit GID index, all message sizes, JSON report
  ibtune.fabric.perftest_bw:
    role: client
    server: 10.0.0.2
    device: mlx5_1
    gid_index: 3
    size: all
    out_json: true
    min_gbps: 180

- name: GPUDirect RDMA from GPU 0, bidirectional
  ibtune.fabric.perftest_bw:
    role: client
    server: node1
    device: mlx5_0
    use_cuda: 0
    bidirectional: true
    min_link_fraction: 0.85
"""

RETURN = r"""
bw_avg_gbps:
  description: Average bandwidth in Gb/s (10^9 bit/s) at the largest message size; what the gate checks.
  returned: when perftest printed a result
  type: float
  sample: 371.419377
bw_peak_gbps:
  description: Peak bandwidth in Gb/s at the largest message size; 0 when perftest did not measure it (C(-D)).
  returned: when perftest printed a result
  type: float
  sample: 371.835451
msg_rate_mpps:
  description: Message rate in millions of messages per second (null on old perftest without MsgRate).
  returned: when perftest printed a result
  type: float
  sample: 0.708426
msg_size:
  description: Message size in bytes of the headline result (the largest size with O(size=all)).
  returned: when perftest printed a result
  type: int
  sample: 65536
iterations:
  description: Iterations perftest ran at that size.
  returned: when perftest printed a result
  type: int
  sample: 5000
rows:
  description: Every row of the result table (one per message size), bandwidths in Gb/s.
  returned: always
  type: list
  elements: dict
  sample:
    - {msg_size: 65536, iterations: 5000, bw_peak_gbps: 371.835451, bw_avg_gbps: 371.419377, msg_rate_mpps: 0.708426}
link_type:
  description: Link type perftest reported (C(IB) or C(Ethernet)).
  returned: when perftest printed its header
  type: str
  sample: Ethernet
link_rate_gbps:
  description: Port rate in Gb/s read from sysfs (null when unreadable).
  returned: always
  type: float
  sample: 400.0
threshold_gbps:
  description: The gate threshold in Gb/s; null when no gate was given.
  returned: always
  type: float
  sample: 360.0
threshold_basis:
  description: What the threshold is made of.
  returned: always
  type: str
  sample: 0.9 x 400 Gb/s port rate
passed:
  description: True when the run succeeded and met the threshold (or there is no threshold); null in check mode.
  returned: always
  type: bool
  sample: true
failure:
  description:
    - Null on success; else C(kind) (no_device, connect, port_busy, modify_qp_rtr, mr_alloc,
      completion_error, crash, bw_limit, timeout, json, unknown, below_threshold), C(message) and C(hint).
  returned: always
  type: dict
  sample: {kind: no_device, message: "perftest found no RDMA device (Did not detect devices)", hint: "check ibstat"}
warnings_seen:
  description: Warning lines perftest printed (CPU frequency, BW peak not measured, device limitations).
  returned: always
  type: list
  elements: str
  sample: ["WARNING: BW peak won't be measured in this run."]
cmd:
  description: The argument vector that was (or in check mode would be) run.
  returned: always
  type: list
  elements: str
  sample: [ib_write_bw, -d, mlx5_0, -i, "1", -q, "1", -s, "65536", -p, "18515", --report_gbits, -F, node1]
stdout:
  description: perftest's standard output of the last attempt.
  returned: always
  type: str
  sample: " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n..."
stderr:
  description: perftest's standard error of the last attempt.
  returned: always
  type: str
  sample: ""
rc:
  description: Exit status of the last attempt (negative = killed by that signal); null in check mode.
  returned: always
  type: int
  sample: 0
attempts:
  description: How many times perftest was started (client retries while the connection is refused).
  returned: always
  type: int
  sample: 1
elapsed_s:
  description: Wall time of all attempts in seconds.
  returned: always
  type: float
  sample: 12.41
msg:
  description: One-line summary.
  returned: always
  type: str
  sample: "ib_write_bw mlx5_0:1 -> node1: 371.4 Gb/s average at 65536 B"
"""

import os
import shlex
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import run as perftest_run
from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import read_port_rate_gbps


def _resolve_executable(module, params):
    exe = params["executable"] or perftest.default_executable(params["test"])
    found, error = perftest_run.resolve_executable(exe, module.get_bin_path)
    if error:
        module.fail_json(msg=error, cmd=[exe])
    return found


def main():
    module = AnsibleModule(
        argument_spec=dict(
            role=dict(type="str", required=True, choices=["server", "client"]),
            server=dict(type="str"),
            device=dict(type="str", required=True),
            ib_port=dict(type="int", default=1),
            gid_index=dict(type="int"),
            tcp_port=dict(type="int", default=perftest.DEFAULT_TCP_PORT),
            qps=dict(type="int", default=1),
            size=dict(type="str", default="65536"),
            duration=dict(type="int"),
            bidirectional=dict(type="bool", default=False),
            use_cuda=dict(type="int"),
            test=dict(type="str", default="write", choices=list(perftest.TESTS)),
            timeout=dict(type="float", default=120),
            connect_timeout=dict(type="float", default=30),
            min_gbps=dict(type="float"),
            min_link_fraction=dict(type="float"),
            executable=dict(type="str"),
            extra_args=dict(type="list", elements="str", default=[]),
            sysfs_root=dict(type="path", default="/sys"),
            report_gbits=dict(type="bool", default=True),
            out_json=dict(type="bool", default=False),
        ),
        required_if=[("role", "client", ("server",))],
        supports_check_mode=True,
    )
    params = module.params
    problems = perftest.validate_params(params)
    if params["timeout"] <= 0:
        problems.append("timeout=%s must be positive" % params["timeout"])
    if problems:
        module.fail_json(msg="perftest_bw: " + "; ".join(problems) + ".")

    exe_name = perftest.default_executable(params["test"])
    where = perftest_run.where(exe_name, params)
    link_rate = read_port_rate_gbps(params["sysfs_root"], params["device"], params["ib_port"])
    verdict = perftest.gate(None, params["min_gbps"], params["min_link_fraction"], link_rate, params["bidirectional"])
    warnings_seen = []
    if verdict["error"]:
        rate_path = os.path.join(
            params["sysfs_root"], "class", "infiniband", params["device"], "ports", str(params["ib_port"]), "rate"
        )
        if params["min_gbps"] is None:
            module.fail_json(
                msg="%s: min_link_fraction=%s needs the port rate, but %s is missing or unreadable: check device "
                "and ib_port (ib_facts) or sysfs_root, or gate with min_gbps."
                % (where, params["min_link_fraction"], rate_path),
                link_rate_gbps=None,
                passed=False,
            )
        warnings_seen.append("port rate unknown (%s): gated on min_gbps only" % rate_path)

    result = dict(
        changed=False,
        bw_avg_gbps=None,
        bw_peak_gbps=None,
        msg_rate_mpps=None,
        msg_size=None,
        iterations=None,
        rows=[],
        link_type=None,
        link_rate_gbps=link_rate,
        threshold_gbps=verdict["threshold_gbps"],
        threshold_basis=verdict["basis"],
        passed=None,
        failure=None,
        warnings_seen=warnings_seen,
        cmd=[],
        stdout="",
        stderr="",
        rc=None,
        attempts=0,
        elapsed_s=0.0,
    )

    json_dir = tempfile.mkdtemp(prefix="perftest_bw-") if params["out_json"] and not module.check_mode else None
    json_file = os.path.join(json_dir, "perftest.json") if json_dir else None
    try:
        if module.check_mode:
            result["cmd"] = perftest.build_argv(dict(params, executable=params["executable"] or exe_name), "<tmp>")
            result["msg"] = "check mode: perftest not run; would run: %s" % " ".join(
                shlex.quote(a) for a in result["cmd"]
            )
            module.exit_json(**result)
        exe = _resolve_executable(module, params)
        argv = perftest.build_argv(dict(params, executable=exe), json_file)
        result["cmd"] = argv
        _run(module, params, argv, json_file, where, result)
    finally:
        if json_dir:
            for name in os.listdir(json_dir):
                os.unlink(os.path.join(json_dir, name))
            os.rmdir(json_dir)


def _run(module, params, argv, json_file, where, result):
    def before_attempt():
        if json_file and os.path.exists(json_file):
            os.unlink(json_file)

    def classify(run, parsed):
        failure = perftest.classify_failure(run["stdout"], run["stderr"], run["rc"], parsed)
        if json_file and run["rc"] == 0 and (failure is None or failure["kind"] == "unknown"):
            # "no result table" on the console is fine when the JSON file has the result.
            parsed, failure = _merge_json(parsed, json_file, params)
        return parsed, failure

    outcome = perftest_run.run_with_retry(argv, params, perftest.parse_text, classify, before_attempt)
    result.update((k, outcome[k]) for k in ("attempts", "elapsed_s", "stdout", "stderr", "rc"))
    failure, parsed = outcome["failure"], outcome["parsed"]
    if outcome["interrupted"]:
        result["passed"] = False
        result["failure"] = failure
        module.fail_json(
            msg="%s: interrupted by signal %s, perftest stopped." % (where, outcome["interrupted"]), **result
        )
    _fill_measurement(result, parsed)
    if failure:
        result["failure"] = failure
        result["passed"] = False
        module.fail_json(msg="%s: %s; %s." % (where, failure["message"], failure["hint"]), **result)

    verdict = perftest.gate(
        result["bw_avg_gbps"],
        params["min_gbps"],
        params["min_link_fraction"],
        result["link_rate_gbps"],
        params["bidirectional"],
    )
    result["passed"] = bool(verdict["passed"])
    summary = "%s: %s Gb/s average at %s B" % (
        where,
        perftest.format_gbps(result["bw_avg_gbps"]),
        result["msg_size"],
    )
    if verdict["threshold_gbps"] is not None and not verdict["passed"]:
        message = "%s Gb/s average is below the threshold %s Gb/s (%s)" % (
            perftest.format_gbps(result["bw_avg_gbps"]),
            perftest.format_gbps(verdict["threshold_gbps"]),
            verdict["basis"],
        )
        result["failure"] = {
            "kind": "below_threshold",
            "message": message,
            "hint": "check the link's error counters, its rate and PCIe width (ib_facts), and the peer",
        }
        module.fail_json(msg="%s: %s" % (where, message), **result)
    if verdict["threshold_gbps"] is not None:
        summary += ", threshold %s Gb/s (%s) met" % (perftest.format_gbps(verdict["threshold_gbps"]), verdict["basis"])
    result["msg"] = summary
    module.exit_json(**result)


def _merge_json(parsed, json_file, params):
    unit = parsed["unit"] or ("Gb/sec" if params["report_gbits"] else perftest.DEFAULT_UNIT)
    try:
        with open(json_file, "rb") as handle:
            doc = perftest.parse_json(handle.read(), unit=unit)
    except (IOError, OSError) as exc:
        if parsed["rows"]:
            parsed["warnings"].append("no --out_json file (%s): used the console table" % exc)
            return parsed, None
        return parsed, {
            "kind": "json",
            "message": "perftest wrote no JSON report (%s)" % exc,
            "hint": "use perftest 24.01+",
        }
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


def _fill_measurement(result, parsed):
    result["rows"] = parsed["rows"]
    result["link_type"] = parsed["link_type"]
    result["warnings_seen"] = result["warnings_seen"] + parsed["warnings"]
    head = parsed["headline"]
    if head:
        result.update(
            bw_avg_gbps=head["bw_avg_gbps"],
            bw_peak_gbps=head["bw_peak_gbps"],
            msg_rate_mpps=head["msg_rate_mpps"],
            msg_size=head["msg_size"],
            iterations=head["iterations"],
        )


if __name__ == "__main__":
    main()
