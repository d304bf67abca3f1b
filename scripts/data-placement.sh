#!/usr/bin/env bash
# Topology- and data-aware placement against agnostic placement where data and links matter
# (docs/results.md, "Data and shared links"): examples/clusters/data-racks.yaml, a workload of
# 150 training jobs drawn with awk from a seed (gangs of 1-16 A100s, inputs of 100 GB to 2 TB
# on one of two storage servers, gradient all-reduce every step), three seeds.
# Usage: scripts/data-placement.sh [HETSCHED] (default build/hetsched). Prints one row per
# seed and placement: average JCT, p99 JCT, bytes over the spine, mean time to read the input.
set -euo pipefail
hs=${1:-build/hetsched}
cluster=examples/clusters/data-racks.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One job per line (JSON lines, docs/workload-format.md). Arrivals: exponential gaps, mean
# 4 minutes. Gang sizes 1/2/4/8/16 with probability .3/.2/.2/.2/.1; run time alone 20 min to
# 3 h (log-uniform); 1 step/s per gang alone; 1-8 GiB exchanged per worker per step.
workload() {
  awk -v seed="$1" 'BEGIN {
    srand(seed); t = 0
    for (i = 0; i < 150; i++) {
      u = rand(); g = u < .3 ? 1 : u < .5 ? 2 : u < .7 ? 4 : u < .9 ? 8 : 16
      dur = 1200 * exp(rand() * log(9))
      data = int(100 + rand() * 1900)
      loc = rand() < .5 ? "store-a" : "store-b"
      sync = 1 + int(rand() * 8)
      printf "{\"name\": \"job-%d\", \"arrival\": %d, \"gang_size\": %d, \"stacks\": [\"cuda>=11.8\"], ", i, t, g
      printf "\"throughput\": {\"a100-80g\": 1}, \"work\": %d, ", int(dur)
      printf "\"sync_bytes_per_step\": \"%dGiB\", \"data\": {\"size\": \"%dGB\", \"location\": \"%s\"}}\n", sync, data, loc
      t += int(-240 * log(1 - rand()))
    }
  }'
}

printf '%-5s %-9s %12s %12s %14s %12s\n' seed placement avg_jct_h p99_jct_h spine_TB avg_read_s
for seed in 1 2 3; do
  workload "$seed" >"$tmp/w$seed.jsonl"
  for placement in topology agnostic; do
    "$hs" simulate --cluster "$cluster" --trace "$tmp/w$seed.jsonl" --policy fifo \
      --placement "$placement" --json "$tmp/r.json" --quiet >/dev/null
    awk -v s="$seed" -v p="$placement" -F'[:,]' '
      /"avg_jct_s"/ {a = $2} /"p99_jct_s"/ {q = $2} /"spine_bytes"/ {b = $2} /"avg_staging_s"/ {r = $2}
      END {printf "%-5s %-9s %12.2f %12.2f %14.1f %12.0f\n", s, p, a / 3600, q / 3600, b / 1e12, r}' \
      "$tmp/r.json"
  done
done
