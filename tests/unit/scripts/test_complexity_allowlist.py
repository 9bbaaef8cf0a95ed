"""ruff.toml's complexity allowlist stays honest: every file it exempts from C901 still has a function over the
threshold (split the last one, and the test says to delete the line), and every entry says which and why."""

import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

RUFF = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")


def _config():
    text = (ROOT / "ruff.toml").read_text()
    return text, tomllib.loads(text)


@pytest.mark.skipif(tomllib is None or RUFF is None, reason="needs Python 3.11 (tomllib) and ruff")
def test_every_exempt_file_still_needs_it_and_says_why():
    text, config = _config()
    limit = config["lint"]["mccabe"]["max-complexity"]
    exempt = [path for path, rules in config["lint"]["per-file-ignores"].items() if "C901" in rules]
    assert exempt, "the allowlist is empty: remove [lint.per-file-ignores] C901 entries and this test"
    argv = [RUFF, "check", "--isolated", "--select", "C901", "--config", "lint.mccabe.max-complexity=%d" % limit]
    argv += ["--output-format", "concise", "--exit-zero"] + exempt
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True, timeout=120).stdout
    for path in exempt:
        assert path + ":" in out, "%s has no function over %d any more: delete its line from ruff.toml" % (path, limit)
        line = next(line for line in text.splitlines() if line.startswith('"%s"' % path))
        assert re.search(r"#\s*\S+ \d+", line), "%s: say which function, its figure and why" % path
