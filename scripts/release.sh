#!/usr/bin/env bash
# make release: release the version galaxy.yml names. antsibull-changelog consumes changelogs/fragments/*.yml into
# changelogs/changelog.yaml (keep_fragments: false removes them) and regenerates CHANGELOG.md; a release summary
# fragment is written first if none exists. Refuses a version that is already released, and checks afterwards that
# no fragment is left (a fragment in the tarball is a change no changelog names) and that lint still passes.
#   RELEASE_DATE=YYYY-MM-DD (default today, UTC)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
version=$(python3 -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
date=${RELEASE_DATE:-$(date -u +%Y-%m-%d)}
if python3 - "$version" <<'PY'
import sys, yaml
releases = (yaml.safe_load(open("changelogs/changelog.yaml")) or {}).get("releases") or {}
sys.exit(0 if sys.argv[1] in releases else 1)
PY
then
  echo "release: $version is already in changelogs/changelog.yaml; raise galaxy.yml's version first" >&2
  exit 1
fi
shopt -s nullglob
fragments=(changelogs/fragments/*.yml changelogs/fragments/*.yaml)
if [ ${#fragments[@]} -eq 0 ]; then
  echo "release: no fragment in changelogs/fragments: nothing to release" >&2
  exit 1
fi
if ! grep -qs '^release_summary:' "${fragments[@]}"; then
  printf 'release_summary: |\n  ibtune.fabric %s: see the sections below for what changed since the last release.\n' "$version" \
    >"changelogs/fragments/$version.yml"
fi
antsibull-changelog lint
antsibull-changelog release --version "$version" --date "$date"
left=(changelogs/fragments/*.yml changelogs/fragments/*.yaml)
if [ ${#left[@]} -gt 0 ]; then
  echo "release: fragments left after the release: ${left[*]}" >&2
  exit 1
fi
antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml
echo "release: $version ($date) in changelogs/changelog.yaml and CHANGELOG.md; ${#fragments[@]} fragment(s) consumed"
