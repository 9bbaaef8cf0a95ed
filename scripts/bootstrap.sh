#!/usr/bin/env bash
# Everything `make test` and `make demo` need on a fresh Debian 12 machine, as root.
# Every step is skipped when its result is already in place.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

need_pkgs=()
for p in docker.io mmdebstrap unzip python3-venv prometheus prometheus-node-exporter git perftest; do
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

if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd"
  (setsid dockerd >/var/log/ibtune-dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/ibtune-dockerd.log" >&2; exit 1; }
fi

venv="$here/.venv"
lock="$here/requirements/dev.lock"
stamp="$venv/.lock-$(sha256sum "$lock" | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip==25.3
  "$venv/bin/pip" install --quiet --no-deps -r "$lock"
  "$venv/bin/pip" check
  touch "$stamp"
fi

# ansible-test's sanity tools are pinned by ansible-test itself (requirements/sanity.lock is
# their union); they get a venv of their own so they never fight ansible-lint's pins.
# (ansible-test --venv would bootstrap pip from ci-files.testing.ansible.com: unreachable here.)
svenv="$here/.venv-sanity"
slock="$here/requirements/sanity.lock"
sstamp="$svenv/.lock-$(sha256sum "$slock" | cut -c1-16)"
if [ ! -f "$sstamp" ]; then
  [ -x "$svenv/bin/python" ] || python3 -m venv "$svenv"
  "$svenv/bin/pip" install --quiet --upgrade pip==25.3
  "$svenv/bin/pip" install --quiet --no-deps -r "$slock"
  touch "$sstamp"
fi

VENV="$venv" "$here/scripts/collections.sh"
"$here/scripts/build-images.sh"
