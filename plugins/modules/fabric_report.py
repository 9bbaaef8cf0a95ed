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
  - Never re-decides a pair's absolute gate; the results come gated (C(passed), C(failure), C(failure_kind)).
    It only checks their shape - a NaN, infinite or negative figure, or a figure that contradicts a claimed pass,
    fails the result with C(failure_kind=invalid).
  - Peer-relative gate - a pair that passed its threshold but measured below O(min_peer_fraction) x the median of
    the other first-pass pairs of the same kind, test and rail (at least 3 of them) fails with
    C(failure_kind=slow_vs_peers); for latency, above median / O(min_peer_fraction) fails.
  - Every host in O(expected_hosts) and O(host_failures) is passed or failed, never absent - a host without a
    passing result, a culprit, a host with counter violations or a failed preflight is in RV(failed_hosts) and
    fails the validation in every report file.
  - Fewer than O(min_hosts) validated hosts, or no pair result at all, fails the validation with one sentence.
  - When at least 80% of the pair results failed with the same C(failure_kind) (or O(min_gbps) is above the line
    rate), RV(systemic) names the common cause in one sentence, no suspect is named and the message is that
    sentence.
  - Localizes faults. First pass - a node that failed with two or more different partners is a suspect node
    (partners already named suspect nodes do not count); a pair that failed alone is a suspect link; a node all
    of whose pairs passed is known-good. Second pass (results with C(pass=2), planned by the
    P(ibtune.fabric.retest_rounds#filter) filter) - a suspect that fails again with a known-good partner is a bad
    node; a suspect link whose two ends pass with known-good partners is a bad link.
  - Compares each link with its baseline (the median of its last runs, per link C(hostA/devA<->hostB/devB) and
    test); a link below C((1 - regression_tolerance) x baseline) is a regression (C(failure_kind=regression)).
    With O(update_baseline) the measurements of this run that passed and did not regress are appended to the
    baseline (the last O(baseline_keep) per link are kept), so a regression never heals itself into it.
  - Writes C(report.json), C(junit.xml) (a testcase per host, per pair and per node counter check; a failure's
    C(type) is its failure kind), C(summary.md), C(ibtune.prom) (Prometheus textfile, metrics as in the
    collection's contracts), C(report.html) and C(results.json) atomically into O(dest).
  - C(results.json) holds every pair result, in M(ibtune.fabric.fabric_join)'s form (above 20000 results,
    table items). C(report.json) holds them too up to 20000 results, and above only those that did not pass
    (C(results_complete) says which), so that it stays a file a person and M(ibtune.fabric.slurm_remediate)
    read whole; its other keys (verdict, hosts, suspects, failed pairs) are the same at any size.
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
      - Also C(kind) (C(bandwidth) or C(latency)), C(rail), C(failure_kind) (a short word - C(no_device),
        C(connect), C(timeout), C(below_threshold), C(missing_rail), ...), and for latency C(t_typical_us),
        C(p99_us), C(threshold_us).
      - Only C(server) and C(client) are required; a missing C(passed) is decided by the collection's gate from
        the result's own threshold, a missing C(failure_kind) of a failed result is read from its C(failure).
      - Concatenated with the results read from O(results_paths).
    type: list
    elements: dict
    default: []
  results_paths:
    description:
      - JSON files on the node where the module runs (the controller), each a list of pair results as in
        O(results), in either form M(ibtune.fabric.fabric_join) writes (above 20000 results, table items);
        the controller's join step writes them. Read and appended to O(results).
    type: list
    elements: path
    default: []
  expected_hosts:
    description:
      - Every host meant to be validated. A host in it without a passing result is failed (C(unmeasured) when
        no pair result names it) in every report file and in RV(failed_hosts).
      - Default is the hosts named by O(results), O(host_failures) and O(counter_violations).
    type: list
    elements: str
  host_failures:
    description:
      - Hosts that failed before they could be measured - C({host, reason, failure_kind}), C(failure_kind)
        C(preflight) (default) or C(unreachable). They are failed in every report file, and their failed pairs
        make no partner a suspect.
    type: list
    elements: dict
    default: []
  min_hosts:
    description: Fewer validated hosts than this (hosts in a pair result, not in O(host_failures)) fails the validation.
    type: int
    default: 2
  min_peer_fraction:
    description:
      - The peer-relative gate - a pair below this fraction of the median of its peers (same kind, test and
        rail, first pass, at least 3 of them) fails as C(slow_vs_peers). C(0) turns the gate off.
    type: float
    default: 0.9
  line_rate_gbps:
    description:
      - The fabric's line rate in Gb/s, to check O(min_gbps) against and to name a systemic cause. Default is
        the highest rate the results carry (C(line_rate_gbps), C(expected_rate_gbps) or C(link_rate_gbps)).
    type: float
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
  topology:
    description:
      - The fabric as the C(fabric_validate) topology stage hands it over (the C(validate_topology) filter of an
        M(ibtune.fabric.ib_topology) result read with routes, or that result itself; docs/dev/CONTRACTS.md).
      - With it the report names the suspect cable (on the failing pairs' routes and on no passing pair's
        route, in the forwarding tables OpenSM programmed), orders hosts by leaf and port, and counts the
        topology's C(switch_counter_violations) as failures like host ones.
    type: dict
  host_rails:
    description:
      - Per host, the rails it should be measured on (rail names, or the rail dicts of the plan). A host is in
        RV(passed_hosts) only when every one of them has a passing result; a rail without one is a failure of kind
        C(untested). Default is the rails each host's results carry.
    type: dict
  switch_groups:
    description:
      - Per host, the leaf switch it hangs off (a name), or per rail (a dict of rail name or device to switch), as
        the inventory says it (the role's C(fabric_validate_group_var)). Used to tell a fault above the hosts (a
        leaf's uplinks, a spine) from a bad node when O(topology) and O(lldp) do not say it; without any of them the
        grouping is inferred from the results (hosts that pass with each other and fail across).
    type: dict
  lldp:
    description:
      - Per host, its LLDP neighbours as lldpd prints them (C(lldpctl -f json), text or decoded), to group the
        hosts by switch on Ethernet fabrics. O(topology) wins over it, it wins over O(switch_groups).
    type: dict
  netdevs:
    description: "Per host, C({device: [netdev]}) (or ib_facts' devices), to map O(lldp)'s interfaces to RDMA devices."
    type: dict
  phy:
    description:
      - The physical layer's verdict as the C(fabric_validate) PHY stage hands it over (the C(phy_verdict) filter over
        M(ibtune.fabric.ib_phy) readings before and after the passes; docs/phy.md).
      - Adds C(phy_findings) naming each cable (both ends, switch port, serial); an error fails the validation,
        warnings (pre-failure signals) are listed in every report file.
    type: dict
  checks:
    description:
      - Checks of other suites to report with the pairs, e.g. M(ibtune.fabric.nccl_verdict)'s C(checks) (the
        multi-node NCCL check) - C({suite, name, kind, passed, message, hosts, figures, culprits}).
      - A failed check fails the report; each culprit C({host, reason, failure_kind}) is a failed host, the other
        hosts of the checks passed hosts. They appear in every file (a JUnit testsuite per suite, a section of
        summary.md and report.html, C(ibtune_check_passed) in ibtune.prom). Without pair results the report is the
        checks' alone.
    type: list
    elements: dict
    default: []
    version_added: 0.2.0
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
    description:
      - The bandwidth floor the gate used, in Gb/s. Not re-applied (the results are gated); checked - negative or
        NaN fails the task, above the line rate fails the validation as systemic.
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

- name: Judge results the join wrote to files, with every inventory host expected
  ibtune.fabric.fabric_report:
    results_paths:
      - /var/tmp/ibtune/pass1.json
      - /var/tmp/ibtune/pass2.json
    expected_hosts: "{{ groups['gpu'] }}"
    host_failures:
      - host: node7
        reason: "mlx5_0 port 1 is DOWN: check the cable"
        failure_kind: preflight
    min_peer_fraction: 0.9
    line_rate_gbps: 400
    dest: /var/lib/ibtune/reports/latest
  delegate_to: localhost
  run_once: true

- name: Record a new baseline after a maintenance window, without failing the play
  ibtune.fabric.fabric_report:
    results: "{{ pair_results }}"
    dest: /var/lib/ibtune/reports/latest
    baseline_path: /var/lib/ibtune/baseline.json
    update_baseline: true
    fail_on_failure: false
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
passed:
  description:
    - Whether the validation passed - no failed pair, no counter violation, no regression, no failed host, no
      systemic cause and at least O(min_hosts) validated hosts.
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
      failure_kind: below_threshold
      kind: bandwidth
      rail: 0
      link: "node2/mlx5_0<->node3/mlx5_0"
      pass: 1
      round: 2
failed_hosts:
  description:
    - Every host meant to be validated that failed, one entry each - C(failure_kind) is the most important
      reason's (C(preflight), C(unreachable), C(bad_node), C(intermittent), C(suspect_node), C(counters),
      C(saturated), C(bad_link), C(missing_rail), C(invalid), C(regression), C(unmeasured), C(untested),
      C(ungated), or the failure kind of all its pairs), C(reason) the sentences, C(culprit) whether the verdict
      blames the host itself (M(ibtune.fabric.slurm_remediate) drains only those).
  returned: always
  type: list
  elements: dict
  sample:
    - host: node7
      failure_kind: preflight
      reason: "mlx5_0 port 1 is DOWN: check the cable"
    - host: node2
      failure_kind: bad_link
      reason: "bad link node2/mlx5_0<->node3/mlx5_0 (180.1 Gb/s < 360.0 Gb/s)"
