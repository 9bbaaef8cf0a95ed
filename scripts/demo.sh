#!/usr/bin/env bash
# make demo: the main job on the built-in lab.
#   1. bring up the 4-node simulated fabric (real containers, fixture NICs, perftest simulator)
#   2. tune_ib.yml on a healthy fabric: must pass; prints the summary
#   3. tune_ib.yml again: must pass and change nothing (idempotence)
#   4. inject faults (rail mlx5_0 between node2 and node3 at 180 Gb/s, symbol errors climbing on
#      node4 mlx5_1) and run the validate stage: must FAIL naming that link and that node/port
#   5. degrade an inter-switch cable of the lab subnet (ibsim + OpenSM on node1): must FAIL naming the cable
# Exits 0 when all of this behaved as expected. IBTUNE_DEMO_KEEP=1 leaves the lab running.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH" ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$root/.collections"
export ANSIBLE_PIPELINING=True ANSIBLE_FORCE_COLOR=False ANSIBLE_NOCOLOR=1
inv=inventories/lab
out="$root/build/demo"
reports="$out/reports"
rm -rf "$out"; mkdir -p "$out"
fail=0

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
recap() { sed -n '/PLAY RECAP/,$p' "$1" | grep -E '^[a-z0-9-]+ +:' ; }
changed_total() { recap "$1" | sed -n 's/.*changed=\([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}'; }

cleanup() {
  if [ "${IBTUNE_DEMO_KEEP:-0}" != 1 ]; then
    ansible-playbook -i "$inv" tests/lab/lab.yml -e lab_state=absent >"$out/lab-down.log" 2>&1 || true
  fi
}
trap cleanup EXIT

say "Bringing up the lab: 4 Debian 12 containers, 2 NDR rails each (simulated NICs)"
if ! ansible-playbook -i "$inv" tests/lab/lab.yml >"$out/lab-up.log" 2>&1; then
  tail -30 "$out/lab-up.log"; echo "demo: the lab did not come up (log: $out/lab-up.log)"; exit 1
fi
ansible-playbook -i "$inv" tests/lab/set_fabric.yml -e lab_fabric=healthy.json >"$out/fabric-healthy.log" 2>&1

say "Run 1: tune_ib.yml on a healthy fabric"
start=$(date +%s)
ansible-playbook -i "$inv" playbooks/tune_ib.yml -e ibtune_report_dir="$reports/healthy" >"$out/run1.log" 2>&1
rc1=$?
t1=$(( $(date +%s) - start ))
recap "$out/run1.log"
cat "$reports/healthy/latest/summary.md" 2>/dev/null | head -40
if [ $rc1 -eq 0 ]; then echo "-> passed as expected (${t1}s, changed=$(changed_total "$out/run1.log"))"
else echo "-> UNEXPECTED: the healthy run failed (rc=$rc1); log: $out/run1.log"; tail -40 "$out/run1.log"; fail=1; fi

say "Run 2: the same again - must pass and change nothing"
start=$(date +%s)
ansible-playbook -i "$inv" playbooks/tune_ib.yml -e ibtune_report_dir="$reports/healthy2" >"$out/run2.log" 2>&1
rc2=$?
t2=$(( $(date +%s) - start ))
c2=$(changed_total "$out/run2.log")
recap "$out/run2.log"
if [ $rc2 -eq 0 ] && [ "$c2" -eq 0 ]; then echo "-> passed, changed=0 as expected (${t2}s)"
else echo "-> UNEXPECTED: rc=$rc2 changed=$c2; log: $out/run2.log"; grep -B2 -A8 'changed:' "$out/run2.log" | head -40; fail=1; fi

say "Run 3: inject faults - mlx5_0 of node2<->node3 at 180 Gb/s, symbol_error climbing on node4 mlx5_1"
ansible-playbook -i "$inv" tests/lab/set_fabric.yml -e lab_fabric=degraded_link.json,symbol_errors.json >"$out/fabric-faults.log" 2>&1
ansible-playbook -i "$inv" playbooks/tune_ib.yml --tags validate -e ibtune_report_dir="$reports/faulty" >"$out/run3.log" 2>&1
rc3=$?
recap "$out/run3.log"
cat "$reports/faulty/latest/summary.md" 2>/dev/null | head -60
# The failed task's one-line message, as the operator reads it at the end of the play.
msg=$(grep -h "Task failed: .*Fabric validation failed" "$out/run3.log" | sed 's/.*Fabric validation failed/Fabric validation failed/' | head -1)
echo "failure message: ${msg:-<none>}"
if [ $rc3 -ne 0 ] && grep -q "ibt-lab-node2/mlx5_0<->ibt-lab-node3/mlx5_0" <<<"$msg" && grep -q "ibt-lab-node4 mlx5_1 port 1 symbol_error" <<<"$msg"; then
  echo "-> failed as expected, naming the degraded link and the node/port whose errors climbed"
else
  echo "-> UNEXPECTED: rc=$rc3, the failure did not name both faults; log: $out/run3.log"; tail -40 "$out/run3.log"; fail=1
fi

say "Run 4: a degraded inter-switch cable (lab-leaf1 p7 <-> lab-spine1 p1 at 45%) - the verdict must name the cable"
ansible-playbook -i "$inv" tests/lab/set_fabric.yml -e lab_fabric=degraded_cable.json >"$out/fabric-cable.log" 2>&1
ansible-playbook -i "$inv" playbooks/tune_ib.yml --tags validate -e ibtune_report_dir="$reports/cable" >"$out/run4.log" 2>&1
rc4=$?
recap "$out/run4.log"
grep -A3 -E '^## (Suspect cables|Inter-switch links)' "$reports/cable/latest/summary.md" 2>/dev/null | grep -v '^$'
msg=$(grep -h "Task failed: .*Fabric validation failed" "$out/run4.log" | sed 's/.*Fabric validation failed/Fabric validation failed/' | head -1)
echo "failure message: ${msg:-<none>}"
if [ $rc4 -ne 0 ] && grep -q "Fabric validation failed: cable lab-leaf1 p7 <-> lab-spine1 p1 " <<<"$msg"; then
  echo "-> failed as expected, naming the cable to reseat first"
else
  echo "-> UNEXPECTED: rc=$rc4, the failure did not name the cable; log: $out/run4.log"; tail -40 "$out/run4.log"; fail=1
fi
ansible-playbook -i "$inv" tests/lab/set_fabric.yml -e lab_fabric=healthy.json >>"$out/fabric-healthy.log" 2>&1

say "Demo $( [ $fail -eq 0 ] && echo 'behaved as expected' || echo 'FAILED' ): logs and reports under $out"
exit $fail
