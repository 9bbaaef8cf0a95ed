# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: the fabric validation report as one self-contained page, from the report dict.

Pure and stdlib only (no Ansible imports). `to_html(report, history=None)` takes the same dict as
report.json (build_report) and, optionally, the baseline dict (load_baseline) for the per-link trends.
Inline CSS and inline SVG only: no script, font, image or stylesheet is fetched, so the file opens
on an air-gapped bastion. Hover titles are SVG/HTML `title`s (no JavaScript).

Stable hooks for tests and tools:
  #verdict (data-passed), #message, #systemic, #suspects li (data-subject, data-kind node|link|cable|switch;
  a switch also data-scope),
  .heatmap (data-rail, data-kind, data-test), one rect.cell per measured (server, client) with
  data-client and data-passed, its row g with data-server; failing cells have class cell-fail and
  repeat data-server/data-rail/data-kind/data-test; #failed-hosts li (data-host, data-kind),
  #counters tbody tr (data-side host|switch), #trends tr (data-link).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html

from ansible_collections.ibtune.fabric.plugins.module_utils.report import aggregate as _aggregate
from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as _phy
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import columns_of, row_reader

MAX_TRENDS = 200  # links with a sparkline (the worst first); the rest are counted
MAX_FAILED_ROWS = 200  # rows of the failed pairs table
BW_BUCKETS = (1.10, 1.05, 1.0)  # measured / gate: >= 1.10 c0, >= 1.05 c1, >= 1.0 c2, below: failing
# Cell fills as SVG presentation attributes, not CSS: a server that forbids inline styles (Jenkins'
# default Content-Security-Policy) still shows the cells, their colours and the failure patterns.
FILL = {
    "c0": "#1a7f37",
    "c1": "#4ac26b",
    "c2": "#bfd94c",
    "cr": "url(#p-reg)",
    "cf": "url(#p-fail)",
    "cn": "url(#p-none)",
}

CSS = """
body{font:14px/1.45 system-ui,"DejaVu Sans",Arial,sans-serif;margin:0 auto;padding:16px 24px;max-width:1600px;
color:#1b1f23;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:14px;margin:12px 0 4px}
.meta{color:#57606a;margin:0 0 10px}
#verdict{font-size:18px;font-weight:600;padding:10px 14px;border-radius:6px;margin:8px 0}
#verdict.pass{background:#dafbe1;border:2px solid #1a7f37}#verdict.fail{background:#ffebe9;border:2px solid #cf222e}
#verdict .mark{font-size:20px;margin-right:8px}
#message{margin:4px 0 10px;color:#24292f}
#systemic{background:#fff8c5;border:2px solid #9a6700;padding:8px 12px;border-radius:6px;font-weight:600}
ul{margin:4px 0;padding-left:22px}li{margin:2px 0}
.tag{display:inline-block;font-size:11px;font-weight:700;padding:0 6px;border-radius:8px;margin-right:6px;
color:#fff;background:#57606a;text-transform:uppercase}
.tag.bad{background:#cf222e}.tag.suspect{background:#bc4c00}
table{border-collapse:collapse;margin:4px 0 8px}th,td{border:1px solid #d0d7de;padding:2px 8px;text-align:left}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:flex;flex-wrap:wrap;gap:18px}
.heatmap{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;overflow:auto;max-width:100%}
.heatmap .sub{color:#57606a;font-size:12px}
svg.hm rect.cell{stroke:#fff;stroke-width:1}.s6 rect.cell{stroke-width:.5}
.s6 rect.cell-fail,.s10 rect.cell-fail{stroke:#1b1f23;stroke-width:1.5}
svg.hm text.ax.flag{font-weight:700}
svg.hm text.v{pointer-events:none}
svg.hm text.v.f{font-weight:700;paint-order:stroke;stroke:#fff;stroke-width:3px}
.legend{display:flex;flex-wrap:wrap;gap:14px;align-items:center;font-size:12px;margin:4px 0 8px}
.legend svg{vertical-align:middle;margin-right:4px}
.spark polyline{fill:none;stroke:#0969da;stroke-width:1.5}.spark line{stroke:#8c959f;stroke-dasharray:3 2}
.spark circle.ok{fill:#1a7f37}.spark circle.bad{fill:#cf222e}
.muted{color:#57606a}
td.hr{text-align:right;font-variant-numeric:tabular-nums}td.hr.cf{background:#ffebe9;font-weight:700}
td.hr.c0{background:#dafbe1}
footer{margin-top:24px;color:#57606a;font-size:12px}
"""

# Patterns: failing cells are hatched, unmeasured ones crossed, regressions dotted (not colour alone).
DEFS = (
    '<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
    '<pattern id="p-fail" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    '<rect width="6" height="6" fill="#cf222e"/><rect width="2" height="6" fill="#fff"/></pattern>'
    '<pattern id="p-none" width="6" height="6" patternUnits="userSpaceOnUse">'
    '<rect width="6" height="6" fill="#6e7781"/><path d="M0 0L6 6M6 0L0 6" stroke="#fff" stroke-width="1.2"/>'
    "</pattern>"
    '<pattern id="p-reg" width="5" height="5" patternUnits="userSpaceOnUse">'
    '<rect width="5" height="5" fill="#d4a72c"/><circle cx="2.5" cy="2.5" r="1.2" fill="#1b1f23"/></pattern>'
    "</defs></svg>"
)