passed_hosts:
  description: Hosts with at least one passing pair result and no failure, sorted.
  returned: always
  type: list
  elements: str
  sample: [node1, node4, node5, node6]
systemic:
  description:
    - One sentence naming the common cause when at least 80% of the pair results failed with the same failure
      kind (or O(min_gbps) is above the line rate); then no suspect is named. C(null) otherwise.
  returned: always
  type: str
  sample: "no RDMA device on any host (every pair failed with no_device)"
suspect_nodes:
  description:
    - Hosts named as culprits, per rail. C(verdict) is C(bad_node) (failed on a rail with every partner, a
      known-good one of the retest included), C(intermittent) (failed in pass 1 with every partner, passed a retest)
      or C(suspect) (first pass only, or a known-good partner that failed its retest); C(failed_with) lists the
      partners it failed with; C(devices) and C(rails) where; C(retest) the second pass. A host that reached line
      rate with part of the fabric on a rail is never C(bad_node) on it.
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
switch_faults:
  description:
    - Faults above the hosts, each C(verdict=switch_fault) with C(scope) (C(leaf) - the uplinks of one leaf,
      C(between) - two groups, C(spine) - a spine or its cables, C(spine_layer) - every pair across leaves failed,
      C(path) - the path above one host, C(fabric) - spread failures no grouping places), C(switches) (the
      switch names when known), C(groups) (switch -> hosts), C(hosts) (the hosts whose pairs fail), C(source)
      (C(topology), C(lldp), C(inventory), C(inferred)), C(rail), C(failing), C(tested), C(inside_passing), C(pairs),
      the worst figures and C(text). Their hosts are not in RV(failed_hosts) for them.
  returned: always
  type: list
  elements: dict
  sample:
    - verdict: switch_fault
      scope: leaf
      switches: [leaf3]
      hosts: [node09, node10, node11, node12]
      source: inventory
      rail: "mlx5_0:1"
      failing: 112
      tested: 448
      inside_passing: 48
      text: "switch fault on rail mlx5_0:1: the uplinks of leaf3 (112 of 448 pairs across switches failed, 180.0 Gb/s
        < 360.0 Gb/s; 48 pairs inside a switch passed): not the hosts"
