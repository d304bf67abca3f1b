#!/usr/bin/env bash
# A day of four teams on the seed start-up cluster (examples/workloads/teams-day.yaml with the
# tenants of examples/configs/teams-day.yaml): vision (CUDA-only), llm (CUDA and ROCm),
# inference (pinned real-time endpoints, evaluations, batch inference) and research (two bursts
# of 64 jobs). Prints one markdown row per (policy, accounting): each team's average JCT,
# Jain's index over normalized shares against the weights, the worst finish-time fairness rho
# (Themis) and whose it is, the total normalized throughput (A100-device-hours) and the longest
# reclaim wait (docs/simulator.md, "Tenants").
#
#   scripts/tenants-day.sh [--runs "default:measured fifo:billing fifo:kueue ..."]
#
# accounting: measured (each job's speed), billing (Slurm-style static weights per type:
# A100 1, MI250X 1, Ascend 910B 0.8) or kueue (devices beyond the quota). Simulate's own
# preemption costs. Needs build/hetsched (or $HETSCHED_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HETSCHED_BIN:-./build/hetsched}
runs="default:measured fifo:billing fifo:kueue default:billing default:kueue"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "tenants-day.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "tenants-day.sh: $bin not found: run 'make build' first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| policy | accounting | vision JCT (h) | llm JCT (h) | inference JCT (h) | research JCT (h) | Jain | worst rho | A100-device-h | longest reclaim wait (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for run in $runs; do
  policy=${run%%:*}
  accounting=${run#*:}
  case "$accounting" in
    measured) extra="" ;;
    billing) extra=", billing: {a100-80g: 1, mi250x: 1, ascend-910b: 0.8}" ;;
    kueue) extra=", accounting: kueue" ;;
    *) echo "tenants-day.sh: unknown accounting '$accounting'" >&2; exit 2 ;;
  esac
  sed "s/^fair_share: {\(.*\)}$/fair_share: {\1$extra}/" examples/configs/teams-day.yaml \
    > "$work/teams.yaml"
  $bin simulate --cluster examples/clusters/seed-startup.yaml \
    --trace examples/workloads/teams-day.yaml --config "$work/teams.yaml" --policy "$policy" \
    --json "$work/r.json" -q > /dev/null
  jq -r --arg p "$policy" --arg a "$accounting" '
    def h: . / 3600 * 100 | round / 100;
    def r2: . * 1000 | round / 1000;
    .tenants as $t
    | ($t | to_entries | max_by(.value.rho)) as $worst
    | "| \($p) | \($a) | \($t.vision.avg_jct_s | h) | \($t.llm.avg_jct_s | h) | \($t.inference.avg_jct_s | h) | \($t.research.avg_jct_s | h) | \(.tenant_jain_index | r2) | \(.tenant_worst_rho | r2) (\($worst.key)) | \([$t[] | .normalized_device_hours] | add | round) | \([$t[] | .reclaim_wait_s] | max | round) |"' \
    "$work/r.json"
done
