#!/usr/bin/env bash
# tune_ib.yml on the lab: first run (converges the nodes) and second run (must change nothing), with
# wall time and changed counts. Printed figures, no assertions. Uses its own containers
# (ibt-tunebench-node1..4 on ibt-tunebench-net) so it never collides with Molecule's lab.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH" ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$root/.collections"
export ANSIBLE_PIPELINING=True ANSIBLE_FORCE_COLOR=False ANSIBLE_NOCOLOR=1
out="$root/build/tune-bench"
inv="$out/inventory"
rm -rf "$out"; mkdir -p "$out"
tests/lab/inventory.sh "$inv" ibt-tunebench 4 ibt-tunebench-net with_sm

lab() { ansible-playbook -i "$inv" tests/lab/lab.yml -e lab_state="$1" >"$out/lab-$1.log" 2>&1; }
changed() { sed -n '/PLAY RECAP/,$p' "$1" | sed -n 's/.*changed=\([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}'; }

lab present || { echo "lab did not come up (log: $out/lab-present.log)"; lab absent; exit 1; }
printf '%-8s %8s %8s %4s\n' run wall_s changed rc
for run in first second check; do
  extra=()
  [ "$run" = check ] && extra=(--check)
  start=$(date +%s.%N)
  ansible-playbook -i "$inv" playbooks/tune_ib.yml "${extra[@]}" -e ibtune_report_dir="$out/reports-$run" >"$out/$run.log" 2>&1
  rc=$?
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  printf '%-8s %8s %8s %4s\n' "$run" "$wall" "$(changed "$out/$run.log")" "$rc"
done
[ "${TUNE_BENCH_KEEP:-0}" = 1 ] || lab absent
echo "host load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores"