def _e(value):
    return html.escape("" if value is None else str(value), quote=True)


def _num(value, digits=1):
    return "-" if value is None else ("%.*f" % (digits, value))


def rail_of(res):
    """The rail a result belongs to: its `rail` when given, else its server device (mlx5_3)."""
    rail = res.get("rail")
    if rail is None or rail == "":
        rail = res.get("server_device") or res.get("client_device") or "-"
    return str(rail)


def kind_of(res):
    kind = res.get("kind")
    if kind:
        return str(kind)
    return "latency" if res.get("t_typical_us") is not None else "bandwidth"


def _ordered_hosts(report, seen):
    """host_order first (leaf order, when the topology is known), then every other host sorted."""
    order = [h for h in (report.get("host_order") or []) if h in seen]
    placed = set(order)
    return order + sorted(h for h in seen if h not in placed)


# ---------------------------------------------------------------------------------------------
# Cells


def _latency_goodness(value, gate):
    """How far a latency is within its gate (>= 1: it met it); None without a figure or a gate."""
    return (gate / value) if value and gate else None


def _bandwidth_goodness(value, gate):
    """How far a bandwidth is above its gate (>= 1: it met it); None without a figure or a gate."""
    return (value / gate) if value is not None and gate else None


def _cell_value(res, kind):
    """(value, gate, goodness) of one result; goodness >= 1 means it met its gate."""
    if kind == "latency":
        value, gate = res.get("t_typical_us"), res.get("threshold_us")
        return value, gate, _latency_goodness(value, gate)
    value, gate = res.get("bw_avg_gbps"), res.get("threshold_gbps")
    return value, gate, _bandwidth_goodness(value, gate)


def _result_line(res, kind):
    value, gate, _good = _cell_value(res, kind)
    unit = "us" if kind == "latency" else "Gb/s"
    if kind == "latency":
        figures = "%s us typical (gate <= %s us)" % (_num(value, 2), _num(gate, 2))
        if res.get("p99_us") is not None:
            figures += ", p99 %s us" % _num(res["p99_us"], 2)
    else:
        figures = "%s %s (gate >= %s)" % (_num(value), unit, _num(gate))
        if res.get("baseline_gbps") is not None:
            figures += ", baseline %s" % _num(res["baseline_gbps"])
    state = "PASS" if res.get("passed") else "FAIL"
    if res.get("passed") and res.get("regressed"):
        state = "REGRESSED"
    line = "pass %s round %s: %s %s" % (res.get("pass", 1), res.get("round", 0), state, figures)
    if not res.get("passed") and res.get("failure"):
        line += ": %s" % res["failure"]
    return line


def _short_figures(res, kind):
    value, gate, _good = _cell_value(res, kind)
    if kind == "latency":
        return "%s us (gate %s us)" % (_num(value, 2), _num(gate, 2))
    text = "%s Gb/s (gate %s" % (_num(value), _num(gate))
    if res.get("baseline_gbps") is not None:
        text += ", baseline %s" % _num(res["baseline_gbps"])
    return text + ")"


def _cells(results):
    """{(kind, test, rail): {(server, client): [results]}} in input order."""
    groups = {}
    for res in results:
        kind = kind_of(res)
        key = (kind, str(res.get("test") or ""), rail_of(res))
        groups.setdefault(key, {}).setdefault((res["server"], res["client"]), []).append(res)
    return groups


def _flagged_hosts(report):
    """{host: why} for hosts named by the verdict (failed hosts, suspect nodes, counter violations)."""
    out = {}
    for item in report.get("failed_hosts") or []:
        out.setdefault(item.get("host"), item.get("reason") or item.get("failure_kind") or "failed")
    for node in report.get("suspect_nodes") or []:
        out.setdefault(node["host"], "%s node" % ("bad" if node.get("verdict") == "bad_node" else "suspect"))
    for v in report.get("counter_violations") or []:
        text = "counter %s on %s port %s +%s" % (v.get("counter"), v.get("device"), v.get("port"), v.get("delta"))
        out.setdefault(v["host"], text)
    return out


def _cell_size(count):
    if count <= 12:
        return 46
    if count <= 40:
        return 18
    if count <= 128:
        return 10
    return 6


def _axis_big(hosts, index, grid, flagged, esc):
    """Every host labelled on both axes (cells of 10 px and more)."""
    size, left, top = grid
    font = 10 if size >= 18 else size - 1
    out = []
    for h in hosts:
        i = index[h]
        y = top + i * size + size / 2.0
        x = left + i * size + size / 2.0
        cls = "ax flag" if h in flagged else "ax"
        fs = ' font-size="%d" fill="%s"' % (font, "#cf222e" if h in flagged else "#24292f")
        name = ("\u26a0 " + esc[h]) if h in flagged else esc[h]
        tip = "<title>%s</title>" % _e(flagged[h]) if h in flagged else ""
        out.append('<text class="%s" x="%d" y="%.1f" text-anchor="end" dominant-baseline="central"%s>%s%s</text>'
                   % (cls, left - 4, y, fs, tip, name))  # fmt: skip
        out.append(
            '<text class="%s" transform="translate(%.1f %d) rotate(-90)" dominant-baseline="central"%s>%s%s</text>'
            % (cls, x, top - 4, fs, tip, name)
        )
    return out


