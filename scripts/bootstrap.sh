#!/usr/bin/env bash
# Everything `make test` and `make demo` need on a fresh Debian 12 machine, as root.
# Every step is skipped when its result is already in place.
# Parts: `lowest` (the venv of the lowest ansible-core claimed), `python` (the venvs and the collections path: lint, sanity, build), `host` (python + the Debian
# packages the unit tests run for real: ibsim, opensm, perftest, promtool, chromium, Open MPI...), `all` (default: host +
# dockerd + the Molecule/lab images). The inner loop (`make unit`, `make lint`) never waits for dockerd or images.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
part="${1:-all}"

# A venv installed from a lock file, rebuilt only when the lock changes (its hash is the stamp).
ensure_venv() {  # $1 = venv dir, $2 = lock file
  local dir=$1 lockfile=$2 stamp
  stamp="$dir/.lock-$(sha256sum "$lockfile" | cut -c1-16)"
  [ -f "$stamp" ] && return 0
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --upgrade pip==25.3
  "$dir/bin/pip" install --quiet --no-deps -r "$lockfile"
  "$dir/bin/pip" check
  touch "$stamp"
}

python_side() {
  ensure_venv "$here/.venv" "$here/requirements/dev.lock"
  # ansible-test's sanity tools are pinned by ansible-test itself (requirements/sanity.lock is
  # their union); they get a venv of their own so they never fight ansible-lint's pins.
  # (ansible-test --venv would bootstrap pip from ci-files.testing.ansible.com: unreachable here.)
  ensure_venv "$here/.venv-sanity" "$here/requirements/sanity.lock"
  VENV="$here/.venv" "$here/scripts/collections.sh"
}

case "$part" in
  python | host | all) ;;
  # The lowest ansible-core meta/runtime.yml claims, for make unit-lowest and sanity-lowest (after python).
  lowest) ensure_venv "$here/.venv-lowest" "$here/requirements/lowest.lock"; exit 0 ;;
  *) echo "bootstrap.sh: unknown part '$part' (python, host, all or lowest)" >&2; exit 2 ;;
esac
if [ "$part" = python ] && python3 -c 'import ensurepip' 2>/dev/null && command -v unzip >/dev/null; then
  python_side
  exit 0
fi

# On a fresh machine the venvs (pip) and the Debian packages (apt) are both mostly downloads: when this Python can
# make venvs without python3-venv, the venvs are built while apt installs (the collections path needs unzip: after).
venvs_pid=""
if python3 -c 'import ensurepip' 2>/dev/null; then
  (ensure_venv "$here/.venv" "$here/requirements/dev.lock" && ensure_venv "$here/.venv-sanity" "$here/requirements/sanity.lock") &
  venvs_pid=$!
fi

need_pkgs=()
for p in docker.io mmdebstrap unzip jq python3-venv prometheus prometheus-node-exporter git perftest chromium fonts-dejavu-core ibsim-utils opensm infiniband-diags openmpi-bin valgrind; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_pkgs[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi
# The Debian prometheus packages start services on install; tests run their own copies.
for svc in prometheus prometheus-node-exporter; do
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done

if [ -n "$venvs_pid" ] && ! wait "$venvs_pid"; then
  echo "bootstrap.sh: building the venvs failed (see above)" >&2
  exit 1
fi
if [ "$part" = host ] || [ "$part" = python ]; then
  python_side
  exit 0
fi

if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd"
  (setsid dockerd >/var/log/ibtune-dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/ibtune-dockerd.log" >&2; exit 1; }
fi

python_side
"$here/scripts/build-images.sh"
