"""Open report.html in a real browser (Debian's headless Chromium) and check it against report.json.

Usage: .venv/bin/python scripts/browser_check.py [--window-size W,H] REPORT_DIR [REPORT_DIR...]

For each directory holding report.json and report.html: Chromium loads the page from file://, its DOM
(after parsing and layout, --dump-dom) is parsed and must show what report.json says:
  - #verdict: data-passed == passed, its text holds the headline; #message == message;
  - #systemic holds `systemic` when there is one, and is absent otherwise;
  - #suspects li: one per suspect node (host), suspect link (link key) and suspect cable (a<->b);
  - .heatmap: one per (rail, kind, test); one rect.cell per measured (server, client) in it;
    the .cell-fail cells (data-server, data-client, data-rail, data-kind, data-test) are exactly the
    failed results;
  - #failed-hosts li: the failed_hosts; #counters tbody tr: host + switch counter violations;
  - nothing external: no <script>, no <link>, no src/href to another host.
Then a screenshot is written next to the report (report.png). Exit status 1 with one line per problem.
"""

import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
# the renderer's own grouping of results into heatmaps (one rule, in report/html.py)
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import kind_of, rail_of  # noqa: E402

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    """An element: tag, attributes and its content in document order (Nodes and text strings)."""

    __slots__ = ("tag", "attrs", "content", "parent")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.content = tag, dict(attrs), parent, []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for child in self.content:
            if isinstance(child, Node):
                yield from child.walk()

    def all_text(self):
        """The visible text, whitespace collapsed (hover <title>s left out)."""
        parts = []

        def collect(node):
            for child in node.content:
                if isinstance(child, Node):
                    if child.tag != "title":
                        collect(child)
                else:
                    parts.append(child)

        collect(self)
        return " ".join("".join(parts).split())


