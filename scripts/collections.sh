#!/usr/bin/env bash
# Lay out .collections/ansible_collections: this repo as ibtune.fabric (symlink) and the
# few collections we depend on, taken from the pinned PyPI `ansible` wheel because
# Ansible Galaxy is unreachable here. Idempotent: a stamp records the wheel used.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="${VENV:-$here/.venv}"
dest="$here/.collections/ansible_collections"
wheel_version="12.3.0"
wheel_sha256="cd156f82fa87f7a899212b0efa9f7ca3a24d609212de9f78428a572eb01e5414"
wanted=(community/docker community/general ansible/posix ansible/netcommon ansible/utils)
stamp="$dest/.from-ansible-$wheel_version"

mkdir -p "$dest/ibtune"
ln -sfn "$here" "$dest/ibtune/fabric"
[ -f "$stamp" ] && exit 0

cache="$here/.cache/wheels"
mkdir -p "$cache"
whl="$cache/ansible-$wheel_version-py3-none-any.whl"
if [ ! -f "$whl" ]; then
  "$venv/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$cache" "ansible==$wheel_version"
fi
echo "$wheel_sha256  $whl" | sha256sum --check --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
patterns=()
for c in "${wanted[@]}"; do patterns+=("ansible_collections/$c/*"); done
unzip -q "$whl" "${patterns[@]}" -d "$tmp"
for c in "${wanted[@]}"; do
  rm -rf "${dest:?}/$c"
  mkdir -p "$dest/$(dirname "$c")"
  mv "$tmp/ansible_collections/$c" "$dest/$c"
done
touch "$stamp"
echo "collections from ansible==$wheel_version: ${wanted[*]}"
