"""Reports above aggregate.AGGREGATE_ABOVE pair results: Prometheus and JUnit per host and rail (every failure
still on its own), report.html summarised by host and rail with heatmaps over host groups; built by the real
build_report from an all_pairs plan, checked with promtool and an XML/HTML parser."""

import html.parser
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import aggregate
from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import MAX_AXIS, to_html
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds

HOSTS = ["node%03d" % i for i in range(80)]
RAILS = ("mlx5_0", "mlx5_1")
SLOW = ("node013", "mlx5_1")  # a port trained down: slow with every partner on that rail


def report():
    results = []
    for index, rnd in enumerate(pair_rounds(HOSTS)):
        for server, client in rnd:
            for dev in RAILS:
                bw = 180.0 if SLOW in ((server, dev), (client, dev)) else 392.0
                results.append(
                    {"server": server, "server_device": dev, "client": client, "client_device": dev, "rail": dev,
                     "test": "write", "bw_avg_gbps": bw, "threshold_gbps": 360.0, "passed": bw >= 360.0,
                     "failure": None if bw >= 360 else "180.0 Gb/s < 360.0 Gb/s", "round": index + 1, "pass": 1,
                     "duration_s": 5.0}
                )  # fmt: skip
    return R.build_report(results, expected_hosts=HOSTS, now=1796119200.0)


@pytest.fixture
def big(monkeypatch):
    doc = report()
    assert len(doc["results"]) == 80 * 79  # 3160 pairs x 2 rails
    monkeypatch.setattr(aggregate, "AGGREGATE_ABOVE", 1000)
    return doc


def test_by_host_rail_counts_each_result_at_both_ends():
    doc = report()
    entries = dict(((e["host"], e["device"]), e) for e in aggregate.by_host_rail(doc["results"]))
    slow = entries[SLOW]
    assert (slow["pairs"], slow["failed"], slow["worst"], slow["median"]) == (79, 79, 180.0, 180.0)
    partner = entries[("node014", "mlx5_1")]
    assert (partner["pairs"], partner["failed"], partner["worst"], partner["median"]) == (79, 1, 180.0, 392.0)
    assert entries[("node014", "mlx5_0")]["failed"] == 0


def test_prometheus_per_host_and_rail_and_every_failure_still_its_own_series(big):
    text = render.to_prometheus(big)
    small = render.to_prometheus(dict(big, results=big["results"][:10]))
    assert "ibtune_validation_pairs_aggregated 1" in text and "ibtune_host_rail" not in small
    assert 'ibtune_host_rail_failed_pairs{host="node013",device="mlx5_1",test="write"} 79.0' in text
    assert 'ibtune_host_rail_bandwidth_min_gbps{host="node014",device="mlx5_1",test="write"} 180.0' in text
    pair_lines = [line for line in text.splitlines() if line.startswith("ibtune_link_passed{")]
    assert len(pair_lines) == 79 and all(line.endswith(" 0") for line in pair_lines)  # the 79 failures only
    assert len(text.splitlines()) < len(render.to_prometheus(dict(big, results=big["results"][:1000])).splitlines()) * 2
    if shutil.which("promtool") is None:
        pytest.skip("promtool (Debian package prometheus) not installed")
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_junit_one_case_per_host_and_rail_naming_its_failing_pairs(big):
    root = ET.fromstring(render.to_junit(big))
    pairs = [s for s in root.iter("testsuite") if s.get("name") == "pairs"][0]
    cases = pairs.findall("testcase")
    assert len(cases) == 80 * 2
    failing = [c for c in cases if c.find("failure") is not None]
    assert sorted(c.get("name").split(" (")[0] for c in failing) == sorted(
        ["node013 mlx5_1 write"] + ["node%03d mlx5_1 write" % i for i in range(80) if i != 13]
    )
    slow = [c for c in failing if c.get("name").startswith("node013 mlx5_1")][0].find("failure")
    assert slow.get("message") == "79 of 79 pairs failed"
    assert slow.text.count("\n") == aggregate.FAILED_LISTED and "and 59 more failing pairs in report.json" in slow.text


