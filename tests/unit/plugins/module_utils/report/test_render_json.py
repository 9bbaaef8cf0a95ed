"""report.json written in pieces (render.json_pieces) is the text to_json always made, and the module writes it
without holding it whole."""

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.report import render


def old_to_json(data):
    """to_json as it was before json_pieces (commit 79e299e): the reference."""

    def compact(value):
        return json.dumps(value, sort_keys=True, separators=(", ", ": "))

    if not data:
        return "{}\n"
    lines = []
    keys = sorted(data)
    for index, key in enumerate(keys):
        value = data[key]
        comma = "," if index < len(keys) - 1 else ""
        if isinstance(value, list) and value:
            items = ",\n".join("    " + compact(item) for item in value)
            lines.append("  %s: [\n%s\n  ]%s" % (compact(key), items, comma))
        elif isinstance(value, dict) and value:
            items = ",\n".join("    %s: %s" % (compact(k), compact(value[k])) for k in sorted(value))
            lines.append("  %s: {\n%s\n  }%s" % (compact(key), items, comma))
        else:
            lines.append("  %s: %s%s" % (compact(key), compact(value), comma))
    return "{\n%s\n}\n" % "\n".join(lines)


def test_the_pieces_make_the_same_text_at_every_batch_boundary(monkeypatch):
    monkeypatch.setattr(render, "JSON_BATCH", 3)
    for n in (0, 1, 2, 3, 4, 6, 7):
        data = {
            "results": [{"server": "h%d" % i, "bw_avg_gbps": i / 7.0, "failure": None} for i in range(n)],
            "links": dict(("l%d" % i, [i, "x"]) for i in range(n)),
            "passed": n % 2 == 0,
            "empty": [],
            "z": {"nested": {"a": 1}},
        }
        assert render.to_json(data) == old_to_json(data)
        assert "".join(render.json_pieces(data)) == old_to_json(data)
        if n > 3:
            assert len(list(render.json_pieces(data))) > 2 * n // 3  # pieces, not one string
    assert render.to_json({}) == old_to_json({}) == "{}\n"
    assert render.to_json({"only": 1}) == old_to_json({"only": 1})


def test_write_atomic_writes_text_and_pieces_alike(tmp_path):
    data = {"results": [{"i": i} for i in range(5000)], "passed": True}
    paths = render.write_atomic(str(tmp_path), {"report.json": render.json_pieces(data), "summary.md": "# ok\n"})
    assert [p.rsplit("/", 1)[1] for p in paths] == ["report.json", "summary.md"]
    assert (tmp_path / "report.json").read_text() == old_to_json(data)
    assert json.loads((tmp_path / "report.json").read_text()) == data
    assert (tmp_path / "summary.md").read_text() == "# ok\n"
