#!/usr/bin/env bash
# ansible-test must run from inside ansible_collections/<ns>/<name>, so the tracked tree is
# copied there (a symlink would resolve back to the repo path). Each run gets its own copy.
# SANITY_VENV picks the ansible-test (ansible-core) to run: .venv-sanity (the highest ansible-core requires_ansible
# claims) by default, .venv-lowest for make sanity-lowest. ansible-test keeps each test's tool venv under
# ~/.ansible/test/venv, keyed by its pinned requirements: installed once per machine, reused by every later run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${SANITY_VENV:-$root/.venv-sanity}
work=$(mktemp -d /tmp/ibtune-sanity.XXXXXX)
coll="$work/ansible_collections/ibtune/fabric"
trap 'rm -rf "$work"' EXIT
mkdir -p "$coll"
cd "$root"
git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -P {} "$coll"/ 2>/dev/null || true
cd "$coll"
# ansible-test bootstraps pip in its test venvs from an unreachable host: give it the stand-in.
pipver=$(sed -n 's/^pip==\([0-9.]*\).*/\1/p' "$venv"/lib/python3*/site-packages/ansible_test/_data/requirements/ansible-test.txt 2>/dev/null | tr . _)
[ -n "$pipver" ] || pipver=24_2
mkdir -p ~/.ansible/test/cache
cp "$root/scripts/get_pip_standin.py" ~/.ansible/test/cache/"get_pip_${pipver}.py"
# ansible-test runs from .venv-sanity, which holds ansible-test's own pinned sanity tools.
export PATH="$venv/bin:$PATH"
echo "ansible-test sanity with $("$venv/bin/ansible" --version | sed -n 1p)"
ansible-test sanity --python "$("$venv/bin/python" -c 'import sys;print("%d.%d"%sys.version_info[:2])')" \
  --color no "$@"