class Cells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells = 0
        self.host_rails = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "rect" and "cell" in (attrs.get("class") or "").split():
            self.cells += 1
        if tag == "td" and "hr" in (attrs.get("class") or "").split() and attrs.get("data-failed") != "0":
            self.host_rails.append((attrs["data-host"], attrs["data-device"], int(attrs["data-failed"])))


def test_html_summarises_by_host_and_rail_and_draws_heatmaps_over_host_groups(big):
    page = to_html(big)
    parsed = Cells()
    parsed.feed(page)
    # two rails, at most MAX_AXIS x MAX_AXIS group cells each instead of 3160 host cells
    assert parsed.cells <= 2 * MAX_AXIS * MAX_AXIS and parsed.cells < 2 * 3160
    assert parsed.host_rails[0] == ("node013", "mlx5_1", 79)  # most failures first
    # node013's slow rail failed one pair of every other host on mlx5_1: no host passed everything
    assert "0 of 80 hosts passed every pair on every rail." in page
    assert "each cell is a group of up to 2 consecutive hosts" in page
    assert page.index('id="host-rails"') < page.index('class="heatmap"')


def test_render_all_works_out_the_host_rail_summary_once_and_its_files_are_the_renderers_own(big, monkeypatch):
    """render_all hands one by_host_rail to JUnit, Prometheus and HTML: each file equals the renderer's own output."""
    calls = []
    real = aggregate.by_host_rail
    monkeypatch.setattr(aggregate, "by_host_rail", lambda results: calls.append(1) or real(results))
    files = render.render_all(big)
    assert len(calls) == 1
    assert files["junit.xml"] == render.to_junit(big)
    assert files["ibtune.prom"] == render.to_prometheus(big)
    assert files["report.html"] == to_html(big)
    assert len(calls) == 4  # each renderer alone works it out itself


def test_above_the_size_report_json_lists_what_did_not_pass_and_results_json_every_pair(big, tmp_path):
    """report.json stays a file a person and slurm_remediate read whole; results.json (table-encoded) has every
    pair, read back by resultfile.read_results as the report held them."""
    import json

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

    render.write_atomic(str(tmp_path / "big"), render.render_files(big))
    doc = json.loads((tmp_path / "big" / "report.json").read_text())
    failed = [r for r in big["results"] if not r["passed"]]
    assert doc["results_complete"] is False and doc["results_file"] == "results.json"
    assert doc["results"] == failed and len(failed) == 79
    assert doc["failed_hosts"] == big["failed_hosts"] and doc["totals"] == big["totals"]
    assert resultfile.read_results(str(tmp_path / "big" / "results.json")) == big["results"]
    items = json.loads((tmp_path / "big" / "results.json").read_text())
    assert any(resultfile.TABLE_KEY in item for item in items)
    small = dict(big, results=big["results"][:10])
    render.write_atomic(str(tmp_path / "small"), render.render_files(small))
    doc = json.loads((tmp_path / "small" / "report.json").read_text())
    assert doc["results_complete"] is True and doc["results"] == small["results"]
    assert json.loads((tmp_path / "small" / "results.json").read_text()) == small["results"]  # the plain list


def test_aggregated_prometheus_lists_each_pair_that_failed_or_regressed_and_summary_counts_the_figures(big):
    """Above the size the per-pair series are those of the results that failed or regressed (picked in C; the
    comprehension over every result is the spec), and summary.md's bandwidth line counts the figures given."""
    results = big["results"]
    for index in (3, 40, 41):
        res = results.promote(index)
        res["regressed"] = True  # a passed result that regressed (the series says so) and failed ones
        if index == 40:
            res["bw_avg_gbps"] = None
    passed, regressed = results.column("passed"), results.column("regressed")
    listed = [results[i] for i, (ok, reg) in enumerate(zip(passed, regressed)) if not ok or reg]
    text = render.to_prometheus(big)
    lines = [line for line in text.splitlines() if line.startswith("ibtune_link_passed{")]
    assert len(lines) == len(set(r["link"] for r in listed)) == 79 + 3
    assert "%d measurements: min" % (len(results) - 1) in render.to_markdown(big)