def _axis_small(hosts, index, grid, flagged, esc):
    """Too many hosts to label every row: every 16th and the flagged ones; names stay in the hover titles."""
    size, left, top = grid
    out = []
    for h in [x for i, x in enumerate(hosts) if i % 16 == 0 or x in flagged]:
        i = index[h]
        cls = "ax flag" if h in flagged else "ax"
        fs = 'font-size="6" fill="%s"' % ("#cf222e" if h in flagged else "#24292f")
        out.append('<text class="%s" x="%d" y="%d" text-anchor="end" %s>%s</text>'
                   % (cls, left - 2, top + i * size + size, fs, esc[h]))  # fmt: skip
        out.append('<text class="%s" transform="translate(%d %d) rotate(-90)" %s>%s</text>'
                   % (cls, left + i * size + size, top - 2, fs, esc[h]))  # fmt: skip
    return out


def _cell_state(runs, kind):
    """(fill class, worst value, passed) of one cell's results."""
    passed = all(r.get("passed") for r in runs)
    regressed = any(r.get("regressed") for r in runs)
    goods = [_cell_value(r, kind) for r in runs]
    value, _gate, good = min(goods, key=lambda g: (g[2] is not None, g[2] if g[2] is not None else 0))
    if not passed:
        return ("cf" if value is not None else "cn"), value, passed
    if regressed:
        return "cr", value, passed
    if good is None or good >= BW_BUCKETS[0]:
        return "c0", value, passed
    return ("c1" if good >= BW_BUCKETS[1] else "c2"), value, passed


def _cell_title(server, client, rail, kind, test, runs, cls):
    if cls in ("c0", "c1", "c2") and len(runs) == 1:
        # the common case, kept short (most of a big page): figures only
        return "%s -> %s %s: %s" % (server, client, rail, _short_figures(runs[0], kind))
    lines = "\n".join(_result_line(r, kind) for r in runs)
    return "%s -> %s, rail %s %s %s\n%s" % (server, client, rail, kind, test, lines)


def _cell_svg(grid, x, server, client, runs, labels):
    """The rect (and, on big cells, the figure) of one (server, client) cell; returns (svg parts, failed 0/1)."""
    size = grid[0]
    kind, test, rail, erail, ekind, etest, esc = labels
    cls, value, passed = _cell_state(runs, kind)
    geometry = 'width="%d" height="%d"' % (size, size)
    if passed:
        attrs = '%s fill="%s" class="cell %s" data-client="%s" data-passed="true"' % (
            geometry, FILL[cls], cls, esc[client]
        )  # fmt: skip
    else:
        outline = ' stroke="#1b1f23" stroke-width="1.5"' if size < 18 else ""
        attrs = (
            '%s fill="%s"%s class="cell %s cell-fail" data-server="%s" data-client="%s" data-rail="%s" '
            'data-kind="%s" data-test="%s" data-passed="false"'
            % (geometry, FILL[cls], outline, cls, esc[server], esc[client], erail, ekind, etest)
        )
    title = _cell_title(server, client, rail, kind, test, runs, cls)
    out = ['<rect x="%d" %s><title>%s</title></rect>' % (x, attrs, _e(title))]
    if size >= 40:
        out.append(_cell_figure(x, size, value, kind, passed, cls))
    return out, 0 if passed else 1


def _cell_figure(x, size, value, kind, passed, cls):
    label = "-" if value is None else ("%.1f" % value if kind == "latency" else "%.0f" % value)
    glyph = "" if passed else "\u2715"
    tcls = "v f" if not passed else ("v k" if cls in ("c2", "cr") else "v")
    colour = "#fff" if tcls == "v" else "#1b1f23"
    return ('<text class="%s" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central" '
            'font-size="%d" fill="%s">%s%s</text>'
            % (tcls, x + size / 2.0, size / 2.0, 10 if glyph else 12, colour, glyph, _e(label)))  # fmt: skip


def _heatmap_rows(hosts, index, grid, cells, labels):
    """The cell rows, one g per server; returns (svg parts, failing cells)."""
    size, left, top = grid
    rows = {}
    for (server, client), runs in cells.items():
        rows.setdefault(server, []).append((client, runs))
    esc = labels[-1]
    body, failed = [], 0
    for server in hosts:
        if server not in rows:
            continue
        body.append('<g data-server="%s" transform="translate(0 %d)">' % (esc[server], top + index[server] * size))
        for client, runs in sorted(rows[server], key=lambda item: index[item[0]]):
            parts, fail = _cell_svg(grid, left + index[client] * size, server, client, runs, labels)
            body.extend(parts)
            failed += fail
        body.append("</g>")
    return body, failed


