#!/usr/bin/env bash
# with-lock.sh NAME CMD...: run CMD holding /tmp/ibtune-NAME.lock, so two checkouts (worktrees) on one machine never
# run the same Molecule scenario, or the lab and the demo (both ibt-lab-* containers), at the same time.
set -euo pipefail
name="$1"; shift
exec flock "/tmp/ibtune-${name}.lock" "$@"
