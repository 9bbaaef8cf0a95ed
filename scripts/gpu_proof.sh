#!/usr/bin/env bash
# The NCCL proof on a real GPU machine (the lent H200s: NCCL in PyTorch's wheel, no RDMA NIC, no internet).
# Run from the repository root with the ansible-core wheels in .whl/ (see docs/nccl.md):
#   OUT=/tmp/proof bash scripts/gpu_proof.sh
# It installs ansible-core into /tmp/site, then runs the playbooks on this machine as the one host of group gpu_nodes
# (local connection):
#   1. playbooks/nccl_check.yml with NCCL's defaults (no /etc/nccl.conf), expect_transport=Socket;
#   2. the nccl_env role, profile ib, into the real /etc/nccl.conf (check+diff first, then for real, then again
#      to show idempotence), with NCCL_DEBUG=INFO in the file so that NCCL logging at INFO proves the file is read;
#   3. nccl_check.yml with the rendered file (NCCL_DEBUG left to the file), expect_transport=Socket (must pass);
#   4. nccl_log_check with expect_transport=IB on that log (must fail: "fell back to Socket");
#   5. the socket profile (NCCL_IB_DISABLE=1 from the file), a short run, expect IB (must fail: NCCL_IB_DISABLE=1);
#   6. the lint (strict: every name must be one NCCL reads) and qos_check (nccl_conf, InfiniBand model) on the file;
#   7. a table of algbw/busbw per size, defaults against rendered. With one GPU there is one rank: busbw is 0 by
#      nccl-tests' formula (all_reduce x 2(n-1)/n), so only algbw and what NCCL logged are evidence there.
# Everything lands in $OUT: log (this output), defaults.log, rendered.log, socket.log (NCCL logs),
# nccl.conf (the ib profile's file), results.json, ibtune_nccl.prom.
set -uo pipefail
OUT=${OUT:-/tmp/gpu_proof}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log") 2>&1
export PYTHONUNBUFFERED=1 LC_ALL=C.UTF-8 LANG=C.UTF-8 ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
ROOT=$(pwd)
PY=$(command -v python3)
LOGDIR=/var/log/ibtune
TEXTFILE=/tmp/ibtune-textfile
step() { echo; echo "================ $* ($(date -u +%T))"; }

step "install ansible-core from wheels"
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/coll/ansible_collections/ibtune "$TEXTFILE"
ln -sfn "$ROOT" /tmp/coll/ansible_collections/ibtune/fabric
export ANSIBLE_CONFIG="$ROOT/ansible.cfg" ANSIBLE_COLLECTIONS_PATH=/tmp/coll
printf '[gpu_nodes]\nlocalhost ansible_connection=local ansible_python_interpreter=%s\n' "$PY" > /tmp/gpu_proof_hosts.ini
AP() { PYTHONPATH=/tmp/site "$PY" /tmp/site/bin/ansible-playbook -i /tmp/gpu_proof_hosts.ini "$@"; }
AM() { PYTHONPATH=/tmp/site "$PY" /tmp/site/bin/ansible -i /tmp/gpu_proof_hosts.ini gpu_nodes "$@"; }
PYTHONPATH=/tmp/site "$PY" /tmp/site/bin/ansible-playbook --version | sed -n 1,2p

step "machine"
nvidia-smi -L
nvidia-smi topo -m 2>/dev/null | head -5
"$PY" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
GPUS=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
NCCLV=$("$PY" -c 'import torch; v = torch.cuda.nccl.version(); print(".".join(map(str, v)) if isinstance(v, tuple) else v)')
echo "GPUS=$GPUS NCCL=$NCCLV"
[ "$GPUS" = 1 ] && echo "ONE GPU: one rank, so busbw is 0 by nccl-tests' formula; NVLink bandwidth is not proven here"
echo "NCCL/TORCH variables in the environment:"; env | grep -E '^(NCCL|TORCH)_' | sort
ip -4 route 2>/dev/null | head -3
ls /sys/class/infiniband 2>&1 | head -2
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_CONF_FILE
rm -f /etc/nccl.conf /root/.nccl.conf
mkdir -p "$LOGDIR"

COMMON=(-e nccl_check_min_bytes=1M -e nccl_check_max_bytes=4G -e nccl_check_iters=40 -e nccl_check_warmup_iters=10
  -e nccl_check_log_dir="$LOGDIR" -e '{"nccl_check_env": {"PYTHONPATH": ""}}')

step "1. NCCL defaults (no /etc/nccl.conf), expect Socket"
AP playbooks/nccl_check.yml -e nccl_check_render=false -e nccl_check_tag=defaults \
  -e nccl_check_expect_transport=Socket "${COMMON[@]}"
echo "RC defaults=$?"

IBVARS='{"nccl_env_profile": "ib", "nccl_env_vars": {"NCCL_DEBUG": "INFO"}}'
step "2a. nccl_env role, profile ib: check mode + diff (nothing written)"
AP playbooks/nccl_check.yml --tags nccl_check_render -e "$IBVARS" --check --diff
echo "RC render-check=$?"; ls -l /etc/nccl.conf 2>&1
step "2b. nccl_env role, profile ib: write /etc/nccl.conf"
AP playbooks/nccl_check.yml --tags nccl_check_render -e "$IBVARS" --diff
echo "RC render=$?"; cat /etc/nccl.conf; cp /etc/nccl.conf "$OUT/nccl.conf"
step "2c. nccl_env role again: idempotence"
AP playbooks/nccl_check.yml --tags nccl_check_render -e "$IBVARS" | tee /tmp/idem.txt | tail -3
grep -q 'changed=0' /tmp/idem.txt && echo "IDEMPOTENT: yes" || echo "IDEMPOTENT: NO"
step "2d. a bad override fails in lint before the file is touched"
md5sum /etc/nccl.conf
AP playbooks/nccl_check.yml --tags nccl_check_render -e '{"nccl_env_vars": {"NCCL_IB_TIMEOUT": 40, "NCCL_IBHCA": "x"}}' | tail -25
echo "RC bad-override=$?"; md5sum /etc/nccl.conf

