#!/usr/bin/env bash
# ansible-test must run from inside ansible_collections/<ns>/<name>, so the tracked tree is
# copied there (a symlink would resolve back to the repo path). Each run gets its own copy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build/sanity.$$"
coll="$work/ansible_collections/ibtune/fabric"
trap 'rm -rf "$work"' EXIT
mkdir -p "$coll"
cd "$root"
git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -P {} "$coll"/ 2>/dev/null || true
cd "$coll"
# --requirements installs ansible-test's own pinned sanity tools (pylint, etc.) into a
# virtualenv that ansible-test manages per Python version (--venv), not into our venv.
ansible-test sanity --venv --requirements --python "$(python3 -c 'import sys;print("%d.%d"%sys.version_info[:2])')" \
  --color no "$@"
