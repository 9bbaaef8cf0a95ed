#!/usr/bin/env bash
# Write a lab inventory of N containers outside inventories/lab (so benches never collide with
# Molecule's or the demo's lab), sharing the lab's group_vars:
#   tests/lab/inventory.sh DIR PREFIX COUNT NETWORK [with_sm]
# Hosts are PREFIX-node1..COUNT on docker network NETWORK; with_sm makes node1 the subnet manager.
set -euo pipefail
dir=$1 prefix=$2 count=$3 network=$4 with_sm=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
ln -sfn "$root/inventories/lab/group_vars" "$dir/group_vars"
{
  echo "all:"
  echo "  children:"
  echo "    lab_nodes:"
  echo "      children:"
  echo "        gpu_nodes:"
  echo "          hosts:"
  for i in $(seq 1 "$count"); do echo "            $prefix-node$i: {lab_network: $network}"; done
  if [ "$with_sm" = with_sm ]; then
    echo "        subnet_managers:"
    echo "          hosts:"
    echo "            $prefix-node1:"
  fi
} >"$dir/hosts.yml"
