#!/usr/bin/env python3
"""Every plugin's DOCUMENTATION, EXAMPLES and RETURN (and filter .yml docs) parse as YAML: make lint fails naming the
file, the block and the line, instead of ansible-test sanity minutes later (a ': ' inside a plain description is
the usual culprit)."""

import ast
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = ("DOCUMENTATION", "EXAMPLES", "RETURN")


def problems(root=ROOT):
    found = []
    for path in sorted((root / "plugins").glob("*/*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in BLOCKS:
                block = node.targets[0].id
                try:
                    yaml.safe_load(node.value.value)
                except yaml.YAMLError as exc:
                    mark = getattr(exc, "problem_mark", None)
                    line = node.value.lineno + (mark.line if mark else 0)
                    found.append("%s:%d: %s does not parse: %s" % (path.relative_to(root), line, block, exc))
    for path in sorted((root / "plugins").glob("*/*.yml")):
        try:
            yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            found.append("%s: does not parse: %s" % (path.relative_to(root), exc))
    return found


def main():
    found = problems()
    for line in found:
        print(line)
    print("plugin docs: %d problem(s)" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
