#!/usr/bin/env bash
# make test: every layer, run in lanes that share nothing, each layer's wall time in build/timings.txt.
#
#   bootstrap-host                      Debian packages, the venvs, the collections path (everything needs them)
#   then side by side:
#     lane "containers": images -> the Molecule scenarios (molecule/ORDER), one at a time -> bench-smoke
#     lane "python":     lint -> sanity -> unit -> browser -> promtool -> build -> unit/sanity on the
#                        lowest ansible-core requires_ansible claims (requirements/lowest.lock)
# The lanes share no container, port or file: the Molecule scenarios and the bench use their own container names,
# the python lane starts no container. A layer's output goes to build/logs/<layer>.log and is printed whole when
# it ends (one layer at a time, never interleaved). TEST_LANES=1 runs everything one after the other.
# The closing table is build/timings.txt: every layer, its lane, its wall time and exit status, and the total.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs="$root/build/logs"
timings="$root/build/timings.txt"
mkdir -p "$logs"
: >"$timings"
lanes=${TEST_LANES:-2}
start_all=$(date +%s)

# layer LANE NAME CMD...: run CMD, log it, time it, print it; its exit status is CMD's.
layer() {
  local lane=$1 name=$2 start rc
  shift 2
  start=$(date +%s)
  "$@" >"$logs/$name.log" 2>&1
  rc=$?
  {
    flock 9
    printf '%-24s %-10s %6ss  rc=%d\n' "$name" "$lane" "$(($(date +%s) - start))" "$rc" >>"$timings"
    echo "===== $name ($lane lane): $(($(date +%s) - start)) s, rc=$rc"
    cat "$logs/$name.log"
    echo "===== end of $name"
  } 9>"$logs/.print.lock"
  return $rc
}

# A lane stops at its first failing layer (the other lane goes on, so one run shows every failure it can).
python_lane() {
  layer python lint make --no-print-directory lint || return 1
  layer python sanity make --no-print-directory sanity || return 1
  layer python unit make --no-print-directory unit || return 1
  layer python browser make --no-print-directory browser || return 1
  layer python promtool make --no-print-directory promtool || return 1
  layer python build make --no-print-directory build || return 1
  layer python unit-lowest make --no-print-directory unit-lowest || return 1
  layer python sanity-lowest make --no-print-directory sanity-lowest || return 1
}

containers_lane() {
  layer containers images "$root/scripts/bootstrap.sh" all || return 1
  local s
  for s in ${SCENARIOS:-$("$root/scripts/list-scenarios.sh")}; do
    layer containers "molecule-$s" "$root/scripts/with-lock.sh" "molecule-$s" molecule test -s "$s" || return 1
  done
  layer containers bench-smoke make --no-print-directory bench-smoke || return 1
}

export PATH="$root/.venv/bin:$PATH"
layer setup bootstrap-host "$root/scripts/bootstrap.sh" host || { cat "$timings"; exit 1; }
if [ "$lanes" -ge 2 ]; then
  containers_lane &
  containers_pid=$!
  python_lane
  python_rc=$?
  wait "$containers_pid"
  containers_rc=$?
else
  python_lane
  python_rc=$?
  containers_lane
  containers_rc=$?
fi
total=$(($(date +%s) - start_all))
printf '%-24s %-10s %6ss  (python lane rc=%d, containers lane rc=%d)\n' total all "$total" "$python_rc" "$containers_rc" >>"$timings"
echo "===== build/timings.txt (wall seconds per layer; the lanes run side by side)"
cat "$timings"
[ "$python_rc" -eq 0 ] && [ "$containers_rc" -eq 0 ]