def grouped_cells_spec(results, group_of):
    """html._grouped_cells as it was before a pass's results (one kind and test, string rails) took their own loop:
    each result's kind, test and rail worked out (kind_of, rail_of), the cell's worst passing result by goodness."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import GROUP_TITLE_FAILURES

    merged = {}
    for index, res in enumerate(results):
        kind, lat, rail = res.get("kind"), res.get("t_typical_us"), res.get("rail")
        kind = str(kind) if kind else ("latency" if lat is not None else "bandwidth")
        if rail is None or rail == "":
            rail = res.get("server_device") or res.get("client_device") or "-"
        cells = merged.setdefault((kind, str(res.get("test") or ""), str(rail)), {})
        cell = cells.setdefault((group_of[res["server"]], group_of[res["client"]]), {"failing": [], "worst": None})
        if not res.get("passed"):
            if len(cell["failing"]) < GROUP_TITLE_FAILURES:
                cell["failing"].append(res)
            continue
        if kind == "latency":
            gate = res.get("threshold_us")
            good = (gate / lat) if lat and gate else None
        else:
            gate, bw = res.get("threshold_gbps"), res.get("bw_avg_gbps")
            good = (bw / gate) if bw is not None and gate else None
        if cell["worst"] is None or (good is not None and good < cell["worst"][0]):
            cell["worst"] = (good if good is not None else float("inf"), index)
    return dict(
        (key, dict((pair, c["failing"] or [results[c["worst"][1]]]) for pair, c in cells.items()))
        for key, cells in merged.items()
    )


NAN = float("nan")
ANY = {
    "kind": [None, "", "bandwidth", "latency"],
    "test": [None, "", "write", "read", True, 1],
    "rail": [None, "", "mlx5_0:1", "mlx5_1:1", 0],
    "t_typical_us": [None, 0, 1.5, 2.5, NAN],
    "bw_avg_gbps": [None, 0.0, 180.0, 392.0, 392.0, NAN],
    "threshold_gbps": [None, 0, 360.0],
    "threshold_us": [None, 0, 3.0],
}


@pytest.mark.parametrize("seed", range(60))
def test_grouped_heatmap_cells_are_what_each_result_worked_out_alone_gives(seed):
    """The heatmaps over host groups (above the aggregate size): for a pass's results (one kind and test, string
    rails) and for any others (kinds, tests and rails that vary, are missing or are not strings), as a list of dicts
    and as a ResultTable: the same cells in the same order, each with the same failing results (the first three) or
    the same worst passing one (the first of equals; a missing figure or gate never the worst)."""
    import random

    from ansible_collections.ibtune.fabric.plugins.module_utils.report import html as report_html
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable

    rng = random.Random(seed)
    hosts = ["h%d" % i for i in range(rng.choice([3, 6]))]
    group_of = dict((host, "g%d" % (number // 2)) for number, host in enumerate(hosts))
    uniform = seed % 3 != 0  # a pass's results: one kind and test, string rails
    kind, test = rng.choice(ANY["kind"]), rng.choice(["write", None, "read"])
    results = []
    for _number in range(rng.randrange(1, 120)):
        res = {
            "server": rng.choice(hosts), "client": rng.choice(hosts), "server_device": rng.choice(["mlx5_0", None]),
            "client_device": rng.choice(["mlx5_1", ""]), "passed": rng.random() < 0.8,
        }  # fmt: skip
        for key, values in ANY.items():
            res[key] = rng.choice(values)
        if uniform:
            res.update(kind=kind, test=test, rail=rng.choice(["mlx5_0:1", "mlx5_1:1"]))
            if seed % 5 == 4:  # tests (kinds) that are equal (True == 1) but not the same text: two heatmaps
                res["kind" if seed % 10 == 9 else "test"] = rng.choice([True, 1])
            if not kind:  # its figure tells the kind: latency results all have one, bandwidth ones none
                res["t_typical_us"] = rng.choice([1.5, 2.5, NAN, 0]) if seed % 2 else None
        results.append(res)
    expected = grouped_cells_spec(results, group_of)
    for given in (results, ResultTable.from_dicts(results)):
        got = report_html._grouped_cells(given, group_of)
        assert got == expected
        assert list(got) == list(expected) and [list(cells) for cells in got.values()] == [
            list(cells) for cells in expected.values()
        ]
