#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_report
short_description: Judge perftest pair results and counter deltas, name the bad node or link, write the report
version_added: 0.1.0
description:
  - "Runs on the controller (C(delegate_to: localhost), C(run_once: true)) with the pair results and counter
    violations gathered from every node by the C(ibtune.fabric.fabric_validate) role."
  - Applies the thresholds (each result's own C(threshold_gbps), raised to O(min_gbps) when that is higher).
  - Localizes faults. First pass - a node that failed with two or more different partners is a suspect node
    (partners already named suspect nodes do not count); a pair that failed alone is a suspect link; a node all
    of whose pairs passed is known-good. Second pass (results with C(pass=2), planned by the
    P(ibtune.fabric.retest_rounds#filter) filter) - a suspect that fails again with a known-good partner is a bad
    node; a suspect link whose two ends pass with known-good partners is a bad link.
  - Compares each link with its baseline (the median of its last runs, per link C(hostA/devA<->hostB/devB) and
    test); a link below C((1 - regression_tolerance) x baseline) is a regression. With O(update_baseline) the
    passed measurements of this run are appended to the baseline (the last O(baseline_keep) per link are kept).
  - Writes C(report.json), C(junit.xml) (a testcase per pair and per node counter check), C(summary.md) and
    C(ibtune.prom) (Prometheus textfile, metrics as in the collection's contracts) atomically into O(dest).
  - Fails (when O(fail_on_failure)) with one message that names the culprits and their figures, after the
    report is written.
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Computes the verdict and the report, writes no file; RV(files) lists what would be written.
  diff_mode:
    support: none
options:
  results:
    description:
      - Pair results, one per measured pair and rail, as the role gathers them from P(ibtune.fabric.perftest_bw#module)
        - C(server), C(server_device), C(server_port), C(client), C(client_device), C(client_port), C(test)
        (C(write), C(read) or C(send)), C(bw_avg_gbps) (float or null), C(bw_peak_gbps), C(threshold_gbps)
        (float or null), C(passed) (bool), C(failure) (one sentence or null), C(round), C(pass) (1 first pass,
        2 retest) and C(duration_s).
      - Only C(server) and C(client) are required; a missing C(passed) is derived from the bandwidth.
    type: list
    elements: dict
    required: true
  counter_violations:
    description:
      - Counter increases beyond what is allowed, from P(ibtune.fabric.ib_counters#module) plus the host -
        C(host), C(device), C(port), C(counter), C(before), C(after), C(delta), C(allowed), C(category).
      - Any violation fails the validation.
    type: list
    elements: dict
    default: []
  saturated:
    description:
      - Counters stuck at their maximum (from P(ibtune.fabric.ib_counters#module), plus C(host)). They are
        reported as unable to show new errors (a skipped counter check); they do not fail the validation.
    type: list
    elements: dict
    default: []
  dest:
    description: Controller directory for the report files; created when missing.
    type: path
    required: true
  baseline_path:
    description:
      - JSON baseline file (per link C(hostA/devA<->hostB/devB) a history list of C({ts, gbps, test})).
      - A missing file is an empty baseline (the first run); with O(update_baseline) it is created.
    type: path
  regression_tolerance:
    description: A link regressed when its bandwidth is below C((1 - regression_tolerance) x) its baseline median.
    type: float
    default: 0.1
  update_baseline:
    description:
      - Append this run's passed measurements to O(baseline_path) (atomically). Failed pairs are never recorded.
    type: bool
    default: false
  baseline_keep:
    description: History entries kept per link and test in the baseline.
    type: int
    default: 10
  min_gbps:
    description: A bandwidth floor in Gb/s applied on top of each result's own threshold (the higher one wins).
    type: float
  fail_on_failure:
    description: Fail the task when the validation failed (after writing the report).
    type: bool
    default: true
  run_id:
    description: An identifier of this run stored in the report; default is the UTC time, C(20261130T094500Z).
    type: str
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Judge the fabric and write the report
  ibtune.fabric.fabric_report:
    results: "{{ ansible_play_hosts | map('extract', hostvars, '__fabric_validate_results') | flatten }}"
    counter_violations: "{{ ansible_play_hosts | map('extract', hostvars, '__fabric_validate_violations') | flatten }}"
    dest: "{{ playbook_dir }}/../build/reports/fabric"
    baseline_path: "{{ playbook_dir }}/../build/reports/baseline.json"
  delegate_to: localhost
  run_once: true

- name: Record a new baseline after a maintenance window, without failing the play
  ibtune.fabric.fabric_report:
    results: "{{ pair_results }}"
    dest: /var/lib/ibtune/reports/latest
    baseline_path: /var/lib/ibtune/baseline.json
    update_baseline: true
    fail_on_failure: false
    min_gbps: 360
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
passed:
  description: Whether the validation passed (no failed pair, no counter violation, no regression).
  returned: always
  type: bool
  sample: false
failed_pairs:
  description: The failed pair results, normalized (threshold applied, C(failure) filled, C(link) key added).
  returned: always
  type: list
  elements: dict
  sample:
    - server: node2
      server_device: mlx5_0
      client: node3
      client_device: mlx5_0
      test: write
      bw_avg_gbps: 180.1
      threshold_gbps: 360.0
      passed: false
      failure: "180.1 Gb/s < 360.0 Gb/s"
      link: "node2/mlx5_0<->node3/mlx5_0"
      pass: 1
      round: 2
suspect_nodes:
  description:
    - Hosts named as culprits. C(verdict) is C(bad_node) (failed again with a known-good partner) or C(suspect)
      (first pass only); C(failed_with) lists the first-pass partners it failed with; C(retest) the second pass.
  returned: always
  type: list
  elements: dict
  sample:
    - host: node4
      verdict: bad_node
      failed_with: [node1, node3]
      devices: [mlx5_0]
      first_pass_suspect: true
      retest: [{partner: node5, server: node4, client: node5, passed: false, bw_avg_gbps: 120.0,
                threshold_gbps: 360.0, failure: "120.0 Gb/s < 360.0 Gb/s"}]
suspect_links:
  description:
    - Links named as culprits, with the worst figure measured on them. C(verdict) is C(bad_link) (both ends
      passed with known-good partners) or C(suspect) (no second pass decided it).
  returned: always
  type: list
  elements: dict
  sample:
    - link: "node2/mlx5_0<->node3/mlx5_0"
      server: node2
      server_device: mlx5_0
      client: node3
      client_device: mlx5_0
      test: write
      bw_avg_gbps: 180.1
      threshold_gbps: 360.0
      failure: "180.1 Gb/s < 360.0 Gb/s"
      verdict: bad_link
regressions:
  description: Links below C((1 - regression_tolerance) x) their baseline median.
  returned: always
  type: list
  elements: dict
  sample:
    - link: "node1/mlx5_0<->node2/mlx5_0"
      test: write
      bw_avg_gbps: 300.0
      baseline_gbps: 392.5
      floor_gbps: 353.25
      drop_pct: 23.6
counter_violations:
  description: The counter violations, sorted by host, device, port and counter.
  returned: always
  type: list
  elements: dict
  sample:
    - {host: node4, device: mlx5_0, port: 1, counter: symbol_error, before: 0, after: 5, delta: 5, allowed: 0,
       category: physical}
summary:
  description: The Markdown summary (the content of C(summary.md)).
  returned: always
  type: str
  sample: "# Fabric validation: FAILED ..."
files:
  description: Paths of the report files written (in check mode, the ones that would be written).
  returned: always
  type: list
  elements: str
  sample: [/srv/reports/ibtune.prom, /srv/reports/junit.xml, /srv/reports/report.json, /srv/reports/summary.md]
baseline_updated:
  description: Whether the baseline file was (or in check mode would be) rewritten.
  returned: always
  type: bool
  sample: false
msg:
  description: The verdict in one line; when failed, the culprits and their figures.
  returned: always
  type: str
  sample: >-
    Fabric validation failed: suspect link node2/mlx5_0<->node3/mlx5_0 (180.1 Gb/s < 360.0 Gb/s);
    bad node node4 (failed with node1, node3); node4 mlx5_0 port 1 symbol_error +5
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.ibtune.fabric.plugins.module_utils.report import (
    REPORT_FILES,
    build_report,
    load_baseline,
    render_all,
    to_json,
    update_baseline,
    write_atomic,
)

INVOCATION_LIMIT = 100


def main():
    module = AnsibleModule(
        argument_spec=dict(
            results=dict(type="list", elements="dict", required=True),
            counter_violations=dict(type="list", elements="dict", default=[]),
            saturated=dict(type="list", elements="dict", default=[]),
            dest=dict(type="path", required=True),
            baseline_path=dict(type="path"),
            regression_tolerance=dict(type="float", default=0.1),
            update_baseline=dict(type="bool", default=False),
            baseline_keep=dict(type="int", default=10),
            min_gbps=dict(type="float"),
            fail_on_failure=dict(type="bool", default=True),
            run_id=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p["baseline_keep"] < 1:
        module.fail_json(msg="baseline_keep must be >= 1, got %d: keep at least the last run" % p["baseline_keep"])
    if p["update_baseline"] and not p["baseline_path"]:
        module.fail_json(msg="update_baseline is true but baseline_path is not set: give the baseline file to update")

    baseline = None
    baseline_path = p["baseline_path"]
    if baseline_path:
        if os.path.isdir(baseline_path):
            module.fail_json(
                msg="baseline_path %s is a directory: give a file, e.g. %s/baseline.json"
                % (baseline_path, baseline_path)
            )
        text = None
        if os.path.exists(baseline_path):
            try:
                with open(baseline_path, encoding="utf-8") as handle:
                    text = handle.read()
            except (IOError, OSError) as exc:
                module.fail_json(msg="cannot read baseline %s: %s" % (baseline_path, to_native(exc)))
        try:
            baseline = load_baseline(text)
        except ValueError as exc:
            module.fail_json(msg="baseline %s: %s" % (baseline_path, to_native(exc)))

    try:
        report = build_report(
            p["results"],
            counter_violations=p["counter_violations"],
            saturated=p["saturated"],
            baseline=baseline,
            regression_tolerance=p["regression_tolerance"],
            min_gbps=p["min_gbps"],
            run_id=p["run_id"],
        )
    except ValueError as exc:
        module.fail_json(msg="fabric_report: %s" % to_native(exc))

    if not report["results"]:
        module.warn("fabric_report got no pair results: no link was measured (fewer than two hosts, or no round ran)")
    files = render_all(report)
    dest = p["dest"]
    paths = [os.path.join(dest, name) for name in sorted(REPORT_FILES)]
    baseline_updated = False
    if not module.check_mode:
        if os.path.exists(dest) and not os.path.isdir(dest):
            module.fail_json(msg="dest %s exists and is not a directory: give a directory for the report files" % dest)
        try:
            paths = write_atomic(dest, files)
        except (IOError, OSError) as exc:
            module.fail_json(msg="cannot write the report into %s: %s" % (dest, to_native(exc)))
    if p["update_baseline"]:
        new_baseline = update_baseline(baseline, report["results"], report["timestamp"], keep=p["baseline_keep"])
        baseline_updated = new_baseline["links"] != (baseline or {}).get("links")
        if baseline_updated and not module.check_mode:
            try:
                write_atomic(
                    os.path.dirname(baseline_path) or ".", {os.path.basename(baseline_path): to_json(new_baseline)}
                )
            except (IOError, OSError) as exc:
                module.fail_json(msg="cannot write the baseline %s: %s" % (baseline_path, to_native(exc)))

    # The report files are this run's output, like a log: rewriting them is not a change to the
    # managed state. Only the baseline is state, so a repeated healthy run reports no change.
    result = dict(
        changed=baseline_updated,
        passed=report["passed"],
        failed_pairs=report["failed_pairs"],
        suspect_nodes=report["suspect_nodes"],
        suspect_links=report["suspect_links"],
        regressions=report["regressions"],
        counter_violations=report["counter_violations"],
        summary=files["summary.md"],
        files=paths,
        baseline_updated=baseline_updated,
        msg=report["message"],
    )
    # Ansible echoes the module arguments back (invocation.module_args) and scans them for secrets:
    # for thousands of pair results that is most of the module's time and a copy nobody reads.
    args = dict(p)
    for key in ("results", "counter_violations", "saturated"):
        if len(args[key]) > INVOCATION_LIMIT:
            args[key] = "%d entries (not echoed, see report.json)" % len(args[key])
    result["invocation"] = {"module_args": args}
    if not report["passed"] and p["fail_on_failure"]:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
