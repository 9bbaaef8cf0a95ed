#!/usr/bin/env bash
# Build the local Debian 12 images Molecule and the lab use. Nothing can be pulled
# here, so images are bootstrapped with mmdebstrap and imported. Idempotent: an image
# whose recipe hash matches is kept.
# Usage: build-images.sh [debian12|lab|slurm ...]; no argument builds debian12 and lab (what bootstrap needs).
# slurm (local/ibtune-slurm: munge, slurmctld, slurmdbd, MariaDB) is built only when asked for, by
# bench/bench_sbatch.sh: `make test` never needs it.
set -euo pipefail

mirror="${IBTUNE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base_pkgs="python3,python3-apt,systemd,systemd-sysv,dbus,iproute2,procps,ca-certificates,sudo,kmod,gnupg"
# Lab nodes get the real RDMA userland from Debian (the real perftest's "no device"
# failure is a test case), OpenSM and node_exporter, so a lab run of tune_ib.yml finds
# them installed the way a provisioned node would (the roles still manage them); ibsim-utils
# for the lab subnet on the SM host (tests/lab/subnet: ibsim + OpenSM under libumad2sim).
lab_pkgs="${base_pkgs},rdma-core,ibverbs-utils,infiniband-diags,perftest,rdmacm-utils,opensm,prometheus-node-exporter,ibsim-utils"
# The sbatch bench's controller: a Slurm 22.05 controller with accounting (slurmdbd on MariaDB, so sacct answers).
slurm_pkgs="${base_pkgs},munge,slurm-client,slurmctld,slurmdbd,mariadb-server"

build() {
  local name="$1" pkgs="$2"
  local tag="local/${name}:latest"
  local recipe
  recipe=$(printf '%s|%s|v4' "$pkgs" "$mirror" | sha256sum | cut -c1-12)
  if docker image inspect "$tag" --format '{{ index .Config.Labels "ibtune.recipe" }}' 2>/dev/null | grep -qx "$recipe"; then
    echo "image $tag is current ($recipe)"
    return 0
  fi
  echo "building $tag ($recipe)"
  mmdebstrap --quiet --variant=minbase --include="$pkgs" \
    --customize-hook='rm -f "$1"/etc/machine-id; touch "$1"/etc/machine-id' \
    --customize-hook='printf "# ibtune: keep /tmp at boot; Ansible may already be running a module from it\\nd /tmp 1777 root root -\\n" > "$1"/etc/tmpfiles.d/tmp.conf' \
    --customize-hook='chroot "$1" systemctl mask systemd-logind.service getty.target console-getty.service systemd-udevd.service systemd-udev-trigger.service' \
    bookworm - "$mirror" \
    | docker import \
        --change 'CMD ["/lib/systemd/systemd"]' \
        --change 'ENV container=docker' \
        --change "LABEL ibtune.recipe=${recipe}" \
        - "$tag"
}

for image in "${@:-debian12 lab}"; do
  for one in $image; do
    case "$one" in
      debian12) build ibtune-debian12 "$base_pkgs" ;;
      lab) build ibtune-lab "$lab_pkgs" ;;
      slurm) build ibtune-slurm "$slurm_pkgs" ;;
      *) echo "build-images.sh: unknown image '$one' (debian12, lab or slurm)" >&2; exit 2 ;;
    esac
  done
done
