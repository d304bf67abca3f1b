#!/usr/bin/env bash
# Borrow and reclaim on the seed start-up cluster (examples/clusters/seed-startup.yaml: 32 A100,
# 32 MI250X, 8 Ascend 910B). Three teams: vision (CUDA-only, guaranteed 16 A100) is idle for
# the first 6 h and lends everything; research (CUDA-only, no quota) submits 48 jobs of 10 h at
# midnight and borrows all 32 A100; llm (CUDA and ROCm, guaranteed 16 MI250X) runs 12 jobs of
# 10 h. At 6 h plus a minute (between two full decisions) vision submits 16 jobs of 2 h.
# Prints one markdown row per policy: how long vision waited with jobs queued inside its
# guarantee (reclaim_wait_s) against the bound (one preempt interval plus a checkpoint write),
# research's preempted runs and completed jobs, and the work lost, checkpointed and restored.
#
#   scripts/tenants-reclaim.sh [--policies "default las-het fifo-het fifo"]
#
# Simulate's own preemption costs: 30 s checkpoint write, 60 s restore, 5 min preempt
# interval. Needs build/hetsched (or $HETSCHED_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HETSCHED_BIN:-./build/hetsched}
policies="default las-het fifo-het fifo"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --policies) policies="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "tenants-reclaim.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "tenants-reclaim.sh: $bin not found: run 'make build' first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/teams.yaml" <<'YAML'
tenants:
  - {name: vision, quota: {a100-80g: 16}}
  - {name: llm, quota: {mi250x: 16}}
  - {name: research}
fair_share: {reference_type: a100-80g}
YAML
cat > "$work/jobs.yaml" <<'YAML'
defaults: {kind: training, preemptible: true, reference_device: a100-80g}
jobs:
  - {name: "research-{i}", tenant: research, stacks: [cuda], throughput: {a100-80g: 1},
     duration: 10h, repeat: 48, every: 0}
  - {name: "llm-{i}", tenant: llm, stacks: [cuda, rocm], portable_checkpoint: true,
     throughput: {a100-80g: 1, mi250x: 1.1}, duration: 10h, repeat: 12, every: 0}
  - {name: "vision-{i}", tenant: vision, stacks: [cuda], throughput: {a100-80g: 1},
     duration: 2h, arrival: 361m, repeat: 16, every: 0}
YAML
echo "| policy | vision reclaim wait (s) | bound (s) | vision avg JCT (h) | research preempted runs | research jobs done | lost device-h | checkpoint device-h | restore device-h |"
echo "|---|---|---|---|---|---|---|---|---|"
for policy in $policies; do
  $bin simulate --cluster examples/clusters/seed-startup.yaml --trace "$work/jobs.yaml" \
    --config "$work/teams.yaml" --policy "$policy" --json "$work/r.json" -q > /dev/null
  # The bound: one preempt interval (300 s) plus the borrowers' checkpoint writes (30 s).
  jq -r --arg p "$policy" '
    .tenants as $t
    | "| \($p) | \($t.vision.reclaim_wait_s | round) | 330 | \($t.vision.avg_jct_s / 3600 * 1000 | round / 1000) | \($t.research.preempted_runs) | \($t.research.jobs_completed) | \(.lost_device_hours) | \(.checkpoint_save_device_hours * 100 | round / 100) | \(.restore_device_hours * 100 | round / 100) |"' \
    "$work/r.json"
done