def _heatmap(report, kind, test, rail, cells):
    seen = set(h for pair in cells for h in pair)
    hosts = _ordered_hosts(report, seen)
    index = dict((h, i) for i, h in enumerate(hosts))
    size = _cell_size(len(hosts))
    label_w = 20 + 7 * max(len(h) for h in hosts) if size >= 10 else 6 + 4 * max(len(h) for h in hosts)
    grid = (size, label_w, label_w)
    width = height = label_w + size * len(hosts) + 4
    esc = dict((h, _e(h)) for h in hosts)
    flagged = _flagged_hosts(report)
    labels = (kind, test, rail, _e(rail), _e(kind), _e(test), esc)
    axis = _axis_big if size >= 10 else _axis_small
    body = axis(hosts, index, grid, flagged, esc)
    rows, failed = _heatmap_rows(hosts, index, grid, cells, labels)
    erail, ekind, etest = labels[3:6]
    out = [
        '<section class="heatmap" data-rail="%s" data-kind="%s" data-test="%s">'
        "<h3>rail %s &middot; %s &middot; %s</h3>" % (erail, ekind, etest, erail, ekind, etest),
        '<p class="sub">%d hosts, %d measured pairs, %d failing (rows: server, columns: client; %s)</p>'
        % (len(hosts), len(cells), failed, "us" if kind == "latency" else "Gb/s"),
        '<svg class="hm s%d" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
        'aria-label="rail %s %s %s: %d failing">' % (size, width, height, width, height, erail, ekind, etest, failed),
    ]
    out.extend(body)
    out.extend(rows)
    out.append("</svg></section>")
    return "".join(out), failed


