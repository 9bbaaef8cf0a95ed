"""How fast the training exporter turns NCCL Inspector lines into metrics, and how many series it writes.

Prints figures, asserts nothing. The input is the real v2.28.9-1 output captured on the H200
(tests/fixtures/monitoring), replayed as one long job: each pass renumbers coll_sn so every line is new.

    .venv/bin/python bench/bench_inspector.py [passes]
"""

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring import inspector  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "monitoring" / "inspector-v2.28.9-1-h200" / "interval-500" / "4243"


def lines(passes):
    base = [json.loads(line) for path in sorted(FIXTURE.glob("*.log")) for line in path.read_text().splitlines()]
    for index in range(passes):
        for doc in base:
            doc = dict(doc, coll_perf=dict(doc["coll_perf"], coll_sn=doc["coll_perf"]["coll_sn"] + index * 1000))
            yield json.dumps(doc).encode()


def main():
    passes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    data = list(lines(passes))
    agg = inspector.Aggregator()
    start = time.perf_counter()
    for line in data:
        agg.feed("f", ("4243", ""), inspector.parse_line(line), 0.0)
    parsed = time.perf_counter() - start
    start = time.perf_counter()
    text = inspector.render(agg)
    rendered = time.perf_counter() - start
    print("lines: %d (%.1f MB)" % (len(data), sum(len(x) for x in data) / 1e6))
    print("parse + aggregate: %.2f s, %.0f lines/s" % (parsed, len(data) / parsed))
    print(
        "render: %.4f s, %d bytes, %d samples (bound %d)"
        % (rendered, len(text), agg.series_count(), inspector.max_series())
    )


if __name__ == "__main__":
    main()
