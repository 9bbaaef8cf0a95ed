"""Every condition in the collection's YAML is a string (roles, playbooks, Molecule scenarios).

An unquoted condition holding ': ' (e.g. `- x is search('warning: cable')`) is read by YAML as a mapping, and
ansible-core 2.19 refuses it only when the task runs ("Conditional expressions must be strings"): twice that
surfaced only at the end of a 28-minute molecule lab run. Reading the files here finds it in a second.
"""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("that", "when", "until", "failed_when", "changed_when")
FILES = sorted(
    p for top in ("roles", "playbooks", "molecule") for p in (ROOT / top).rglob("*.yml") if "/files/" not in str(p)
)


def _conditions(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in KEYS:
                yield from value if isinstance(value, list) else [value]
            yield from _conditions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _conditions(item)


def _load(path):
    try:
        return list(yaml.safe_load_all(path.read_text()))
    except yaml.YAMLError:
        return []  # a Jinja template or a non-Ansible file; yamllint reads those


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_condition_is_a_string(path):
    bad = [c for doc in _load(path) for c in _conditions(doc) if not isinstance(c, (str, bool))]
    assert bad == [], "quote these conditions in %s: %s" % (path.relative_to(ROOT), bad)