suspect_cables:
  description:
    - Cables on the failing pairs' routes and on no passing pair's route, each with a and b (switch or CA end
      and port), reason, failing (failing paths it is on), failing_total, passing_total, ambiguous (how many
      cables share exactly these paths, 0 when it alone does), verdict and text (as in the message).
  returned: when O(topology) is given
  type: list
  elements: dict
  sample:
    - a: "A09-P1-IBLEAF-04-04 p38"
      b: "A10-P1-IBSPINE-03 p32"
      failing: 2
      failing_total: 2
      passing_total: 562
      text: "cable A09-P1-IBLEAF-04-04 p38 <-> A10-P1-IBSPINE-03 p32 (shared by the 2 failing pairs, by no passing one)"
switch_counter_violations:
  description: Switch-port counter increases from O(topology) (switch, port, peer, counter, delta, msg); any fails
    the validation.
  returned: when O(topology) is given
  type: list
  elements: dict
phy_findings:
  description: The PHY findings from O(phy), errors first (check, severity, cable, serials, end, peer, msg); an error
    fails the validation.
  returned: when O(phy) is given
  type: list
  elements: dict
  sample:
    - check: raw_ber_outlier
      severity: warning
      cable: "gpu02 mlx5_1 <-> leaf4 p2 (serial MT2412FT01234)"
      msg: "cable gpu02 mlx5_1 <-> leaf4 p2 (serial MT2412FT01234): lane 2 raw (pre-FEC) BER 2e-07 over the 31 s of the
        validation is an outlier (400x the median): the fabric's 100 Gb/s lanes sit at a median of 5e-10; FEC still
        corrects it, the cable or module is degrading"
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
  sample: [/srv/reports/ibtune.prom, /srv/reports/junit.xml, /srv/reports/report.html, /srv/reports/report.json,
           /srv/reports/results.json, /srv/reports/summary.md]
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

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.ibtune.fabric.plugins.module_utils.report.module import ReportError, run

ARGUMENT_SPEC = dict(
    results=dict(type="list", elements="dict", default=[]),
    results_paths=dict(type="list", elements="path", default=[]),
    counter_violations=dict(type="list", elements="dict", default=[]),
    saturated=dict(type="list", elements="dict", default=[]),
    expected_hosts=dict(type="list", elements="str"),
    host_failures=dict(type="list", elements="dict", default=[]),
    min_hosts=dict(type="int", default=2),
    min_peer_fraction=dict(type="float", default=0.9),
    line_rate_gbps=dict(type="float"),
    dest=dict(type="path", required=True),
    baseline_path=dict(type="path"),
    regression_tolerance=dict(type="float", default=0.1),
    update_baseline=dict(type="bool", default=False),
    baseline_keep=dict(type="int", default=10),
    min_gbps=dict(type="float"),
    fail_on_failure=dict(type="bool", default=True),
    run_id=dict(type="str"),
    topology=dict(type="dict"),
    host_rails=dict(type="dict"),
    switch_groups=dict(type="dict"),
    lldp=dict(type="dict"),
    netdevs=dict(type="dict"),
    phy=dict(type="dict"),
    checks=dict(type="list", elements="dict", default=[]),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result, failed, warnings = run(module.params, module.check_mode)
    except ReportError as exc:
        module.fail_json(msg=to_native(exc))
    for text in warnings:
        module.warn(text)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
