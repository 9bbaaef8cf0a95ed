"""Print the shape of the collection's Python: files and lines per package, the largest functions, and the
cyclomatic complexity distribution (ruff's C901 / McCabe figures, graded like radon: A 1-5, B 6-10, C 11-20,
D 21-30, E 31-40, F 41+).

Why: issue 26 asks for before/after figures; radon is not installed, ruff is (the same McCabe count that the
C901 lint in ruff.toml enforces). Usage: `scripts/code_shape.py [--top N] [--json] [paths...]`
(default paths: plugins/).
"""

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

GRADES = (("A", 5), ("B", 10), ("C", 20), ("D", 30), ("E", 40), ("F", 10**9))
C901_MESSAGE = re.compile(r"`(?P<name>[^`]+)` is too complex \((?P<score>\d+) > \d+\)")


def grade(score):
    """Radon's letter for a McCabe score."""
    return next(letter for letter, ceiling in GRADES if score <= ceiling)


def python_files(paths):
    """Every .py file under paths, sorted."""
    found = []
    for top in paths:
        if os.path.isfile(top):
            found.append(top)
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    return found


def package_of(path):
    """plugins/module_utils/<package>/x.py -> module_utils/<package>; plugins/modules/x.py -> modules."""
    parts = path.split(os.sep)
    if "module_utils" in parts:
        index = parts.index("module_utils")
        rest = parts[index + 1 :]
        return "module_utils/" + (rest[0] if len(rest) > 1 else "(top)")
    return os.path.dirname(path) or "."


def function_lengths(path):
    """[(qualified name, first line, line count)] for every function in a file."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    rows = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                rows.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return rows


def complexities(paths):
    """{(path, line): (name, score)} from ruff's C901 with a threshold of 0 (so every function is listed)."""
    ruff = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    command = [
        ruff,
        "check",
        "--isolated",
        "--select",
        "C901",
        "--config",
        "lint.mccabe.max-complexity=0",
        "--output-format",
        "json",
        "--exit-zero",
        *paths,
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    scores = {}
    for item in json.loads(output):
        match = C901_MESSAGE.search(item["message"])
        if match:
            key = (os.path.relpath(item["filename"]), item["location"]["row"])
            scores[key] = (match["name"], int(match["score"]))
    return scores


def shape(paths, top):
    """The figures as one dict."""
    files = python_files(paths)
    packages = Counter()
    package_lines = Counter()
    functions = []
    for path in files:
        package = package_of(path)
        packages[package] += 1
        with open(path, encoding="utf-8") as handle:
            package_lines[package] += sum(1 for _line in handle)
        functions.extend((path, name, line, length) for name, line, length in function_lengths(path))
    scores = complexities(paths)
    rows = []
    for path, name, line, length in functions:
        score = scores.get((os.path.relpath(path), line), (name, 1))[1]
        rows.append({"where": "%s:%d" % (path, line), "name": name, "lines": length, "complexity": score})
    grades = Counter(grade(row["complexity"]) for row in rows)
    return {
        "files": len(files),
        "functions": len(rows),
        "packages": {name: {"files": packages[name], "lines": package_lines[name]} for name in sorted(packages)},
        "grades": {letter: grades.get(letter, 0) for letter, _upper in GRADES},
        "over_10": sum(1 for row in rows if row["complexity"] > 10),
        "largest": sorted(rows, key=lambda row: -row["lines"])[:top],
        "most_complex": sorted(rows, key=lambda row: -row["complexity"])[:top],
    }


def print_text(figures):
    """The figures as a few plain tables."""
    print("%d files, %d functions" % (figures["files"], figures["functions"]))
    print("\npackage                      files  lines")
    for name, row in figures["packages"].items():
        print("%-28s %5d %6d" % (name, row["files"], row["lines"]))
    grades = figures["grades"]
    d_to_f = grades["D"] + grades["E"] + grades["F"]
    print("\ncomplexity grades: " + ", ".join("%s %d" % item for item in grades.items()))
    print(
        "D-F: %d of %d (%.1f%%); over 10 (C901's threshold): %d"
        % (d_to_f, figures["functions"], 100.0 * d_to_f / max(figures["functions"], 1), figures["over_10"])
    )
    for title, key in (("largest functions", "largest"), ("most complex functions", "most_complex")):
        print("\n%s (lines/complexity)" % title)
        for row in figures[key]:
            print("  %4d/%-3d %s %s" % (row["lines"], row["complexity"], row["name"], row["where"]))


JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)


def multi_line_jinja(roles_dir="roles"):
    """{role: (multi-line Jinja expressions in its tasks, task lines)}: an expression whose text spans lines (in a
    folded ``>-`` block or not) is a decision written in Jinja (issue 26 part 5)."""
    out = {}
    for role in sorted(os.listdir(roles_dir)):
        tasks = os.path.join(roles_dir, role, "tasks")
        if not os.path.isdir(tasks):
            continue
        count = lines = 0
        for name in sorted(os.listdir(tasks)):
            if name.endswith((".yml", ".yaml")):
                with open(os.path.join(tasks, name), encoding="utf-8") as handle:
                    text = handle.read()
                count += sum(1 for match in JINJA.finditer(text) if "\n" in match.group(0))
                lines += text.count("\n")
        out[role] = (count, lines)
    return out


def print_jinja(counts):
    total = sum(c for c, _lines in counts.values())
    lines = sum(n for _count, n in counts.values())
    print(
        "multi-line Jinja expressions in roles/*/tasks: %d in %d lines (%.1f per 100)"
        % (total, lines, 100.0 * total / max(lines, 1))
    )
    for role, (count, n) in counts.items():
        print("  %-20s %3d in %4d lines" % (role, count, n))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["plugins"])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--jinja", action="store_true", help="count the roles' multi-line Jinja expressions instead")
    args = parser.parse_args(argv)
    if args.jinja:
        print_jinja(multi_line_jinja())
        return 0
    figures = shape(args.paths, args.top)
    if args.json:
        json.dump(figures, sys.stdout, indent=1)
        print()
    else:
        print_text(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
