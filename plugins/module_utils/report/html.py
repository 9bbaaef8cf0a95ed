# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: the fabric validation report as one self-contained page, from the report dict.

Pure and stdlib only (no Ansible imports). `to_html(report, history=None)` takes the same dict as
report.json (build_report) and, optionally, the baseline dict (load_baseline) for the per-link trends.
Inline CSS and inline SVG only: no script, font, image or stylesheet is fetched, so the file opens
on an air-gapped bastion. Hover titles are SVG/HTML `title`s (no JavaScript).

Stable hooks for tests and tools:
  #verdict (data-passed), #message, #systemic, #suspects li (data-subject, data-kind),
  .heatmap (data-rail, data-kind, data-test), one rect.cell per measured (server, client) with
  data-client and data-passed, its row g with data-server; failing cells have class cell-fail and
  repeat data-server/data-rail/data-kind/data-test; #failed-hosts li (data-host, data-kind),
  #counters tbody tr (data-side host|switch), #trends tr (data-link).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html

from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as _phy

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


def _cell_value(res, kind):
    """(value, gate, goodness) of one result; goodness >= 1 means it met its gate."""
    if kind == "latency":
        value, gate = res.get("t_typical_us"), res.get("threshold_us")
        good = (gate / value) if value and gate else None
    else:
        value, gate = res.get("bw_avg_gbps"), res.get("threshold_gbps")
        good = (value / gate) if value is not None and gate else None
    return value, gate, good


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


def _heatmap(report, kind, test, rail, cells):
    seen = set()
    for server, client in cells:
        seen.add(server)
        seen.add(client)
    hosts = _ordered_hosts(report, seen)
    index = dict((h, i) for i, h in enumerate(hosts))
    size = _cell_size(len(hosts))
    label_w = 20 + 7 * max(len(h) for h in hosts) if size >= 10 else 6 + 4 * max(len(h) for h in hosts)
    left, top = label_w, label_w
    width = left + size * len(hosts) + 4
    height = top + size * len(hosts) + 4
    esc = dict((h, _e(h)) for h in hosts)
    flagged = _flagged_hosts(report)
    erail, ekind, etest = _e(rail), _e(kind), _e(test)
    failed = 0
    out = []
    out.append(
        '<section class="heatmap" data-rail="%s" data-kind="%s" data-test="%s">'
        "<h3>rail %s &middot; %s &middot; %s</h3>" % (erail, ekind, etest, erail, ekind, etest)
    )
    body = []
    if size >= 10:
        font = 10 if size >= 18 else size - 1
        for h in hosts:
            i = index[h]
            y = top + i * size + size / 2.0
            x = left + i * size + size / 2.0
            cls = "ax flag" if h in flagged else "ax"
            fs = ' font-size="%d" fill="%s"' % (font, "#cf222e" if h in flagged else "#24292f")
            name = ("\u26a0 " + esc[h]) if h in flagged else esc[h]
            tip = "<title>%s</title>" % _e(flagged[h]) if h in flagged else ""
            body.append('<text class="%s" x="%d" y="%.1f" text-anchor="end" dominant-baseline="central"%s>%s%s</text>'
                        % (cls, left - 4, y, fs, tip, name))  # fmt: skip
            body.append(
                '<text class="%s" transform="translate(%.1f %d) rotate(-90)" dominant-baseline="central"%s>%s%s</text>'
                % (cls, x, top - 4, fs, tip, name)
            )
    else:
        # too many hosts to label every row: label every 16th, names stay in the hover titles
        for h in [x for i, x in enumerate(hosts) if i % 16 == 0 or x in flagged]:
            i = index[h]
            cls = "ax flag" if h in flagged else "ax"
            fs = 'font-size="6" fill="%s"' % ("#cf222e" if h in flagged else "#24292f")
            body.append('<text class="%s" x="%d" y="%d" text-anchor="end" %s>%s</text>'
                        % (cls, left - 2, top + i * size + size, fs, esc[h]))  # fmt: skip
            body.append('<text class="%s" transform="translate(%d %d) rotate(-90)" %s>%s</text>'
                        % (cls, left + i * size + size, top - 2, fs, esc[h]))  # fmt: skip
    rows = {}
    for (server, client), runs in cells.items():
        rows.setdefault(server, []).append((client, runs))
    unit = "us" if kind == "latency" else "Gb/s"
    geometry = 'width="%d" height="%d"' % (size, size)
    outline = ' stroke="#1b1f23" stroke-width="1.5"' if size < 18 else ""
    for server in hosts:
        if server not in rows:
            continue
        y = top + index[server] * size
        body.append('<g data-server="%s" transform="translate(0 %d)">' % (esc[server], y))
        for client, runs in sorted(rows[server], key=lambda item: index[item[0]]):
            x = left + index[client] * size
            passed = all(r.get("passed") for r in runs)
            regressed = any(r.get("regressed") for r in runs)
            goods = [_cell_value(r, kind) for r in runs]
            worst = min(goods, key=lambda g: (g[2] is not None, g[2] if g[2] is not None else 0))
            value, _gate, good = worst
            if not passed:
                failed += 1
                cls = "cf" if value is not None else "cn"
            elif regressed:
                cls = "cr"
            elif good is None or good >= BW_BUCKETS[0]:
                cls = "c0"
            elif good >= BW_BUCKETS[1]:
                cls = "c1"
            else:
                cls = "c2"
            if passed and not regressed and len(runs) == 1:
                # the common case, kept short (most of a big page): figures only
                title = "%s -> %s %s: %s" % (server, client, rail, _short_figures(runs[0], kind))
            else:
                title = "%s -> %s, rail %s %s %s\n%s" % (
                    server,
                    client,
                    rail,
                    kind,
                    test,
                    "\n".join(_result_line(r, kind) for r in runs),
                )
            if passed:
                attrs = '%s fill="%s" class="cell %s" data-client="%s" data-passed="true"' % (
                    geometry,
                    FILL[cls],
                    cls,
                    esc[client],
                )
            else:
                attrs = (
                    '%s fill="%s"%s class="cell %s cell-fail" data-server="%s" data-client="%s" data-rail="%s" '
                    'data-kind="%s" data-test="%s" data-passed="false"'
                    % (geometry, FILL[cls], outline, cls, esc[server], esc[client], erail, ekind, etest)
                )
            body.append('<rect x="%d" %s><title>%s</title></rect>' % (x, attrs, _e(title)))
            if size >= 40:
                label = "-" if value is None else ("%.1f" % value if kind == "latency" else "%.0f" % value)
                glyph = "" if passed else "\u2715"
                tcls = "v f" if not passed else ("v k" if cls in ("c2", "cr") else "v")
                colour = "#fff" if tcls == "v" else "#1b1f23"
                body.append('<text class="%s" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central" '
                            'font-size="%d" fill="%s">%s%s</text>'
                            % (tcls, x + size / 2.0, size / 2.0, 10 if glyph else 12, colour, glyph,
                               _e(label)))  # fmt: skip
        body.append("</g>")
    out.append(
        '<p class="sub">%d hosts, %d measured pairs, %d failing (rows: server, columns: client; %s)</p>'
        % (len(hosts), len(cells), failed, unit)
    )
    out.append(
        '<svg class="hm s%d" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
        'aria-label="rail %s %s %s: %d failing">' % (size, width, height, width, height, erail, ekind, etest, failed)
    )
    out.extend(body)
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


