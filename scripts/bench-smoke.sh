#!/usr/bin/env bash
# make bench-smoke: bench/lab_bench.sh on a small lab (2 nodes, one 1 s pass, and the rounds check on 2 nodes), so
# `make bench` cannot rot between the times someone measures with it. It checks that the bench ran and printed
# its figures (a row per run, the task-run counts); it asserts nothing about the figures themselves (benches
# print numbers, tests never time). The bench_*.py figures need no lab and are not run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/lab-bench"
log="$out/smoke.txt"
mkdir -p "$out"
LAB_BENCH_NODES=2 LAB_BENCH_STRATEGIES=all_pairs LAB_BENCH_DURATIONS=1 LAB_BENCH_ROUNDS_CHECK=2 \
  "$root/bench/lab_bench.sh" | tee "$log"
fail() { echo "bench-smoke: FAIL: $1 (the bench's logs are under $out)" >&2; exit 1; }
# The figures row of the one run: nodes, strategy, rounds, duration ... and no "(rc=N" after it.
row=$(grep -E '^2 +all_pairs +[0-9]+ +1 ' "$log") || fail "no figures row for 2 nodes, all_pairs, 1 s"
case "$row" in *"(rc="*) fail "the validation of the small lab failed: $row" ;; esac
grep -qE '^task runs of pass 1 with 2 nodes and [0-9]+ rounds: [0-9]+$' "$log" || fail "no task-run counts for the rounds check"
[ "$(grep -c '^task runs of pass 1' "$log")" -eq 2 ] || fail "the rounds check did not run twice"
echo "bench-smoke: lab_bench.sh ran on a 2-node lab and printed its figures"