def _legend():
    items = (
        ("c0", "&ge; 110% of the gate"),
        ("c1", "&ge; 105%"),
        ("c2", "&ge; 100% (met, little margin)"),
        ("cr", "met the gate, regressed against the baseline (dotted)"),
        ("cf", "failed the gate (hatched, \u2715)"),
        ("cn", "failed, nothing measured (crossed)"),
    )
    parts = ['<div class="legend">']
    for cls, text in items:
        parts.append(
            '<span><svg width="14" height="14"><rect fill="%s" width="14" height="14" stroke="#8c959f"/></svg>'
            "%s</span>" % (FILL[cls], text)
        )
    parts.append("</div>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Sections


def _verdict(report):
    passed = bool(report.get("passed"))
    headline = report.get("headline") or ("PASSED" if passed else "FAILED")
    out = [
        '<div id="verdict" class="%s" data-passed="%s"><span class="mark" aria-hidden="true">%s</span> %s</div>'
        % ("pass" if passed else "fail", "true" if passed else "false", "\u2714" if passed else "\u2716", _e(headline))
    ]
    if report.get("message"):
        out.append('<p id="message">%s</p>' % _e(report["message"]))
    if report.get("systemic"):
        out.append('<p id="systemic"><span class="tag bad">systemic</span> %s</p>' % _e(report["systemic"]))
    return "".join(out)


def _verdict_tag(verdict):
    bad = verdict in ("bad_node", "bad_link", "bad_cable", "bad")
    return '<span class="tag %s">%s</span> ' % ("bad" if bad else "suspect", "bad" if bad else "suspect")


def _node_details(node):
    details = []
    if node.get("devices"):
        details.append("on %s" % ", ".join(node["devices"]))
    if node.get("failed_with"):
        names = node["failed_with"]
        more = " and %d more" % (len(names) - 8) if len(names) > 8 else ""
        details.append("failed with %s%s" % (", ".join(names[:8]), more))
    failed = [r for r in node.get("retest") or [] if not r.get("passed")]
    if failed:
        r = failed[0]
        details.append(
            "failed again with known-good %s (%s < %s Gb/s)"
            % (r.get("partner"), _num(r.get("bw_avg_gbps")), _num(r.get("threshold_gbps")))
        )
    return details


def _node_item(node):
    details = _node_details(node)
    return '<li data-kind="node" data-subject="%s">%snode <b>%s</b>%s</li>' % (
        _e(node["host"]),
        _verdict_tag(node.get("verdict")),
        _e(node["host"]),
        (" &mdash; " + _e("; ".join(details))) if details else "",
    )


def _link_item(link):
    figures = link.get("failure") or ""
    if link.get("bw_avg_gbps") is not None and link.get("threshold_gbps") is not None:
        figures = "%s Gb/s < %s Gb/s" % (_num(link["bw_avg_gbps"]), _num(link["threshold_gbps"]))
    return '<li data-kind="link" data-subject="%s">%slink <b>%s</b> &mdash; %s</li>' % (
        _e(link["link"]), _verdict_tag(link.get("verdict")), _e(link["link"]), _e(figures)
    )  # fmt: skip


def _cable_item(cable):
    subject = "%s<->%s" % (cable.get("a"), cable.get("b"))
    return '<li data-kind="cable" data-subject="%s">%scable <b>%s</b> &harr; <b>%s</b>%s</li>' % (
        _e(subject),
        _verdict_tag(cable.get("verdict")),
        _e(cable.get("a")),
        _e(cable.get("b")),
        (" &mdash; " + _e(cable["reason"])) if cable.get("reason") else "",
    )


def _switch_item(fault):
    subject = "+".join(fault.get("switches") or []) or "above %s" % ",".join((fault.get("hosts") or [])[:8])
    return '<li data-kind="switch" data-subject="%s" data-scope="%s">%sswitch <b>%s</b> &mdash; %s</li>' % (
        _e(subject), _e(fault.get("scope")), _verdict_tag("bad"), _e(subject), _e(fault.get("text"))
    )  # fmt: skip


def _suspects(report):
    items = [_switch_item(f) for f in report.get("switch_faults") or []]
    items += [_node_item(n) for n in report.get("suspect_nodes") or []]
    items += [_link_item(x) for x in report.get("suspect_links") or []]
    items += [_cable_item(c) for c in report.get("suspect_cables") or []]
    if not items:
        return '<h2>Suspects</h2><ul id="suspects"></ul><p class="muted">No suspect node, link, cable or switch.</p>'
    return '<h2>Suspects</h2><ul id="suspects">%s</ul>' % "".join(items)


def _hosts(report):
    out = []
    expected = report.get("expected_hosts")
    passed = report.get("passed_hosts")
    failed = report.get("failed_hosts") or []
    if expected is not None:
        out.append(
            '<p class="meta">%d expected hosts: %s passed, %d failed.</p>'
            % (len(expected), "-" if passed is None else len(passed), len(failed))
        )
    if failed:
        out.append('<h2>Failed hosts</h2><ul id="failed-hosts">')
        for item in failed:
            out.append(
                '<li data-host="%s" data-kind="%s"><b>%s</b> <span class="tag">%s</span> %s</li>'
                % (
                    _e(item.get("host")),
                    _e(item.get("failure_kind")),
                    _e(item.get("host")),
                    _e(item.get("failure_kind") or "failed"),
                    _e(item.get("reason")),
                )
            )
        out.append("</ul>")
    return "".join(out)


def _isl_traffic(report):
    out = []
    findings = report.get("topology_findings") or []
    if findings:
        out.append('<h2>Fabric checks</h2><ul id="topology-findings">')
        for f in findings:
            out.append("<li><b>%s</b> %s</li>" % (_e(f.get("severity")), _e(f.get("msg"))))
        out.append("</ul>")
    traffic = report.get("isl_traffic")
    if traffic:
        out.append('<p id="isl-traffic">%s</p>' % _e(traffic.get("text")))
    return "".join(out)


def _counters(report):
    host_side = report.get("counter_violations") or []
    switch_side = report.get("switch_counter_violations") or []
    saturated = report.get("saturated") or []
    if not host_side and not switch_side and not saturated:
        return '<h2>Counters</h2><p class="muted">No error counter increased during the validation.</p>'
    out = ["<h2>Counters</h2>"]
    if host_side or switch_side:
        out.append(
            '<table id="counters"><thead><tr class="head"><th>side</th><th>where</th><th>port</th><th>peer</th>'
            "<th>counter</th><th>category</th><th>delta</th><th>allowed</th></tr></thead><tbody>"
        )
        for v in host_side:
            where = "%s %s" % (v.get("host"), v.get("device") or "")
            out.append(_counter_row("host", where.strip(), v))
        for v in switch_side:
            out.append(_counter_row("switch", v.get("switch"), v))
        out.append("</tbody></table>")
    if saturated:
        out.append('<p>Saturated counters (stuck at their maximum, they cannot show new errors; clear them with '
                   'perfquery -R):</p><ul id="saturated">')  # fmt: skip
        for s in saturated:
            out.append(
                "<li>%s %s port %s %s = %s</li>"
                % tuple(_e(s.get(k)) for k in ("host", "device", "port", "counter", "value"))
            )
        out.append("</ul>")
    return "".join(out)


def _counter_row(side, where, v):
    return (
        '<tr data-side="%s"><td>%s</td><td>%s</td><td class="n">%s</td><td>%s</td><td>%s</td><td>%s</td>'
        '<td class="n">+%s</td><td class="n">%s</td></tr>'
        % (
            side,
            side,
            _e(where),
            _e(v.get("port")),
            _e(v.get("peer") or ""),
            _e(v.get("counter")),
            _e(v.get("category")),
            _e(v.get("delta")),
            _e(v.get("allowed")),
        )
    )


def _failed_pairs(report):
    rows = report.get("failed_pairs") or []
    if not rows:
        return ""
    out = [
        '<h2>Failed pairs</h2><table id="failed-pairs"><thead><tr><th>pass</th><th>server</th><th>client</th>'
        "<th>rail</th><th>test</th><th>measured</th><th>gate</th><th>failure</th></tr></thead><tbody>"
    ]
    for res in rows[:MAX_FAILED_ROWS]:
        kind = kind_of(res)
        value, gate, _good = _cell_value(res, kind)
        unit = " us" if kind == "latency" else ""
        out.append(
            '<tr><td class="n">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n">%s</td>'
            '<td class="n">%s</td><td>%s</td></tr>'
            % (
                _e(res.get("pass", 1)),
                _e("%s/%s" % (res["server"], res.get("server_device") or "")),
                _e("%s/%s" % (res["client"], res.get("client_device") or "")),
                _e(rail_of(res)),
                _e("%s %s" % (kind, res.get("test") or "")),
                _e(_num(value, 2 if unit else 1) + unit),
                _e(_num(gate, 2 if unit else 1) + unit),
                _e(res.get("failure")),
            )
        )
    out.append("</tbody></table>")
    if len(rows) > MAX_FAILED_ROWS:
        out.append('<p class="muted">and %d more failed pairs (see report.json).</p>' % (len(rows) - MAX_FAILED_ROWS))
    return "".join(out)


def _sparkline(points, current, median, bad):
    """A 140x28 inline SVG: history polyline, median dashed, this run as the last dot."""
    values = list(points) + ([current] if current is not None else [])
    lo, hi = min(values), max(values)
    if median is not None:
        lo, hi = min(lo, median), max(hi, median)
    # at least 10% of the median tall, so run-to-run jitter of a healthy link draws flat
    floor = 0.1 * (median if median else hi)
    if hi - lo < floor:
        mid = (hi + lo) / 2.0
        lo, hi = mid - floor / 2.0, mid + floor / 2.0
    span = (hi - lo) or 1.0
    w, h, pad = 140.0, 28.0, 3.0
    n = len(values)

    def xy(i, v):
        x = pad + (w - 2 * pad) * (i / float(n - 1) if n > 1 else 0.5)
        return x, h - pad - (h - 2 * pad) * (v - lo) / span

    poly = " ".join("%.1f,%.1f" % xy(i, v) for i, v in enumerate(values))
    out = ['<svg class="spark" width="140" height="28" viewBox="0 0 140 28">']
    if median is not None:
        _x, my = xy(0, median)
        out.append('<line x1="0" x2="140" y1="%.1f" y2="%.1f"/>' % (my, my))
    out.append('<polyline points="%s"/>' % poly)
    if current is not None:
        cx, cy = xy(n - 1, current)
        out.append('<circle class="%s" cx="%.1f" cy="%.1f" r="3"/>' % ("bad" if bad else "ok", cx, cy))
    out.append("</svg>")
    return "".join(out)


def _trends(report, history):
    if not history or not history.get("links"):
        return ""
    links = history["links"]
    results = report.get("results") or []
    kinds, typical, passes, result_links, tests = columns_of(results, "kind", "t_typical_us", "pass", "link", "test")
    measured = {}
    for index in sorted(range(len(passes)), key=lambda i: 1 if passes[i] is None else passes[i], reverse=True):
        kind = kinds[index]
        if (str(kind) if kind else ("latency" if typical[index] is not None else "bandwidth")) != "bandwidth":
            continue  # kind_of
        measured[(result_links[index], str(tests[index] or "write"))] = index  # the first pass wins
    row = row_reader(results)
    rows = []
    for (link, test), index in measured.items():
        entry = links.get(link)
        points = [p["gbps"] for p in (entry or {}).get("history", []) if p.get("test", "write") == test]
        if not points:
            continue
        res = row(index)
        median = res.get("baseline_gbps")
        bw = res.get("bw_avg_gbps")
        bad = bool(res.get("regressed")) or not res.get("passed")
        drop = (1.0 - bw / median) if (bw is not None and median) else 0.0
        rows.append((not bad, -drop, link, test, points, bw, median, bad))
    if not rows:
        return ""
    rows.sort()
    out = [
        "<h2>Trend against the baseline</h2>"
        '<p class="muted">Per link: the recorded history (oldest left), the baseline median (dashed) and this run '
        "(the last dot, red when it failed or regressed).</p>"
        '<table id="trends"><thead><tr><th>link</th><th>test</th><th>history</th><th>median</th><th>now</th>'
        "</tr></thead><tbody>"
    ]
    for _ok, _drop, link, test, points, bw, median, bad in rows[:MAX_TRENDS]:
        title = "%s %s: history %s Gb/s; median %s; now %s" % (
            link,
            test,
            ", ".join("%.1f" % p for p in points),
            _num(median),
            _num(bw),
        )
        out.append(
            '<tr data-link="%s"%s><td>%s</td><td>%s</td><td title="%s">%s</td><td class="n">%s</td><td class="n">%s'
            "%s</td></tr>"
            % (
                _e(link),
                ' class="bad"' if bad else "",
                _e(link),
                _e(test),
                _e(title),
                _sparkline(points, bw, median, bad),
                _num(median),
                _num(bw),
                " \u2716" if bad else "",
            )
        )
    out.append("</tbody></table>")
    if len(rows) > MAX_TRENDS:
        out.append(
            '<p class="muted">%d more links with a history are not drawn (the worst come first; see the baseline '
            "file).</p>" % (len(rows) - MAX_TRENDS)
        )
    return "".join(out)


def to_html(report, history=None, host_rails=None):
    """The whole report.html as one string (UTF-8 text, self-contained); host_rails: aggregate.by_host_rail of the
    report's results when the caller already has it."""
    results = report.get("results") or []
    totals = report.get("totals") or {}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        "<title>Fabric validation %s: %s</title>"
        % (_e(report.get("run_id")), "PASSED" if report.get("passed") else "FAILED"),
        "<style>%s</style></head><body>" % CSS,
        DEFS,
        "<h1>Fabric validation</h1>",
        '<p class="meta">Run <code>%s</code> at %s &middot; %s pair results on %s hosts &middot; %s rounds</p>'
        % (
            _e(report.get("run_id")),
            _e(report.get("timestamp")),
            _e(totals.get("results", len(results))),
            _e(totals.get("hosts", "-")),
            _e(totals.get("rounds", "-")),
        ),
        _verdict(report),
        _suspects(report),
        _hosts(report),
    ]
    parts.append(_host_rails(report, host_rails))
    view = report
    parts.append("<h2>Pair results per rail</h2>")
    if not _aggregate.aggregated(report):
        groups = _cells(results)
    else:
        group_of, labels = _host_groups(report, results)
        groups = _grouped_cells(results, group_of)
        view = dict(report, host_order=labels, failed_hosts=[], suspect_nodes=[], counter_violations=[])
        parts.append('<p class="meta">%d pair results: each cell is a group of up to %d consecutive hosts (leaf order) '
                     "and shows its worst pair; failed pairs are listed below and in report.json.</p>"
                     % (len(results), -(-len(group_of) // MAX_AXIS)))  # fmt: skip
    if groups:
        parts.append(_legend())
        parts.append('<div class="grid">')
        for key in sorted(groups, key=lambda k: (k[0], k[1], _rail_sort(k[2]))):
            text, _failed = _heatmap(view, key[0], key[1], key[2], groups[key])
            parts.append(text)
        parts.append("</div>")
    else:
        parts.append('<p class="muted">No pair was measured.</p>')
    parts.append(_counters(report))
    parts.append(_isl_traffic(report))
    parts.append(_phy.html_section(report, _e))
    parts.append(_failed_pairs(report))
    parts.append(_trends(report, history))
    parts.append(
        "<footer>Written by ibtune.fabric fabric_report from the same data as report.json. Hover a cell for its "
        "figures.</footer></body></html>\n"
    )
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# At scale (aggregate.AGGREGATE_ABOVE pair results): the host x rail summary, heatmaps over host groups

MAX_AXIS = 64  # heatmap rows/columns above the aggregate size: consecutive hosts (leaf order) grouped into as many
GROUP_TITLE_FAILURES = 3  # failing pairs a group cell's hover names


def _host_rail_cell(entry):
    unit = "us" if entry["kind"] == "latency" else "Gb/s"
    worst = "-" if entry["worst"] is None else _num(entry["worst"])
    title = "%s %s %s: %d of %d pairs failed, worst %s %s" % (
        entry["host"], entry["device"], entry["test"], entry["failed"], entry["pairs"], worst, unit
    )  # fmt: skip
    cls = "cf" if entry["failed"] else "c0"
    return '<td class="hr %s" data-host="%s" data-device="%s" data-failed="%d" title="%s">%d/%d</td>' % (
        cls, _e(entry["host"]), _e(entry["device"]), entry["failed"], _e(title), entry["failed"], entry["pairs"]
    )  # fmt: skip


def _host_rails(report, host_rails=None):
    """Hosts by rail first: one row per host with a failed pair on some rail (most failures first), a cell per
    rail (failed/pairs), and the count of hosts that passed every pair on every rail."""
    entries = _aggregate.by_host_rail(report.get("results") or []) if host_rails is None else host_rails
    if not entries:
        return ""
    devices = sorted(set(str(e["device"]) for e in entries), key=_rail_sort)
    by_host = {}
    for entry in entries:
        by_host.setdefault(entry["host"], {})[str(entry["device"])] = entry
    failing = sorted((h for h, d in by_host.items() if any(e["failed"] for e in d.values())),
                     key=lambda h: (-sum(e["failed"] for e in by_host[h].values()), h))  # fmt: skip
    out = ['<h2>Hosts by rail</h2><p class="meta">%d of %d hosts passed every pair on every rail.</p>'
           % (len(by_host) - len(failing), len(by_host))]  # fmt: skip
    if failing:
        out.append('<table id="host-rails"><thead><tr><th>host</th>%s</tr></thead><tbody>'
                   % "".join("<th>%s</th>" % _e(d) for d in devices))  # fmt: skip
        for host in failing[:MAX_FAILED_ROWS]:
            cells = [_host_rail_cell(by_host[host][d]) if d in by_host[host] else "<td>-</td>" for d in devices]
            out.append('<tr data-host="%s"><td>%s</td>%s</tr>' % (_e(host), _e(host), "".join(cells)))
        out.append("</tbody></table>")
        if len(failing) > MAX_FAILED_ROWS:
            out.append('<p class="muted">and %d more hosts with failed pairs (see report.json).</p>'
                       % (len(failing) - MAX_FAILED_ROWS))  # fmt: skip
    return "".join(out)


def _host_groups(report, results):
    """{host: group label} of consecutive hosts in the heatmaps' order, at most MAX_AXIS groups, and the labels."""
    servers, clients = columns_of(results, "server", "client")
    hosts = _ordered_hosts(report, set(servers) | set(clients))
    size = -(-len(hosts) // MAX_AXIS)
    labels, group_of = [], {}
    for start in range(0, len(hosts), size):
        block = hosts[start : start + size]
        label = block[0] if len(block) == 1 else "%s..%s" % (block[0], block[-1])
        labels.append(label)
        group_of.update((h, label) for h in block)
    return group_of, labels


def _grouped_cells(results, group_of):
    """The heatmaps' cells over host groups: per (kind, test, rail) and (server group, client group), the failing
    results (the first few in the results' order, so the cell fails and its hover names them) or else the worst
    passing one (the first of equals). One pass over the results' columns (a ResultTable's: only the results a
    cell shows are made dicts), with no cell per host pair in between: at 1024 hosts x 8 rails those were 4.2 M
    lists. Where one kind and test hold for every result and each rail is a string (a pass's results), a rail names
    its heatmap: _grouped_cells_of_rails reads fewer columns a result; otherwise each result's heatmap is worked
    out from its kind, test and rail (_grouped_cells_any)."""
    kinds, tests, rails, passed = columns_of(results, "kind", "test", "rail", "passed")
    count = len(passed)
    kind = _one_kind(kinds, results, count)
    # a string is equal only to a string (None only to None): one str() of it holds for all
    one_test = count and (tests[0] is None or tests[0].__class__ is str) and tests.count(tests[0]) == count
    if kind is None or not one_test or set(map(type, rails)) != {str} or "" in rails:
        return _grouped_cells_any(results, group_of, kinds, tests, rails, passed)
    figure, gate = ("t_typical_us", "threshold_us") if kind == "latency" else ("bw_avg_gbps", "threshold_gbps")
    servers, clients, figures, gates = columns_of(results, "server", "client", figure, gate)
    return _grouped_cells_of_rails(
        row_reader(results), group_of, (kind, str(tests[0] or "")), rails, servers, clients, passed, figures, gates
    )


def _one_kind(kinds, results, count):
    """The kind (kind_of) every result has, or None where they differ or there are none."""
    if not count or not (kinds[0] is None or kinds[0].__class__ is str) or kinds.count(kinds[0]) != count:
        return None
    if kinds[0]:
        return str(kinds[0])
    nulls = columns_of(results, "t_typical_us")[0].count(None)
    return "bandwidth" if nulls == count else ("latency" if not nulls else None)


def _grouped_cells_of_rails(row, group_of, plane, rails, servers, clients, passed, figures, gates):
    """_grouped_cells of results of one kind and test (``plane``: the two), each rail a non-empty string; a cell
    is [failing results, worst goodness, its index] while the results are read."""
    latency = plane[0] == "latency"
    inf = float("inf")
    merged, by_rail = {}, {}
    rows = zip(rails, passed, figures, gates, map(group_of.__getitem__, servers), map(group_of.__getitem__, clients))
    for index, (rail, ok, figure, gate, sgroup, cgroup) in enumerate(rows):
        cells = by_rail.get(rail)
        if cells is None:
            cells = by_rail[rail] = merged[plane + (rail,)] = {}
        cell = cells.get((sgroup, cgroup))
        if cell is None:
            cell = cells[(sgroup, cgroup)] = [[], None, None]
        if not ok:
            if len(cell[0]) < GROUP_TITLE_FAILURES:
                cell[0].append(row(index))
            continue
        # _latency_goodness and _bandwidth_goodness inline (no call per result: 4.2 M at 1024 hosts x 8 rails; the
        # spec test in test_aggregate.py holds it to them); none counts as the best
        if latency:
            good = (gate / figure) if figure and gate else inf
        else:
            good = (figure / gate) if figure is not None and gate else inf
        if cell[1] is None or good < cell[1]:
            cell[1], cell[2] = good, index
    return dict((key, dict((pair, c[0] or [row(c[2])]) for pair, c in cells.items())) for key, cells in merged.items())


def _grouped_cells_any(results, group_of, kinds, tests, rails, passed):
    """_grouped_cells of any results: each one's kind, test and rail worked out as kind_of and rail_of do."""
    server_devices, client_devices, servers, clients, typical, bws, limits_us, limits_gbps = columns_of(
        results, "server_device", "client_device", "server", "client", "t_typical_us", "bw_avg_gbps", "threshold_us",
        "threshold_gbps",
    )  # fmt: skip
    row = row_reader(results)
    merged = {}
    rows = zip(kinds, tests, rails, server_devices, client_devices, servers, clients, passed, typical, bws)
    for index, (kind, test, rail, sdev, cdev, server, client, ok, lat, bw) in enumerate(rows):
        kind = str(kind) if kind else ("latency" if lat is not None else "bandwidth")  # kind_of
        if rail is None or rail == "":  # rail_of
            rail = sdev or cdev or "-"
        key = (kind, str(test or ""), str(rail))
        cells = merged.get(key)
        if cells is None:
            cells = merged[key] = {}
        pair = (group_of[server], group_of[client])
        cell = cells.get(pair)
        if cell is None:
            cell = cells[pair] = {"failing": [], "worst": None}
        if not ok:
            if len(cell["failing"]) < GROUP_TITLE_FAILURES:
                cell["failing"].append(row(index))
            continue
        if kind == "latency":
            good = _latency_goodness(lat, limits_us[index])
        else:
            good = _bandwidth_goodness(bw, limits_gbps[index])
        if cell["worst"] is None or (good is not None and good < cell["worst"][0]):
            cell["worst"] = (good if good is not None else float("inf"), index)
    return dict(
        (key, dict((pair, c["failing"] or [row(c["worst"][1])]) for pair, c in cells.items()))
        for key, cells in merged.items()
    )


def _rail_sort(rail):
    digits = "".join(ch for ch in rail if ch.isdigit())
    return (int(digits) if digits else -1, rail)
