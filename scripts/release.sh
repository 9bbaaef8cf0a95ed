#!/usr/bin/env bash
# make release: release the version galaxy.yml names. antsibull-changelog consumes changelogs/fragments/*.yml into
# changelogs/changelog.yaml (keep_fragments: false removes them) and regenerates CHANGELOG.md; a release summary
# fragment is written first on the version's first release. Run again for a version already released (fragments
# merged since), it folds them into that release. Checks afterwards that no fragment is left (a fragment in the
# tarball is a change no changelog names) and that the changelog still lints.
#   RELEASE_DATE=YYYY-MM-DD (default today, UTC)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
version=$(python3 -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
date=${RELEASE_DATE:-$(date -u +%Y-%m-%d)}
released=no
if python3 - "$version" <<'PY'
import sys, yaml
releases = (yaml.safe_load(open("changelogs/changelog.yaml")) or {}).get("releases") or {}
sys.exit(0 if sys.argv[1] in releases else 1)
PY
then
  released=yes
fi
shopt -s nullglob
fragments=(changelogs/fragments/*.yml changelogs/fragments/*.yaml)
if [ ${#fragments[@]} -eq 0 ]; then
  echo "release: no fragment in changelogs/fragments: nothing to release" >&2
  exit 1
fi
if [ "$released" = no ] && ! grep -qs '^release_summary:' "${fragments[@]}"; then
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
echo "release: $version ($date$([ "$released" = yes ] && echo ', folded into the existing release')) in changelogs/changelog.yaml and CHANGELOG.md; ${#fragments[@]} fragment(s) consumed"
