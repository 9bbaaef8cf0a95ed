"""scripts/check_plugin_docs.py: a plugin whose DOCUMENTATION does not parse fails make lint, naming it."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SPEC = importlib.util.spec_from_file_location("check_plugin_docs", ROOT / "scripts" / "check_plugin_docs.py")
check = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(check)

GOOD = '''DOCUMENTATION = r"""
module: x
options:
  a:
    description:
      - One thing, and on its second line
        another thing - said here.
"""
'''


def _tree(tmp_path, text):
    (tmp_path / "plugins" / "modules").mkdir(parents=True)
    (tmp_path / "plugins" / "modules" / "x.py").write_text(text)
    return tmp_path


def test_the_collections_own_docs_parse():
    assert check.problems() == []


def test_a_colon_in_a_wrapped_plain_description_is_named_with_its_line(tmp_path):
    # "- a: b" on one line is a valid mapping; on a continuation line it is the parse error sanity reports
    root = _tree(tmp_path, GOOD.replace("another thing - said here", "another thing: said here"))
    (found,) = check.problems(root)
    assert found.startswith("plugins/modules/x.py:7: DOCUMENTATION does not parse")


def test_good_docs_pass(tmp_path):
    assert check.problems(_tree(tmp_path, GOOD)) == []
