#!/usr/bin/env bash
# make test: every layer, run in lanes that share nothing, each layer's wall time in build/timings.txt.
#
#   bootstrap-host                      Debian packages, the venvs, the collections path (everything needs them)
#   then side by side:
#     lane "containers": images -> Molecule scenarios taken from the queue, one at a time
#     lane "python":     lint -> sanity -> unit -> browser -> promtool -> build -> unit/sanity on the
#                        lowest ansible-core requires_ansible claims (requirements/lowest.lock) -> bench-smoke
#                        (its own containers, ibt-labbench-*: it waits for the images, never for a scenario)
#                        -> Molecule scenarios taken from the same queue, one at a time
# The scenario queue is longest first (molecule/DURATIONS: seconds each took in the last fresh-clone run; a scenario
# not listed there goes first, as if longest), so the lab starts as soon as the images are built and the python
# lane, once its own layers are done, takes the shorter scenarios beside it (longest-processing-time first).
# The lanes share no container, port or file: every scenario and the bench use their own container names and
# networks, so two different scenarios can run at once; the same scenario never runs twice at once (with-lock.sh). A layer's output goes to build/logs/<layer>.log and is printed whole when
# it ends (one layer at a time, never interleaved). TEST_LANES=1 runs everything one after the other.
# The closing table is build/timings.txt: every layer, its lane, its wall time and exit status, and the total.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs="$root/build/logs"
timings="$root/build/timings.txt"
mkdir -p "$logs"
rm -f "$logs/.images.done" "$logs/.images.failed"
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

# Every layer of a lane runs even when an earlier one failed (they do not depend on each other), so one run shows
# every failure and every layer's time; the lane's status is non-zero when any of its layers failed.
python_lane() {
  local rc=0
  layer python lint make --no-print-directory lint || rc=1
  layer python sanity make --no-print-directory sanity || rc=1
  layer python unit make --no-print-directory unit || rc=1
  layer python browser make --no-print-directory browser || rc=1
  layer python promtool make --no-print-directory promtool || rc=1
  layer python build make --no-print-directory build || rc=1
  layer python unit-lowest make --no-print-directory unit-lowest || rc=1
  layer python sanity-lowest make --no-print-directory sanity-lowest || rc=1
  if wait_for_images; then
    layer python bench-smoke "$root/scripts/bench-smoke.sh" || rc=1
    run_queued_scenarios python || rc=1
  else
    rc=1
  fi
  return $rc
}

# The scenario queue: every scenario once, longest first by molecule/DURATIONS (unlisted ones first).
make_queue() {
  local s cost
  for s in ${SCENARIOS:-$("$root/scripts/list-scenarios.sh")}; do
    cost=$(awk -v s="$s" '$1 == s {print $2}' "$root/molecule/DURATIONS" 2>/dev/null)
    printf '%s %s\n' "${cost:-999999}" "$s"
  done | sort -s -k1,1nr | awk '{print $2}' >"$logs/.queue"
}

# pop_scenario: print the next scenario of the queue and remove it (nothing when it is empty).
pop_scenario() {
  (
    flock 8
    head -n 1 "$logs/.queue"
    sed -i 1d "$logs/.queue"
  ) 8>"$logs/.queue.lock"
}

# run_queued_scenarios LANE: run scenarios from the queue until it is empty; non-zero when any failed.
run_queued_scenarios() {
  local lane=$1 s rc=0
  while s=$(pop_scenario) && [ -n "$s" ]; do
    layer "$lane" "molecule-$s" "$root/scripts/with-lock.sh" "molecule-$s" molecule test -s "$s" || rc=1
  done
  return $rc
}

# bench-smoke needs the lab image the containers lane builds first.
wait_for_images() {
  while [ ! -e "$logs/.images.done" ]; do
    [ -e "$logs/.images.failed" ] && { echo "bench-smoke: the images did not build (build/logs/images.log)"; return 1; }
    sleep 5
  done
}

containers_lane() {
  if ! layer containers images "$root/scripts/bootstrap.sh" all; then
    touch "$logs/.images.failed"
    return 1
  fi
  touch "$logs/.images.done"
  run_queued_scenarios containers
}

export PATH="$root/.venv/bin:$PATH"
layer setup bootstrap-host "$root/scripts/bootstrap.sh" host || { cat "$timings"; exit 1; }
make_queue
if [ "$lanes" -ge 2 ]; then
  containers_lane &
  containers_pid=$!
  python_lane
  python_rc=$?
  wait "$containers_pid"
  containers_rc=$?
else
  containers_lane
  containers_rc=$?
  python_lane
  python_rc=$?
fi
total=$(($(date +%s) - start_all))
printf '%-24s %-10s %6ss  (python lane rc=%d, containers lane rc=%d)\n' total all "$total" "$python_rc" "$containers_rc" >>"$timings"
echo "===== build/timings.txt (wall seconds per layer; the lanes run side by side)"
cat "$timings"
[ "$python_rc" -eq 0 ] && [ "$containers_rc" -eq 0 ]
