#!/usr/bin/env bash
# ansible-test must run from inside ansible_collections/<ns>/<name>, so the tracked tree is
# copied there (a symlink would resolve back to the repo path). Each run gets its own copy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ibtune-sanity.XXXXXX)
coll="$work/ansible_collections/ibtune/fabric"
trap 'rm -rf "$work"' EXIT
mkdir -p "$coll"
cd "$root"
git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -P {} "$coll"/ 2>/dev/null || true
cd "$coll"
# ansible-test bootstraps pip in its test venvs from an unreachable host: give it the stand-in.
pipver=$(sed -n 's/^pip==\([0-9.]*\).*/\1/p' "$root"/.venv-sanity/lib/python3*/site-packages/ansible_test/_data/requirements/ansible-test.txt 2>/dev/null | tr . _)
[ -n "$pipver" ] || pipver=24_2
mkdir -p ~/.ansible/test/cache
cp "$root/scripts/get_pip_standin.py" ~/.ansible/test/cache/"get_pip_${pipver}.py"
# ansible-test runs from .venv-sanity, which holds ansible-test's own pinned sanity tools.
export PATH="$root/.venv-sanity/bin:$PATH"
ansible-test sanity --python "$("$root/.venv-sanity/bin/python" -c 'import sys;print("%d.%d"%sys.version_info[:2])')" \
  --color no "$@"
