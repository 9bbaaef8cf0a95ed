#!/usr/bin/env bash
# One validation pass of 2048 nodes submitted as ONE sbatch to a real slurmctld (printed figures, no assertions;
# issue 23's target: the submission < 5 s).
#
# A real Slurm 22.05 controller (Debian 12 packages: munge, slurmctld, slurmdbd on MariaDB so that sacct answers)
# runs in one container of local/ibtune-slurm (scripts/build-images.sh slurm; built here when missing), on a
# docker network of its own made --internal (no route out; not --network none: with loopback alone,
# getaddrinfo(AI_ADDRCONFIG) finds no address family and slurmdbd/slurmctld cannot bind their ports), with every
# Slurm address at 127.0.0.1, no systemd and no extra capability. slurm.conf declares 3 x SBATCH_BENCH_NODES nodes
# (bench-n[0001-6144]) at NodeAddr=127.0.0.1 and no slurmd anywhere, in one of two states (SBATCH_BENCH_NODE_STATE):
# - cloud (default): State=CLOUD with power saving whose Resume/SuspendProgram is /bin/true: the scheduler
#   really allocates the 2048 nodes to the first job (CONFIGURING, "powering up", until it is cancelled; no node
#   ever registers), so the time from the submission to the allocation is measured too;
# - down: State=DOWN: every job pends (ReqNodeNotAvail) and nothing is ever allocated.
# bench/sbatch_pass.py then runs INSIDE that container, next to the real sbatch/squeue/sacct, on the collection's
# own code (module_utils through .collections; the checkout mounted read-only at its own path) and /shared (a
# directory of this host, the cluster's shared filesystem): for each layout (SBATCH_BENCH_LAYOUTS, default
# "contiguous scattered": bench-n[0001-2048], or every other node of bench-n[2049-6144], whose hostlist is 2048
# names with no range to compress), the pass is planned and bundled once, then submitted SBATCH_BENCH_RUNS times
# (default 5) through launcher.stage_and_submit (fresh pass dir, bundle unpacked, job.sh, sbatch --parsable), then
# the same argv straight to sbatch, then the status reads; every job is cancelled. The container and its network
# (a unique name) and /shared are removed at the end, whatever happened (SBATCH_BENCH_KEEP=1 keeps them).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${SBATCH_BENCH_NODES:-2048}
node_state=${SBATCH_BENCH_NODE_STATE:-cloud}
layouts=${SBATCH_BENCH_LAYOUTS:-"contiguous scattered"}
runs=${SBATCH_BENCH_RUNS:-5}
target_s=5
out="$root/build/sbatch-bench"
name="ibt-sbatchbench-$$-$(date +%s)"
image=local/ibtune-slurm:latest
configured=$((3 * n))
last=$(printf '%04d' "$configured")
case "$node_state" in
  cloud) nodes_conf="State=CLOUD"
    # resuming a node "powers it up" at once; it never registers, the job stays CONFIGURING until cancelled
    power="SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=600
SuspendTimeout=30
ResumeTimeout=600
PrivateData=cloud" ;;
  down) nodes_conf="State=DOWN Reason=bench:no_slurmd"; power="" ;;
  *) echo "SBATCH_BENCH_NODE_STATE=$node_state: cloud or down"; exit 2 ;;
esac

cleanup() {
  if [ "${SBATCH_BENCH_KEEP:-0}" = 1 ]; then echo "kept: container $name, $out"; return; fi
  docker rm -f "$name" >/dev/null 2>&1
  docker network rm "$name" >/dev/null 2>&1
  rm -rf "$out/shared"
}
trap cleanup EXIT
mkdir -p "$root/build"
"$root/scripts/build-images.sh" slurm >"$out.image.log" 2>&1 || { echo "the Slurm image did not build (log: $out.image.log)"; exit 1; }
rm -rf "$out" && mkdir -p "$out/etc" "$out/shared"
mv "$out.image.log" "$out/image.log"

