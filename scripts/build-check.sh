#!/usr/bin/env bash
# Build the collection tarball and prove it carries none of the test/lab material.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/dist"
rm -rf "$out"; mkdir -p "$out"
ansible-galaxy collection build --force --output-path "$out" "$root" >/dev/null
tarball=$(ls "$out"/ibtune-fabric-*.tar.gz)
bad=$(tar -tzf "$tarball" | grep -E '^(molecule|tests|bench|scripts|\.venv[^/]*|\.collections|\.cache|requirements|build)/' || true)
if [ -n "$bad" ]; then
  echo "FAIL: $tarball carries files it must not:" >&2; echo "$bad" | head -20 >&2; exit 1
fi
echo "built $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) entries, no molecule/, tests/, bench/"

# Install the artifact with its declared dependencies (galaxy.yml) into an EMPTY collections path and
# syntax-check every playbook against it: a role that calls a collection galaxy.yml does not declare fails
# here. Galaxy is unreachable (--offline): each declared dependency is offered as a local directory, the copy
# the pinned ansible wheel gave .collections (scripts/collections.sh), and ansible-galaxy resolves the
# artifact's dependencies against those alone.
"$root/scripts/collections.sh" >/dev/null
src="$root/.collections/ansible_collections"
reqs="$out/requirements.yml"
echo "collections:" >"$reqs"
echo "  - {name: '$tarball', type: file}" >>"$reqs"
for name in $(python3 -c 'import sys, yaml; print(*(yaml.safe_load(open(sys.argv[1])).get("dependencies") or {}))' "$root/galaxy.yml"); do
  dir="$src/${name%%.*}/${name#*.}"
  if [ ! -f "$dir/MANIFEST.json" ]; then
    echo "FAIL: galaxy.yml depends on $name, which scripts/collections.sh does not provide: add it to 'wanted' there." >&2
    exit 1
  fi
  echo "  - {name: '$dir', type: dir}" >>"$reqs"
done
path="$out/collections"
rm -rf "$path"; mkdir -p "$path"
if ! ANSIBLE_COLLECTIONS_PATH="$path" ansible-galaxy collection install --offline -p "$path" -r "$reqs" >"$out/install.log" 2>&1; then
  echo "FAIL: the artifact does not install with its declared dependencies offline:" >&2; tail -5 "$out/install.log" >&2; exit 1
fi
installed=$(cd "$path/ansible_collections" && ls -d -- */* | tr '\n' ' ')
# Only the installed roles and playbooks count, never this checkout: run from a scratch directory, no
# ansible.cfg, no roles path, only that collections path.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$root/inventories" "$work/"
n=0
for pb in "$path"/ansible_collections/ibtune/fabric/playbooks/*.yml; do
  name=$(basename "$pb" .yml)
  if ! (cd "$work" && env -u ANSIBLE_CONFIG ANSIBLE_COLLECTIONS_PATH="$path" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=False \
      ANSIBLE_ROLES_PATH="$work/none" ansible-playbook -i inventories/example --syntax-check "ibtune.fabric.$name" >"$work/out" 2>&1); then
    echo "FAIL: ibtune.fabric.$name does not load from the installed artifact with only its declared dependencies ($installed):" >&2
    tail -5 "$work/out" >&2; exit 1
  fi
  n=$((n + 1))
done
# The example inventory may name only plugins of what is installed (connection, network_os, become...).
if ! (cd "$work" && env -u ANSIBLE_CONFIG ANSIBLE_COLLECTIONS_PATH="$path" ansible-inventory -i inventories/example --list >"$work/inv.json" 2>"$work/out"); then
  echo "FAIL: inventories/example does not load:" >&2; tail -5 "$work/out" >&2; exit 1
fi
python3 - "$work/inv.json" "$path/ansible_collections" <<'PY'
import json, os, re, sys
inv, base = json.load(open(sys.argv[1])), sys.argv[2]
missing = set()
for host, hvars in inv.get("_meta", {}).get("hostvars", {}).items():
    for key, value in hvars.items():
        m = re.fullmatch(r"([a-z0-9_]+)\.([a-z0-9_]+)\.[a-z0-9_]+", str(value)) if key.startswith("ansible_") else None
        if m and (m.group(1), m.group(2)) != ("ansible", "builtin"):
            if not os.path.isdir(os.path.join(base, m.group(1), m.group(2))):
                missing.add(f"{host}: {key}={value} ({m.group(1)}.{m.group(2)} is not a declared dependency)")
if missing:
    sys.exit("FAIL: inventories/example names plugins of undeclared collections: " + "; ".join(sorted(missing)))
PY
echo "installed into an empty path: $installed; syntax-check of $n playbooks and inventories/example OK"
