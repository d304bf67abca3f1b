#!/usr/bin/env bash
# Three tenants weighted 1:2:3 share 3 K80 + 3 P100 + 3 V100 under saturating single-GPU load
# (the shape of Gavel's hierarchical experiment): each tenant submits a third of a Gavel trace
# (`hetsched gen-trace`, in turn: job 0 to t1, job 1 to t2, ...), arrivals far above what the
# cluster serves, and the run stops while every tenant still has work queued. Prints one
# markdown row per (policy, preemption cost, seed): each tenant's share of normalized throughput
# (V100-device-hours) against its target 1/6, 2/6, 3/6, and the total normalized throughput.
#
#   scripts/tenants-123.sh [--policies "default las-het fifo-het"] [--seeds "0 1 2"]
#       [--rate 6] [--jobs 600] [--until 100h] [--costs "0 default"] [--billing | --kueue]
#
# --costs: "0" runs Gavel's free preemption (--restore 0 --checkpoint-save 0), "default"
# simulate's own costs (60 s restore, 30 s checkpoint). --billing counts usage the Slurm way,
# device-seconds times a static weight per type (K80 0.25, P100 0.6, V100 1), instead of
# each job's measured speed. --kueue counts it the Kueue way (`accounting: kueue`): devices
# held beyond the quota, summed over types, against the weight, with no memory and no speeds.
# Needs build/hetsched (or $HETSCHED_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HETSCHED_BIN:-./build/hetsched}
policies="default las-het fifo-het"
seeds="0 1 2"
rate=6
jobs=600
until=100h
costs="0 default"
accounting=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --policies) policies="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --until) until="$2"; shift 2 ;;
    --costs) costs="$2"; shift 2 ;;
    --billing) accounting=", billing: {k80: 0.25, p100: 0.6, v100: 1}"; shift ;;
    --kueue) accounting=", accounting: kueue"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "tenants-123.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "tenants-123.sh: $bin not found: run 'make build' first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tenants.yaml" <<YAML
tenants:
  - {name: t1, weight: 1}
  - {name: t2, weight: 2}
  - {name: t3, weight: 3}
fair_share: {reference_type: v100, half_life: 1d$accounting}
YAML
echo "| policy | preemption cost | seed | t1 share (1/6 = 0.167) | t2 (2/6 = 0.333) | t3 (3/6 = 0.500) | worst error | V100-device-h |"
echo "|---|---|---|---|---|---|---|---|"
for seed in $seeds; do
  $bin gen-trace --rate "$rate" --jobs "$jobs" --seed "$seed" -o "$work/s$seed.trace"
  # Gavel's 10 columns: job_type 1, total_steps 6, scale_factor 7, arrival 10.
  awk -F'\t' '{printf "{\"name\":\"job-%d\",\"job_type\":\"%s\",\"gang_size\":%d,\"stacks\":[\"cuda\"],\"work\":%s,\"arrival\":%s,\"tenant\":\"t%d\"}\n", NR-1, $1, $7, $6, $10, (NR-1)%3+1}' \
    "$work/s$seed.trace" > "$work/s$seed.jsonl"
done
for policy in $policies; do
  for cost in $costs; do
    cost_flags=""
    [[ $cost == 0 ]] && cost_flags="--restore 0 --checkpoint-save 0"
    for seed in $seeds; do
      $bin simulate --cluster v100=3,p100=3,k80=3 --trace "$work/s$seed.jsonl" \
        --config "$work/tenants.yaml" --policy "$policy" --round 360 --until "$until" \
        $cost_flags --json "$work/r.json" -q > /dev/null
      jq -r --arg p "$policy" --arg c "$cost" --arg s "$seed" '
        .tenants as $t
        | [1, 2, 3] as $w
        | [range(3) | ($t["t\(. + 1)"].normalized_share)] as $share
        | ([range(3) | (($share[.] - $w[.] / 6) / ($w[.] / 6) | fabs)] | max) as $worst
        | ([$t[] | .normalized_device_hours] | add) as $total
        | "| \($p) | \($c) | \($s) | \($share[0] * 1000 | round / 1000) | \($share[1] * 1000 | round / 1000) | \($share[2] * 1000 | round / 1000) | \($worst * 1000 | round / 10) % | \($total | round) |"' \
        "$work/r.json"
    done
  done
done
