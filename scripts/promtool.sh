#!/usr/bin/env bash
# promtool check + unit-test every Prometheus rule file the collection ships.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
rules=("$root"/roles/*/files/prometheus/*.rules.yml)
tests=("$root"/tests/promtool/*_test.yml)
if [ ${#rules[@]} -eq 0 ]; then echo "promtool: no rule files yet"; exit 0; fi
promtool check rules "${rules[@]}"
[ ${#tests[@]} -gt 0 ] && (cd "$root/tests/promtool" && promtool test rules "${tests[@]}")