step "3. with the rendered /etc/nccl.conf (NCCL_DEBUG only from the file), expect Socket"
AP playbooks/nccl_check.yml -e nccl_check_render=false -e nccl_check_tag=rendered -e nccl_check_nccl_debug= \
  -e nccl_check_expect_transport=Socket -e nccl_check_textfile_dir="$TEXTFILE" "${COMMON[@]}"
echo "RC rendered=$?"
grep -E 'set by environment|NET/IB|NET/Socket|Using network|NCCL version' "$LOGDIR/rendered.log" | sort | uniq -c | head -20

step "4. expect IB on the rendered run's log: must fail with 'fell back to Socket'"
cp "$LOGDIR/rendered.log" "$LOGDIR/rendered_expect_ib.log"
AP playbooks/nccl_check.yml -e nccl_check_render=false -e nccl_check_test=false -e nccl_check_tag=rendered_expect_ib \
  -e nccl_check_expect_transport=IB -e nccl_check_log_dir="$LOGDIR" | tail -12
echo "RC expect-IB=$? (2 expected)"

step "5. socket profile (NCCL_IB_DISABLE=1 from /etc/nccl.conf), short run, expect Socket then IB"
AP playbooks/nccl_check.yml --tags nccl_check_render -e nccl_env_profile=socket --diff | grep -E '^[-+]|changed=' 
AP playbooks/nccl_check.yml -e nccl_check_render=false -e nccl_check_tag=socket -e nccl_check_expect_transport=Socket \
  -e '{"nccl_check_collectives": ["all_reduce"]}' -e nccl_check_min_bytes=64M -e nccl_check_max_bytes=256M \
  -e nccl_check_log_dir="$LOGDIR" -e '{"nccl_check_env": {"PYTHONPATH": ""}}' | tail -6
echo "RC socket=$?"
cp "$LOGDIR/socket.log" "$LOGDIR/socket_expect_ib.log"
AP playbooks/nccl_check.yml -e nccl_check_render=false -e nccl_check_test=false -e nccl_check_tag=socket_expect_ib \
  -e nccl_check_expect_transport=IB -e nccl_check_log_dir="$LOGDIR" | tail -8
echo "RC socket-expect-IB=$? (2 expected)"
step "5b. back to the ib profile's file"
AP playbooks/nccl_check.yml --tags nccl_check_render -e "$IBVARS" | tail -2

step "6. lint (strict) and qos_check on the ib profile's /etc/nccl.conf"
AM -m ibtune.fabric.nccl_env_lint -a "path=/etc/nccl.conf strict=true nccl_version=$NCCLV"
echo "RC lint-strict=$?"
AM -m ibtune.fabric.qos_check -a '{"qos": {"mode": "infiniband"}, "nccl_conf": "/etc/nccl.conf"}'
echo "RC qos-check=$?"
AM -m ibtune.fabric.qos_check -a '{"qos": {"mode": "infiniband", "ib_sl": 3}, "nccl_conf": "/etc/nccl.conf"}'
echo "RC qos-check-sl3=$? (2 expected: the file leaves NCCL on SL 0)"

step "7. figures"
cp "$LOGDIR/defaults.log" "$LOGDIR/rendered.log" "$LOGDIR/socket.log" "$OUT/" 2>/dev/null
cp "$TEXTFILE/ibtune_nccl.prom" "$OUT/" 2>/dev/null
"$PY" - "$LOGDIR" "$OUT/results.json" <<'PYEOF'
import json, os, sys
logdir, dest = sys.argv[1], sys.argv[2]
docs = {}
for tag in ("defaults", "rendered", "rendered_expect_ib", "socket", "socket_expect_ib"):
    path = os.path.join(logdir, tag + ".json")
    if os.path.exists(path):
        with open(path) as handle:
            docs[tag] = json.load(handle)
with open(dest, "w") as handle:
    json.dump(docs, handle, indent=1, sort_keys=True)
for tag, doc in docs.items():
    print("%-20s passed=%s failure=%s" % (tag, doc.get("passed"), doc.get("failure")))
d = docs.get("defaults", {}).get("test", {}).get("collectives", {})
r = docs.get("rendered", {}).get("test", {}).get("collectives", {})
for coll in sorted(set(d) | set(r)):
    print("\n%s GB/s: algbw, busbw with defaults | algbw, busbw with the rendered /etc/nccl.conf" % coll)
    rows_r = {row["size"]: row for row in r.get(coll, {}).get("rows", [])}
    for row in d.get(coll, {}).get("rows", []):
        other = rows_r.get(row["size"], {})
        print("%12d  %8.2f  %8.2f | %8.2f  %8.2f  ranks' us %s" % (row["size"], row["algbw"], row["busbw"],
              other.get("algbw", float("nan")), other.get("busbw", float("nan")), other.get("rank_time_us")))
ar_d = d.get("all_reduce", {}).get("max_size_busbw")
ar_r = r.get("all_reduce", {}).get("max_size_busbw")
print("\nall_reduce at max size: defaults %s, rendered %s, target 339.7 (0.98 x 346.6)" % (ar_d, ar_r))
if ar_d and ar_r:
    print("rendered/defaults = %.4f; rendered >= target: %s" % (ar_r / ar_d, ar_r >= 339.7))
PYEOF
ls -la "$OUT"