def _suspects(report):
    items = []
    for node in report.get("suspect_nodes") or []:
        details = []
        if node.get("devices"):
            details.append("on %s" % ", ".join(node["devices"]))
        if node.get("failed_with"):
            names = node["failed_with"]
            details.append(
                "failed with %s%s" % (", ".join(names[:8]), " and %d more" % (len(names) - 8) if len(names) > 8 else "")
            )
        for r in node.get("retest") or []:
            if not r.get("passed"):
                details.append(
                    "failed again with known-good %s (%s < %s Gb/s)"
                    % (r.get("partner"), _num(r.get("bw_avg_gbps")), _num(r.get("threshold_gbps")))
                )
                break
        items.append(
            '<li data-kind="node" data-subject="%s">%snode <b>%s</b>%s</li>'
            % (
                _e(node["host"]),
                _verdict_tag(node.get("verdict")),
                _e(node["host"]),
                (" &mdash; " + _e("; ".join(details))) if details else "",
            )
        )
    for link in report.get("suspect_links") or []:
        figures = link.get("failure") or ""
        if link.get("bw_avg_gbps") is not None and link.get("threshold_gbps") is not None:
            figures = "%s Gb/s < %s Gb/s" % (_num(link["bw_avg_gbps"]), _num(link["threshold_gbps"]))
        items.append(
            '<li data-kind="link" data-subject="%s">%slink <b>%s</b> &mdash; %s</li>'
            % (_e(link["link"]), _verdict_tag(link.get("verdict")), _e(link["link"]), _e(figures))
        )
    for cable in report.get("suspect_cables") or []:
        subject = "%s<->%s" % (cable.get("a"), cable.get("b"))
        items.append(
            '<li data-kind="cable" data-subject="%s">%scable <b>%s</b> &harr; <b>%s</b>%s</li>'
            % (
                _e(subject),
                _verdict_tag(cable.get("verdict")),
                _e(cable.get("a")),
                _e(cable.get("b")),
                (" &mdash; " + _e(cable["reason"])) if cable.get("reason") else "",
            )
        )
    if not items:
        return '<h2>Suspects</h2><ul id="suspects"></ul><p class="muted">No suspect node, link or cable.</p>'
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
    measured = {}
    for res in sorted(report.get("results") or [], key=lambda r: r.get("pass", 1), reverse=True):
        if kind_of(res) != "bandwidth":
            continue
        measured[(res.get("link"), str(res.get("test") or "write"))] = res  # the first pass wins
    rows = []
    for (link, test), res in measured.items():
        entry = links.get(link)
        points = [p["gbps"] for p in (entry or {}).get("history", []) if p.get("test", "write") == test]
        if not points:
            continue
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


def to_html(report, history=None):
    """The whole report.html as one string (UTF-8 text, self-contained)."""
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
    groups = _cells(results)
    parts.append("<h2>Pair results per rail</h2>")
    if groups:
        parts.append(_legend())
        parts.append('<div class="grid">')
        for key in sorted(groups, key=lambda k: (k[0], k[1], _rail_sort(k[2]))):
            text, _failed = _heatmap(report, key[0], key[1], key[2], groups[key])
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


def _rail_sort(rail):
    digits = "".join(ch for ch in rail if ch.isdigit())
    return (int(digits) if digits else -1, rail)
