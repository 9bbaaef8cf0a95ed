#!/usr/bin/env bash
# Run a make layer and record its wall time in build/timings.txt (printed at the end of make test).
set -uo pipefail
name="$1"; shift
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/build"
[ "$name" = lint ] && : > "$root/build/timings.txt"
start=$(date +%s)
"$@"
rc=$?
echo "$name: $(( $(date +%s) - start ))s (rc=$rc)" >> "$root/build/timings.txt"
exit $rc
