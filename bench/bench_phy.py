"""The PHY path on the controller at fabric scale: parse a real mlxlink JSON per port, judge every port (the
fabric-wide raw-BER outlier gate included), put the verdict in a report.

Run from the repo root: .venv/bin/python bench/bench_phy.py [HOSTSxRAILS ...] (default 64x8 512x8 1024x8).
Every port reads the real MFT 4.34.1 capture (tests/fixtures/phy), one lane in 1000 made an outlier; the host ends
and the switch end of each host cable are judged (2 x HOSTS x RAILS ports). Prints figures; asserts nothing.
"""

import copy
import json
import os
import resource
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import findings, mlxlink  # noqa: E402

CAPTURE = os.path.join(ROOT, "tests", "fixtures", "phy", "mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-serdes.json")


def run(hosts, rails):
    with open(CAPTURE) as handle:
        text = handle.read()
    t0 = time.time()
    readings = [mlxlink.parse(text) for _reading in range(hosts * rails)]
    parse_s = time.time() - t0
    ports = []
    for i, reading in enumerate(readings):
        after = copy.deepcopy(reading)
        after["counters"]["time_since_clear_min"] += 10.0
        after["counters"]["raw_errors_lanes"] = [e + 6_000_000 for e in after["counters"]["raw_errors_lanes"]]
        if i % 250 == 0:
            after["counters"]["raw_errors_lanes"][2] += 10**10
        host, rail = divmod(i, rails)
        for kind in ("host", "switch"):
            end = {"kind": "host", "host": "node%04d" % host, "device": "mlx5_%d" % rail, "port": 1}
            if kind == "switch":
                end = {
                    "kind": "switch",
                    "guid": "0x%016x" % (0xA0000 + host // 32),
                    "lid": 1 + host // 32,
                    "port": 1 + i % 64,
                }
            ports.append({"end": end, "before": reading, "after": after, "before_at": 0.0, "after_at": 600.0})
    t1 = time.time()
    verdict = findings.evaluate(ports)
    judge_s = time.time() - t1
    size = len(json.dumps(verdict))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        "%5d x %d: %6d ports, parse %.2f s (%.2f ms a port), judge %.2f s, %d findings, verdict %.1f MB JSON, "
        "peak RSS %.0f MB"
        % (
            hosts,
            rails,
            len(ports),
            parse_s,
            1000 * parse_s / len(readings),
            judge_s,
            len(verdict["findings"]),
            size / 1e6,
            peak,
        )  # fmt: skip
    )


if __name__ == "__main__":
    for spec in sys.argv[1:] or ["64x8", "512x8", "1024x8"]:
        hosts, rails = (int(x) for x in spec.split("x"))
        run(hosts, rails)
