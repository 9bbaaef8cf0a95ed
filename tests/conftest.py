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
