#!/usr/bin/env bash
# Lab validation wall time against rounds x test duration (printed figures, no assertions).
#
# For each node count (LAB_BENCH_NODES, default "4 8") a lab of that many containers is brought up
# (names ibt-labbench-nodeN on network ibt-labbench-net, so it never collides with Molecule's lab),
# then playbooks/validate_fabric.yml runs for each strategy (LAB_BENCH_STRATEGIES, default
# "all_pairs ring") and duration (LAB_BENCH_DURATIONS, default "2 5"). Printed per run: rounds, the
# ideal time (rounds x duration), the first pass's wall time as the role measures it (from the first
# round's start to the last round's end), its ratio to the ideal, and the whole playbook's wall time.
# The lab is removed at the end (LAB_BENCH_KEEP=1 keeps it). The bench's lab has no subnet manager (the pair
# engine is what it measures), so the lab inventory's topology stage is turned off for its runs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH" ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$root/.collections"
export ANSIBLE_PIPELINING=True ANSIBLE_FORCE_COLOR=False ANSIBLE_NOCOLOR=1
nodes_list=${LAB_BENCH_NODES:-"8 16"}
strategies=${LAB_BENCH_STRATEGIES:-"all_pairs"}
durations=${LAB_BENCH_DURATIONS:-"2 10"}
out="$root/build/lab-bench"
mkdir -p "$out"
net=ibt-labbench-net

inventory() {  # $1 = node count -> inventory dir (hosts + the lab's group_vars)
  tests/lab/inventory.sh "$out/inventory-$1" ibt-labbench "$1" "$net"
  echo "$out/inventory-$1"
}

lab() {  # $1 = inventory, $2 = present|absent
  ansible-playbook -i "$1" tests/lab/lab.yml -e lab_state="$2" -e lab_network=$net >"$out/lab-$2.log" 2>&1
}

# tasks_p1: per-host task runs of pass 1 (plan .. join), from the play output: the engine's claim is
# that it does not grow with the number of rounds (one plan, one schedule + one wait per host, one join).
count_pass1_tasks() {
  awk '/TASK \[.*Plan the pass once, slice it per host - pass 1/ {on=1} on && /^(ok|changed|skipping|failed|fatal): \[/ {n++}
       /TASK \[.*Say how the pass went - pass 1/ {on=0} END {print n+0}' "$1"
}
printf '%-6s %-10s %7s %6s %9s %13s %7s %12s %9s %s\n' nodes strategy rounds dur_s ideal_s first_pass_s ratio playbook_s tasks_p1 load
for n in $nodes_list; do
  inv=$(inventory "$n")
  if ! lab "$inv" present; then
    echo "lab of $n nodes did not come up (log: $out/lab-present.log)"; lab "$inv" absent; continue
  fi
  for strategy in $strategies; do
    for d in $durations; do
      log="$out/run-$n-$strategy-$d.log"
      start=$(date +%s.%N)
      ansible-playbook -i "$inv" playbooks/validate_fabric.yml -e fabric_validate_topology=false -e fabric_validate_strategy="$strategy" \
        -e fabric_validate_duration="$d" -e fabric_validate_report_dir="$out/reports-$n-$strategy-$d" >"$log" 2>&1
      rc=$?
      total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
      line=$(grep -o 'first pass: [0-9]* round(s) in [0-9.]* s' "$log" | head -1)
      rounds=$(sed -n 's/first pass: \([0-9]*\) round.*/\1/p' <<<"$line")
      wall=$(sed -n 's/.* in \([0-9.]*\) s/\1/p' <<<"$line")
      if [ -z "$rounds" ]; then echo "$n $strategy $d: no figures (rc=$rc, log: $log)"; continue; fi
      ideal=$(( rounds * d ))
      ratio=$(awk -v w="$wall" -v i="$ideal" 'BEGIN {printf "%.2f", w / i}')
      printf '%-6s %-10s %7s %6s %9s %13s %7s %12.1f %9s %s%s\n' "$n" "$strategy" "$rounds" "$d" "$ideal" "$wall" "$ratio" \
        "$total" "$(count_pass1_tasks "$log")" "$(cut -d' ' -f1 /proc/loadavg)" "$([ $rc -eq 0 ] || echo "  (rc=$rc, see $log)")"
    done
  done
  [ "${LAB_BENCH_KEEP:-0}" = 1 ] || lab "$inv" absent
done
# The same lab, 3 and 15 rounds (random matchings, 1 s tests): the task runs of a pass must not change.
if [ -n "${LAB_BENCH_ROUNDS_CHECK-4}" ]; then
  n=${LAB_BENCH_ROUNDS_CHECK:-4}
  inv=$(inventory "$n")
  if lab "$inv" present; then
    for r in 3 15; do
      log="$out/rounds-$n-$r.log"
      ansible-playbook -i "$inv" playbooks/validate_fabric.yml -e fabric_validate_topology=false -e fabric_validate_strategy=random \
        -e fabric_validate_random_rounds="$r" -e fabric_validate_duration=1 \
        -e fabric_validate_report_dir="$out/reports-rounds-$r" >"$log" 2>&1
      rounds=$(grep -o 'first pass: [0-9]* round' "$log" | grep -o '[0-9]*' | head -1)
      echo "task runs of pass 1 with $n nodes and ${rounds:-?} rounds: $(count_pass1_tasks "$log")"
    done
    [ "${LAB_BENCH_KEEP:-0}" = 1 ] || lab "$inv" absent
  fi
fi
echo "host load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores"