class Tree(html.parser.HTMLParser):
    """A small DOM: enough to select by id, class and tag, with text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.content.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.content.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.content.append(data)


def parse_dom(text):
    tree = Tree()
    tree.feed(text)
    tree.close()
    return tree.root


def by_id(root, ident):
    return [n for n in root.walk() if n.attrs.get("id") == ident]


def _cell_key(res):
    return (res["server"], res["client"], rail_of(res), kind_of(res), str(res.get("test") or ""))


def _diff(what, expected, actual):
    expected, actual = set(expected), set(actual)
    if expected == actual:
        return []
    missing, extra = sorted(expected - actual), sorted(actual - expected)
    return ["%s differ from report.json: missing %s, unexpected %s" % (what, missing[:10], extra[:10])]


def _check_verdict(report, root):
    problems = []
    verdict = by_id(root, "verdict")
    if len(verdict) != 1:
        return ["expected one #verdict, found %d" % len(verdict)]
    want = "true" if report["passed"] else "false"
    if verdict[0].attrs.get("data-passed") != want:
        problems.append(
            "#verdict data-passed is %r, report.json passed is %s"
            % (verdict[0].attrs.get("data-passed"), report["passed"])
        )
    headline = " ".join((report.get("headline") or ("PASSED" if report["passed"] else "FAILED")).split())
    if headline not in verdict[0].all_text():
        problems.append("#verdict does not show the headline %r (shows %r)" % (headline, verdict[0].all_text()))
    return problems


def _check_message_and_systemic(report, root):
    problems = []
    message = by_id(root, "message")
    if report.get("message") and (len(message) != 1 or message[0].all_text() != " ".join(report["message"].split())):
        problems.append("#message does not show report.json's message %r" % report["message"][:120])
    systemic = by_id(root, "systemic")
    if report.get("systemic"):
        if len(systemic) != 1 or " ".join(report["systemic"].split()) not in systemic[0].all_text():
            problems.append("#systemic does not show the systemic cause %r" % report["systemic"])
    elif systemic:
        problems.append("#systemic is shown although report.json has no systemic cause")
    return problems


def _check_suspects(report, root):
    problems = []
    suspects = by_id(root, "suspects")
    shown = []
    if len(suspects) != 1:
        problems.append("expected one #suspects list, found %d" % len(suspects))
    else:
        for li in (n for n in suspects[0].walk() if n.tag == "li"):
            subject = li.attrs.get("data-subject", "")
            shown.append(subject)
            if subject.replace("<->", "") and not all(part in li.all_text() for part in subject.split("<->")):
                problems.append("suspect %r is not named in its list item %r" % (subject, li.all_text()))
    expected = [n["host"] for n in report.get("suspect_nodes") or []]
    expected += [x["link"] for x in report.get("suspect_links") or []]
    expected += ["%s<->%s" % (c.get("a"), c.get("b")) for c in report.get("suspect_cables") or []]
    if sorted(shown) != sorted(expected):
        problems.append("#suspects li are %s, report.json names %s" % (sorted(shown), sorted(expected)))
    return problems


def _check_heatmaps(report, root):
    results = report.get("results") or []
    maps = [n for n in root.walk() if "heatmap" in n.classes()]
    want_maps = set((rail_of(r), kind_of(r), str(r.get("test") or "")) for r in results)
    got_maps = [(n.attrs.get("data-rail"), n.attrs.get("data-kind"), n.attrs.get("data-test")) for n in maps]
    problems = []
    if len(got_maps) != len(set(got_maps)):
        problems.append("a (rail, kind, test) has more than one .heatmap: %s" % sorted(got_maps))
    problems += _diff(".heatmap (rail, kind, test)", want_maps, got_maps)
    cells = []
    for hm in maps:
        map_key = (hm.attrs.get("data-rail"), hm.attrs.get("data-kind"), hm.attrs.get("data-test"))
        for n in hm.walk():
            if "cell" in n.classes():
                cells.append((n.parent.attrs.get("data-server"), n.attrs.get("data-client")) + map_key)
    if len(cells) != len(set(cells)):
        problems.append("some (server, client) pair has more than one cell in a heatmap")
    return problems + _diff("measured cells", set(_cell_key(r) for r in results), cells)


def _check_failing_cells(report, root):
    problems, got_fail = [], []
    for n in (n for n in root.walk() if "cell-fail" in n.classes()):
        a = n.attrs
        got_fail.append(
            (a.get("data-server"), a.get("data-client"), a.get("data-rail"), a.get("data-kind"), a.get("data-test"))
        )
        if a.get("data-passed") != "false":
            problems.append("failing cell %s has data-passed=%r" % (got_fail[-1][:3], a.get("data-passed")))
    want_fail = set(_cell_key(r) for r in report.get("results") or [] if not r.get("passed"))
    return problems + _diff("failing cells (.cell-fail)", want_fail, got_fail)


def _check_hosts_and_counters(report, root):
    hosts_list = by_id(root, "failed-hosts")
    got_hosts = [li.attrs.get("data-host") for h in hosts_list for li in h.walk() if li.tag == "li"]
    problems = _diff("#failed-hosts li", [h["host"] for h in report.get("failed_hosts") or []], got_hosts)
    counters = by_id(root, "counters")
    rows = [tr for c in counters for tr in c.walk() if tr.tag == "tr" and tr.attrs.get("data-side")]
    want_rows = len(report.get("counter_violations") or []) + len(report.get("switch_counter_violations") or [])
    if len(rows) != want_rows:
        problems.append("#counters shows %d violations, report.json has %d" % (len(rows), want_rows))
    return problems


def _check_self_contained(report, root):
    problems = []
    for n in root.walk():
        if n.tag in ("script", "link", "iframe", "object", "embed", "img"):
            problems.append("the page has a <%s> element: report.html must be self-contained" % n.tag)
        for attr in ("src", "href", "xlink:href"):
            value = (n.attrs.get(attr) or "").strip().lower()
            if value and not value.startswith("#"):
                problems.append("<%s %s=%r> points outside the file" % (n.tag, attr, value))
    return problems


CHECKS = (
    _check_verdict,
    _check_message_and_systemic,
    _check_suspects,
    _check_heatmaps,
    _check_failing_cells,
    _check_hosts_and_counters,
    _check_self_contained,
)


def check_dom(report, root):
    """Problems (one sentence each) between the report dict and the DOM the browser built."""
    return [problem for check in CHECKS for problem in check(report, root)]


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(binary, args, timeout=180):
    with tempfile.TemporaryDirectory(prefix="ibtune-chromium-") as profile:
        argv = [binary, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=%s" % profile] + args  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return proc, time.perf_counter() - start


def check_dir(binary, report_dir, window_size):
    report_dir = os.path.abspath(report_dir)
    json_path, html_path = os.path.join(report_dir, "report.json"), os.path.join(report_dir, "report.html")
    for path in (json_path, html_path):
        if not os.path.isfile(path):
            return ["%s is missing: run fabric_report (or scripts/browser_reports.py) to write it first" % path]
    with open(json_path, encoding="utf-8") as handle:
        report = json.load(handle)
    url = "file://" + html_path
    proc, dom_s = run_chromium(binary, ["--dump-dom", url])
    if proc.returncode != 0 or "<html" not in proc.stdout:
        return ["chromium --dump-dom %s failed (rc %d): %s" % (url, proc.returncode, proc.stderr.strip()[-400:])]
    problems = check_dom(report, parse_dom(proc.stdout))
    png = os.path.join(report_dir, "report.png")
    shot, shot_s = run_chromium(binary, ["--screenshot=%s" % png, "--window-size=%s" % window_size, url])
    if shot.returncode != 0 or not os.path.isfile(png):
        problems.append(
            "chromium --screenshot of %s failed (rc %d): %s" % (url, shot.returncode, shot.stderr.strip()[-400:])
        )
    else:
        with open(png, "rb") as handle:
            if handle.read(8) != b"\x89PNG\r\n\x1a\n":
                problems.append("%s is not a PNG image" % png)
    fails = sum(1 for r in report.get("results") or [] if not r.get("passed"))
    print(
        "browser_check %s: %s; %d results, %d failing cells; load+render (dump-dom) %.2f s, screenshot %.2f s -> %s"
        % (report_dir, "OK" if not problems else "%d problems" % len(problems), len(report.get("results") or []),
           fails, dom_s, shot_s, png)
    )  # fmt: skip
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report_dirs", nargs="+", metavar="REPORT_DIR")
    parser.add_argument("--window-size", default="1280,1600", help="screenshot size W,H (default 1280,1600)")
    args = parser.parse_args(argv)
    binary = chromium_binary()
    if binary is None:
        print("browser_check: chromium is not installed: install the Debian package chromium (make bootstrap does)",
              file=sys.stderr)  # fmt: skip
        return 2
    failed = False
    for report_dir in args.report_dirs:
        for problem in check_dir(binary, report_dir, args.window_size):
            failed = True
            print("browser_check: %s: %s" % (report_dir, problem), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