cat >"$out/etc/slurm.conf" <<EOF
# bench/bench_sbatch.sh: a controller only; its nodes exist in slurm.conf alone (no slurmd).
ClusterName=bench
SlurmctldHost=ibt-sbatch-ctl(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=0
NodeName=bench-n[0001-$last] NodeAddr=127.0.0.1 CPUs=1 $nodes_conf
$power
PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$out/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=ibt-sbatch-ctl
DbdAddr=127.0.0.1
SlurmUser=slurm
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=bench
StorageLoc=slurm_acct_db
EOF
# Inside the container: munge with a fresh key, MariaDB, slurmdbd, the cluster in accounting, slurmctld.
cat >"$out/etc/start.sh" <<'EOF'
set -e
install -d -o munge -g munge -m 0755 /run/munge
dd if=/dev/urandom bs=1024 count=1 status=none >/etc/munge/munge.key
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
runuser -u munge -- /usr/sbin/munged
install -d -o mysql -g mysql /run/mysqld
runuser -u mysql -- /usr/sbin/mariadbd --skip-networking >/var/log/mariadb.log 2>&1 &
for _ in $(seq 60); do mariadb -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'bench'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
install -d -o slurm -g slurm /var/log/slurm /var/lib/slurm /var/lib/slurm/slurmctld
install -o root -g root -m 0644 /bench/slurm.conf /etc/slurm/slurm.conf
install -o slurm -g slurm -m 0600 /bench/slurmdbd.conf /etc/slurm/slurmdbd.conf
slurmdbd
for _ in $(seq 60); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
sacctmgr -i add cluster bench >/dev/null
slurmctld
for _ in $(seq 120); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.5; done
echo ready
EOF

up_start=$(date +%s.%N)
docker network create --internal "$name" >/dev/null || { echo "the bench's network did not come up"; exit 1; }
docker run -d --init --name "$name" --hostname ibt-sbatch-ctl --add-host ibt-sbatch-ctl:127.0.0.1 --network "$name" \
  --tmpfs /run --tmpfs /tmp -v "$root:$root:ro" -v "$out/etc:/bench:ro" -v "$out/shared:/shared" \
  "$image" sleep infinity >/dev/null || { echo "the controller container did not start"; exit 1; }
if ! timeout 300 docker exec "$name" bash /bench/start.sh >"$out/start.log" 2>&1 || ! grep -qx ready "$out/start.log"; then
  echo "the controller did not come up (log: $out/start.log)"; tail -5 "$out/start.log"; exit 1
fi
up_s=$(awk -v a="$up_start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
known=$(docker exec "$name" sinfo --noheader --format=%D --partition=bench 2>&1)
echo "slurmctld $(docker exec "$name" slurmctld -V | cut -d' ' -f2) in container $name (an --internal network of its own): $known nodes configured ($node_state, no slurmd), up in $up_s s"

row() {  # $1 = label, $2 = key: "min median max" from the figures file
  printf '%-38s %s\n' "$1" "$(awk -v k="$2" '$1 == k {printf "%8s %8s %8s", $2, $3, $4}' "$fig")"
}
rc=0
for layout in $layouts; do
  case "$layout" in
    contiguous) nodes="bench-n[0001-$(printf '%04d' "$n")]"; step=1 ;;
    scattered) nodes="bench-n[$(printf '%04d' $((n + 1)))-$last]"; step=2 ;;
    *) echo "unknown layout '$layout' (contiguous or scattered)"; rc=2; continue ;;
  esac
  fig="$out/figures-$layout.txt"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  if ! timeout 560 docker exec "$name" python3 "$root/bench/sbatch_pass.py" --nodes "$nodes" --step "$step" --shared "/shared/$layout" \
    --runs "$runs" --partition bench >"$fig" 2>"$out/driver-$layout.log"; then
    echo "$layout: the driver failed (log: $out/driver-$layout.log)"; tail -5 "$out/driver-$layout.log"; rc=1; continue
  fi
  get() { awk -v k="$1" '$1 == k {$1 = ""; sub(/^ /, ""); print}' "$fig"; }
  echo
  echo "=== $layout: $(get nodes) nodes, hostlist $(get hostlist_chars) chars, sbatch argv $(get argv_chars) chars," \
    "bundle $(get bundle_mib) MiB ($(get rounds) rounds)"
  allocated="allocated $(get allocated_s) s after its submission ($(get allocated | cut -c1-40))"
  [ "$(get allocated_s)" = - ] && allocated="never allocated (its nodes are $node_state)"
  echo "the first job: $allocated, listed by sacct after $(get sacct_lag_s) s ($(get sacct_row));" \
    "job $(get job) at the status reads"
  echo "controller side, once: plan $(get plan_s) s, slices $(get slices_s) s, bundle $(get bundle_s) s (bench_scale.py times these)"
  printf '%-38s %8s %8s %8s   (%s runs)\n' "" min median max "$runs"
  row "argv build s (sbatch_argv+script)" argv_build_s
  row "staging s (pass dir, unpack, job.sh)" staging_s
  row "  its CPU s (Python, sbatch excluded)" staging_cpu_s
  row "sbatch wall s (through launcher)" sbatch_launcher_s
  row "stage_and_submit s (the submission)" submit_total_s
  row "sbatch wall s (bare, same argv)" sbatch_bare_s
  row "launcher.query s (squeue)" query_s
  row "squeue s" squeue_s
  row "scontrol show job s" scontrol_s
  row "sacct s" sacct_s
  row "scancel s" scancel_s
  worst=$(awk '$1 == "submit_total_s" {print $4}' "$fig")
  verdict=$(awk -v w="$worst" -v t="$target_s" 'BEGIN {print (w < t) ? "PASS" : "OVER"}')
  echo "submission of one $(get nodes)-node pass in one sbatch, worst of $runs: $worst s against $target_s s: $verdict"
  echo "load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores), jobs cancelled: $(get jobs_cancelled)"
done
exit $rc
