"""Shared pytest setup: import the collection as ansible_collections.ibtune.fabric.

scripts/collections.sh lays out .collections/ansible_collections/ibtune/fabric as a symlink to
this checkout, so tests import exactly the files under plugins/.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLLECTIONS = ROOT / ".collections"
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

# The corpus of real tool outputs lives beside the checkout (../shared/corpus); CI clones
# main into another folder with a copy of shared/ beside it, so the relative path holds.
CORPUS = Path(os.environ.get("IBTUNE_CORPUS") or (ROOT.parent / "shared" / "corpus")).resolve()
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def corpus_dir():
    if not CORPUS.is_dir():
        pytest.fail("corpus not found at %s: set IBTUNE_CORPUS or check out shared/ beside the repo" % CORPUS)
    return CORPUS


def corpus_files(prefix):
    """Corpus files whose name starts with prefix (e.g. 'ib_write_bw__'), sorted."""
    return sorted(p for p in CORPUS.glob(prefix + "*") if p.is_file())


def read_corpus(name):
    return (CORPUS / name).read_text(encoding="utf-8", errors="replace")


# --- the `slow` marker: tests that start a real ansible-playbook (seconds each) -------------------------
# Marked automatically, so no such test can be forgotten: a test is slow when its function, a helper or a
# fixture of its module that it uses (two calls deep) runs "ansible-playbook". `make unit PYTEST_ARGS='-m "not
# slow"'` is the inner loop; `make unit` runs everything.
SLOW_MARK = "ansible-playbook"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs a real ansible-playbook (auto-marked by tests/conftest.py)")


def _source_of(obj):
    import inspect

    obj = getattr(obj, "_get_wrapped_function", lambda: obj)()  # pytest fixtures
    obj = inspect.unwrap(obj) if callable(obj) else obj
    try:
        return inspect.getsource(obj), getattr(obj, "__code__", None)
    except (OSError, TypeError):
        return "", None


def _runs_playbook(obj, namespace, depth=2, seen=None):
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    source, code = _source_of(obj)
    if SLOW_MARK in source:
        return True
    if depth == 0 or code is None:
        return False
    return any(
        _runs_playbook(namespace[name], namespace, depth - 1, seen)
        for name in code.co_names
        if name in namespace and callable(namespace[name])
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        func = getattr(item, "function", None)
        if func is None:
            continue
        namespace = vars(item.module)
        used = [func] + [namespace[f] for f in getattr(item, "fixturenames", ()) if f in namespace]
        if any(_runs_playbook(obj, namespace) for obj in used):
            item.add_marker("slow")
