#!/usr/bin/env bash
# Build the collection tarball and prove it carries none of the test/lab material.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/dist"
rm -rf "$out"; mkdir -p "$out"
ansible-galaxy collection build --force --output-path "$out" "$root" >/dev/null
tarball=$(ls "$out"/ibtune-fabric-*.tar.gz)
bad=$(tar -tzf "$tarball" | grep -E '^(molecule|tests|bench|scripts|\.venv[^/]*|\.collections|\.cache|requirements|build)/' || true)
if [ -n "$bad" ]; then
  echo "FAIL: $tarball carries files it must not:" >&2; echo "$bad" | head -20 >&2; exit 1
fi
echo "built $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) entries, no molecule/, tests/, bench/"
