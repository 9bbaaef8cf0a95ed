"""report_html.to_html on report dicts built by the real report.build_report, read back with an HTML parser."""

import importlib.util
import re
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html

ROOT = Path(__file__).resolve().parents[5]
NOW = 1796119200.0  # 2026-12-01T10:00:00Z
HOSTS = ["ibt-lab-node%d" % i for i in range(1, 5)]
RAILS = ("mlx5_0", "mlx5_1")
DEGRADED = ("ibt-lab-node2", "ibt-lab-node3", "mlx5_0")
SYMBOL_ERRORS = {
    "host": "ibt-lab-node4", "device": "mlx5_1", "port": 1, "counter": "symbol_error",
    "before": 0, "after": 7, "delta": 7, "allowed": 0, "category": "physical",
}  # fmt: skip


def _load_browser_check():
    spec = importlib.util.spec_from_file_location("browser_check", ROOT / "scripts" / "browser_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BC = _load_browser_check()


def lab_results(degraded=True, jitter=0.0, retest=True):
    """Like the lab (molecule/lab): 4 hosts, 2 rails, all_pairs rounds, then the retest plan."""

    def measure(server, client, round_, pass_):
        out = []
        for dev in RAILS:
            bad = degraded and {server, client} == set(DEGRADED[:2]) and dev == DEGRADED[2]
            bw = 180.0 if bad else round(392.0 + jitter, 1)
            out.append(
                {
                    "server": server, "server_device": dev, "server_port": 1,
                    "client": client, "client_device": dev, "client_port": 1,
                    "test": "write", "bw_avg_gbps": bw, "bw_peak_gbps": bw + 0.4, "threshold_gbps": 360.0,
                    "passed": bw >= 360.0, "failure": None, "round": round_, "pass": pass_, "duration_s": 5.0,
                }
            )  # fmt: skip
        return out

    results = [r for i, rnd in enumerate(pair_rounds(HOSTS)) for s, c in rnd for r in measure(s, c, i, 1)]
    if degraded and retest:
        plan = retest_rounds(results, HOSTS)
        results += [r for i, rnd in enumerate(plan) for s, c in rnd for r in measure(s, c, i, 2)]
    return results


def lab_baseline(runs=5):
    base = RB.empty_baseline()
    for run in range(runs):
        jitter = (-0.7, 0.4, 0.9, -0.2, 0.1)[run % 5]
        base = RB.update_baseline(
            base, VR.normalize_results(lab_results(False, jitter)), R._iso(NOW - (runs - run) * 86400)
        )
    return base


@pytest.fixture(scope="module")
def faulty():
    base = lab_baseline()
    report = R.build_report(lab_results(), counter_violations=[SYMBOL_ERRORS], baseline=base, run_id="f", now=NOW)
    return report, base


def dom(text):
    return BC.parse_dom(text)


def by_class(root, cls):
    return [n for n in root.walk() if cls in n.classes()]


def one(root, ident):
    found = BC.by_id(root, ident)
    assert len(found) == 1, "expected one #%s, found %d" % (ident, len(found))
    return found[0]


# ---------------------------------------------------------------------------------------------------- faulty lab run


def test_failing_cells_are_the_failed_results_and_marked_beyond_colour(faulty):
    report, base = faulty
    root = dom(to_html(report, base))
    failed = [r for r in report["results"] if not r["passed"]]
    assert [(r["server"], r["client"], r["server_device"], r["bw_avg_gbps"]) for r in failed] == [
        ("ibt-lab-node2", "ibt-lab-node3", "mlx5_0", 180.0)
    ]
    (cell,) = by_class(root, "cell-fail")
    assert cell.tag == "rect"
    assert (cell.attrs["data-server"], cell.attrs["data-client"], cell.attrs["data-rail"]) == (
        "ibt-lab-node2",
        "ibt-lab-node3",
        "mlx5_0",
    )
    assert cell.attrs["data-passed"] == "false" and cell.attrs["data-kind"] == "bandwidth"
    # not colour alone: the hatched pattern class, and a glyph in the cell next to the figure
    assert "cf" in cell.classes()
    (title,) = [n for n in cell.walk() if n.tag == "title"]
    tip = title.all_text()
    assert "180.0 Gb/s (gate >= 360.0)" in tip and "FAIL" in tip and "180.0 Gb/s < 360.0 Gb/s" in tip
    label = cell.parent.content[cell.parent.content.index(cell) + 1]
    assert label.tag == "text" and label.all_text() == "\u2715180"
    # every other measured cell passed
    cells = by_class(root, "cell")
    assert len(cells) == len({(r["server"], r["client"], r["server_device"]) for r in report["results"]})
    assert [c.attrs["data-passed"] for c in cells].count("false") == 1


def test_one_heatmap_per_rail_and_kind_rows_servers_columns_clients(faulty):
    report, base = faulty
    root = dom(to_html(report, base))
    maps = by_class(root, "heatmap")
    assert [(m.attrs["data-rail"], m.attrs["data-kind"], m.attrs["data-test"]) for m in maps] == [
        ("mlx5_0", "bandwidth", "write"),
        ("mlx5_1", "bandwidth", "write"),
    ]
    rows = [n for n in maps[0].walk() if n.tag == "g" and "data-server" in n.attrs]
    assert [r.attrs["data-server"] for r in rows] == sorted({r["server"] for r in report["results"]})
    # the row of node2 has its cells at the column of each client, left to right in host order
    node2 = [r for r in rows if r.attrs["data-server"] == "ibt-lab-node2"][0]
    xs = {c.attrs["data-client"]: int(c.attrs["x"]) for c in node2.walk() if "cell" in c.classes()}
    assert xs["ibt-lab-node1"] < xs["ibt-lab-node3"]


def test_verdict_message_suspects_and_counters_match_the_dict(faulty):
    report, base = faulty
    root = dom(to_html(report, base))
    verdict = one(root, "verdict")
    assert verdict.attrs["data-passed"] == "false" and "fail" in verdict.classes()
    assert report["headline"].startswith("FAILED: 1 of 16 pair results failed")
    assert report["headline"] in verdict.all_text()
    assert one(root, "message").all_text() == report["message"]
    assert BC.by_id(root, "systemic") == []
    items = [n for n in one(root, "suspects").walk() if n.tag == "li"]
    assert [li.attrs["data-subject"] for li in items] == ["ibt-lab-node2/mlx5_0<->ibt-lab-node3/mlx5_0"]
    assert items[0].attrs["data-kind"] == "link"
    assert "180.0 Gb/s < 360.0 Gb/s" in items[0].all_text()
    rows = [n for n in one(root, "counters").walk() if n.tag == "tr" and n.attrs.get("data-side")]
    assert len(rows) == 1 and rows[0].attrs["data-side"] == "host"
    cells = [n.all_text() for n in rows[0].walk() if n.tag == "td"]
    assert cells[:2] == ["host", "ibt-lab-node4 mlx5_1"] and "symbol_error" in cells and "+7" in cells


def test_the_browser_checks_agree_with_the_renderer_and_catch_a_mismatch(faulty):
    report, base = faulty
    page = to_html(report, base)
    assert BC.check_dom(report, dom(page)) == []
    # a report.json saying another cell failed, or naming another suspect: the checker says so
    other = dict(report, results=[dict(r) for r in report["results"]], suspect_links=[])
    other["results"][1]["passed"] = False
    problems = BC.check_dom(other, dom(page))
    assert any(p.startswith("failing cells (.cell-fail) differ") and "mlx5_1" in p for p in problems)
    assert any(p.startswith("#suspects li are") for p in problems)


def test_trend_sparklines_from_the_baseline_history_worst_link_first(faulty):
    report, base = faulty
    root = dom(to_html(report, base))
    rows = [n for n in one(root, "trends").walk() if n.tag == "tr" and "data-link" in n.attrs]
    links = {r["link"] for r in report["results"]}
    assert len(rows) == len(links) == 12
    first = rows[0]
    assert first.attrs["data-link"] == "ibt-lab-node2/mlx5_0<->ibt-lab-node3/mlx5_0" and "bad" in first.classes()
    (poly,) = [n for n in first.walk() if n.tag == "polyline"]
    assert len(poly.attrs["points"].split()) == 5 + 1  # five recorded runs and this one
    (dot,) = [n for n in first.walk() if n.tag == "circle"]
    assert "bad" in dot.classes()
    median = RB.baseline_median(base, first.attrs["data-link"], "write")
    assert ("%.1f" % median) in first.all_text() and "180.0" in first.all_text()
    assert all("bad" not in r.classes() for r in rows[1:])
    # without a history there is no trend section
    assert BC.by_id(dom(to_html(report)), "trends") == []


# ---------------------------------------------------------------------------------------------------- healthy run


def test_healthy_run_has_no_failing_cell_and_a_passing_verdict():
    report = R.build_report(lab_results(degraded=False), run_id="h", now=NOW)
    root = dom(to_html(report))
    assert report["passed"]
    verdict = one(root, "verdict")
    assert verdict.attrs["data-passed"] == "true" and report["headline"] in verdict.all_text()
    assert by_class(root, "cell-fail") == []
    assert len(by_class(root, "cell")) == 12
    assert [n for n in one(root, "suspects").walk() if n.tag == "li"] == []
    assert BC.by_id(root, "failed-hosts") == [] and BC.by_id(root, "counters") == []
    assert BC.check_dom(report, root) == []


def test_self_contained_nothing_fetched(faulty):
    report, base = faulty
    page = to_html(report, base)
    root = dom(page)
    assert not [n for n in root.walk() if n.tag in ("script", "link", "img", "iframe", "object")]
    refs = [(n.tag, a, v) for n in root.walk() for a, v in n.attrs.items() if a in ("src", "href", "xlink:href")]
    assert refs == []
    assert "@import" not in page and "url(http" not in page and "<script" not in page
    # the only url() references are the page's own patterns
    patterns = {p.attrs["id"] for p in root.walk() if p.tag == "pattern"}
    used = set(re.findall(r"url\(([^)]*)\)", page))
    assert used == {"#" + p for p in patterns} == {"#p-fail", "#p-none", "#p-reg"}


# ---------------------------------------------------------------------------------------------------- newer keys


def test_new_contract_keys_systemic_failed_hosts_cables_switch_counters_host_order():
    report = R.build_report(lab_results(), counter_violations=[SYMBOL_ERRORS], run_id="n", now=NOW)
    report = dict(report)
    report["systemic"] = "no RDMA device on any host"
    report["failed_hosts"] = [
        {"host": "ibt-lab-node2", "reason": "bad link mlx5_0 (180.0 Gb/s < 360.0 Gb/s)", "failure_kind": "bad_link"},
        {"host": "ibt-lab-node5", "reason": "unreachable over ssh", "failure_kind": "unreachable"},
    ]
    report["suspect_cables"] = [{"a": "leaf-01 p33", "b": "spine-02 p5", "reason": "both links through it are slow"}]
    report["switch_counter_violations"] = [
        {"switch": "leaf-01", "port": 33, "peer": "spine-02 p5", "counter": "symbol_error", "delta": 12,
         "allowed": 0, "category": "physical"}
    ]  # fmt: skip
    report["host_order"] = ["ibt-lab-node3", "ibt-lab-node4", "ibt-lab-node1", "ibt-lab-node2"]
    root = dom(to_html(report))
    assert "no RDMA device on any host" in one(root, "systemic").all_text()
    hosts = [
        (li.attrs["data-host"], li.attrs["data-kind"]) for li in one(root, "failed-hosts").walk() if li.tag == "li"
    ]
    assert hosts == [("ibt-lab-node2", "bad_link"), ("ibt-lab-node5", "unreachable")]
    assert "unreachable over ssh" in one(root, "failed-hosts").all_text()
    subjects = [li.attrs["data-subject"] for li in one(root, "suspects").walk() if li.tag == "li"]
    assert subjects[-1] == "leaf-01 p33<->spine-02 p5"
    sides = [tr.attrs["data-side"] for tr in one(root, "counters").walk() if tr.tag == "tr" and "data-side" in tr.attrs]
    assert sides == ["host", "switch"]
    rows = [n.attrs["data-server"] for n in by_class(root, "heatmap")[0].walk() if "data-server" in n.attrs]
    rows = [h for h in rows if h]  # the failing cell repeats data-server
    assert list(dict.fromkeys(rows)) == ["ibt-lab-node3", "ibt-lab-node4", "ibt-lab-node1", "ibt-lab-node2"]
    assert BC.check_dom(report, root) == []


def test_latency_results_get_their_own_heatmap_against_their_gate():
    rows = []
    for server, client, typical in (("a", "b", 1.9), ("b", "c", 4.2), ("c", "a", 2.0)):
        rows.append(
            {"server": server, "client": client, "server_device": "mlx5_0", "client_device": "mlx5_0",
             "test": "send_lat", "bw_avg_gbps": None, "threshold_gbps": None, "passed": typical <= 3.0,
             "failure": None if typical <= 3.0 else "typical latency 4.20 us > 3.00 us", "kind": "latency",
             "rail": 0, "t_typical_us": typical, "p99_us": typical * 1.5, "threshold_us": 3.0}
        )  # fmt: skip
    report = R.build_report(rows, run_id="lat", now=NOW)
    root = dom(to_html(report))
    (hm,) = by_class(root, "heatmap")
    assert (hm.attrs["data-rail"], hm.attrs["data-kind"], hm.attrs["data-test"]) == ("0", "latency", "send_lat")
    (cell,) = by_class(root, "cell-fail")
    assert (cell.attrs["data-server"], cell.attrs["data-client"], cell.attrs["data-rail"]) == ("b", "c", "0")
    tip = [n for n in cell.walk() if n.tag == "title"][0].all_text()
    assert "4.20 us typical (gate <= 3.00 us)" in tip and "p99 6.30 us" in tip
    assert BC.check_dom(report, root) == []


def test_everything_is_escaped():
    evil = 'n"><script>alert(1)</script>'
    results = lab_results(degraded=False)
    for r in results:
        if r["server"] == "ibt-lab-node1":
            r["server"] = evil
        if r["client"] == "ibt-lab-node1":
            r["client"] = evil
    results[0]["passed"] = False
    results[0]["failure"] = "<b>boom</b> & more"
    report = R.build_report(results, run_id="<run>", now=NOW)
    page = to_html(report)
    assert "<script" not in page and "<b>boom" not in page and "<run>" not in page
    root = dom(page)
    assert not [n for n in root.walk() if n.tag == "script"]
    cells = by_class(root, "cell")
    assert evil in {c.attrs["data-client"] for c in cells} | {c.parent.attrs["data-server"] for c in cells}
    assert BC.check_dom(report, root) == []


def test_large_fabric_cells_stay_compact():
    hosts = ["node%03d" % i for i in range(200)]
    results = []
    for index, rnd in enumerate(pair_rounds(hosts, "random", rounds=2, seed=1)):
        for server, client in rnd:
            results.append({"server": server, "client": client, "server_device": "mlx5_0", "client_device": "mlx5_0",
                            "bw_avg_gbps": 391.0, "threshold_gbps": 360.0, "round": index})  # fmt: skip
    report = R.build_report(results, run_id="big", now=NOW)
    page = to_html(report)
    root = dom(page)
    cells = by_class(root, "cell")
    assert len(cells) == 200
    # small cells, no number inside, a few hundred bytes each
    assert {(c.attrs["width"], c.attrs["height"]) for c in cells} == {("6", "6")}
    assert not by_class(root, "v")
    assert len(page) / len(cells) < 400


def test_cells_do_not_need_the_stylesheet(faulty):
    """Size and fill are SVG attributes, not CSS: where inline styles are blocked (Jenkins' default
    Content-Security-Policy) the cells, their colours and the failure pattern still show."""
    report, base = faulty
    root = dom(to_html(report, base))
    cells = by_class(root, "cell")
    assert all(c.attrs.get("width") == c.attrs.get("height") == "46" for c in cells)
    failing = [c.attrs["fill"] for c in cells if "cell-fail" in c.classes()]
    passing = {c.attrs["fill"] for c in cells if "cell-fail" not in c.classes()}
    assert failing == ["url(#p-fail)"]
    assert passing == {"#4ac26b"}  # 392 / 360 = 109%: the >= 105% bucket


def test_browser_check_names_a_missing_report_file(tmp_path):
    (tmp_path / "report.json").write_text("{}")
    (problem,) = BC.check_dir("chromium", str(tmp_path), "800,600")
    assert problem == "%s is missing: run fabric_report (or scripts/browser_reports.py) to write it first" % (
        tmp_path / "report.html"
    )


def test_a_pair_that_measured_nothing_is_a_crossed_failing_cell_with_its_sentence():
    results = lab_results(degraded=False)
    sentence = "couldn't connect to ibt-lab-node4 port 18515: is the server up?"
    target = results[0]
    target.update(bw_avg_gbps=None, bw_peak_gbps=None, passed=False, failure=sentence)
    report = R.build_report(results, run_id="dead", now=NOW)
    root = dom(to_html(report))
    (cell,) = by_class(root, "cell-fail")
    assert (cell.attrs["data-server"], cell.attrs["data-client"]) == (target["server"], target["client"])
    assert cell.attrs["fill"] == "url(#p-none)" and "cn" in cell.classes()
    tip = [n for n in cell.walk() if n.tag == "title"][0].all_text()
    assert sentence in tip and "- Gb/s" in tip
    assert BC.check_dom(report, root) == []
