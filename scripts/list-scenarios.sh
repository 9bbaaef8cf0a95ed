#!/usr/bin/env bash
# Molecule scenarios in run order: those named in molecule/ORDER first, then any other.
root=$(cd "$(dirname "$0")/.." && pwd)
order=()
[ -f "$root/molecule/ORDER" ] && mapfile -t order < <(grep -v '^#' "$root/molecule/ORDER" | sed '/^$/d')
all=()
for d in "$root"/molecule/*/molecule.yml; do [ -e "$d" ] && all+=("$(basename "$(dirname "$d")")"); done
out=()
for s in "${order[@]}"; do [ -f "$root/molecule/$s/molecule.yml" ] && out+=("$s"); done
for s in "${all[@]}"; do [[ " ${out[*]} " == *" $s "* ]] || out+=("$s"); done
echo "${out[@]}"
