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

# The example inventory's preflight by FQCN, from the scratch directory, against the installed artifact alone: every
# host of the example over the local connection with a fixture sysfs tree of the fabric the example declares (an
# overlay inventory changes only the connection, the interpreter and ibtune_sysfs_root), in check mode.
python3 - "$work" "$root" <<'PY'
import json, subprocess, sys
sys.path.insert(0, sys.argv[2])
import yaml
from tests.lab.sysfs_tree import build_tree
work = sys.argv[1]
inv = json.loads(open(work + "/inv.json").read())
fabric = inv["_meta"]["hostvars"][inv["gpu_nodes"]["hosts"][0]]["ibtune_fabric"]
hosts = {}
for host in inv["_meta"]["hostvars"]:
    devices = {}
    if host in inv["gpu_nodes"]["hosts"]:
        devices = {"mlx5_%d" % i: {"ports": {1: {}}} for i in range(fabric["rails"])}
    build_tree("%s/sys/%s" % (work, host), {"devices": devices})
    hosts[host] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                   "ibtune_sysfs_root": "%s/sys/%s" % (work, host)}
open(work + "/local.yml", "w").write(yaml.safe_dump({"all": {"hosts": hosts}}))
PY
if ! (cd "$work" && env -u ANSIBLE_CONFIG ANSIBLE_COLLECTIONS_PATH="$path" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=False \
    ANSIBLE_ROLES_PATH="$work/none" ansible-playbook -i inventories/example -i local.yml ibtune.fabric.preflight --check \
    -e ibtune_report_dir="$work/reports" >"$work/preflight.log" 2>&1); then
  echo "FAIL: ibtune.fabric.preflight does not pass on the example inventory from the installed artifact:" >&2
  tail -15 "$work/preflight.log" >&2; exit 1
fi
echo "ibtune.fabric.preflight on inventories/example (FQCN, installed artifact, another directory, check mode) OK"

# Every relative link of every Markdown file the artifact ships resolves inside the artifact (a link to tests/ or
# scripts/, which are not shipped, is dead for whoever installed the collection).
unpacked="$work/unpacked"
mkdir -p "$unpacked"
tar -xzf "$tarball" -C "$unpacked"
python3 - "$unpacked" <<'PY'
import os, re, sys
base = sys.argv[1]
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
dead, count = [], 0
for folder, _dirs, files in os.walk(base):
    for name in files:
        if not name.endswith(".md"):
            continue
        path = os.path.join(folder, name)
        text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
        for target in link.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            count += 1
            file_part = target.split("#", 1)[0]
            if not os.path.exists(os.path.normpath(os.path.join(folder, file_part))):
                dead.append("%s: %s" % (os.path.relpath(path, base), target))
if dead:
    sys.exit("FAIL: %d link(s) in the artifact's documents point at files it does not ship:\n  %s"
             % (len(dead), "\n  ".join(dead)))
print("links: %d relative links in the artifact's Markdown files, all resolve inside it" % count)
PY
