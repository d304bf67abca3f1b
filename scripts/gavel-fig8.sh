#!/usr/bin/env bash
# Reruns Gavel's Figure 8 continuous experiment (Narayanan et al., OSDI 2020) with hetsched:
# 36 V100 + 36 P100 + 36 K80, rounds of 360 s, no preemption cost (as Gavel's simulator),
# average JCT of jobs 4000-4999, arrivals continuing until they are all done (the trace holds
# enough jobs; each row says whether arrivals ran out first). Prints one markdown table row per
# (policy, estimates, rate): avg JCT per seed and their mean, in hours, and the means of
# preemptions per job and of the share of capacity preemptions took.
#
#   scripts/gavel-fig8.sh [--multi-gpu] [--space-sharing] [--rates "2 4.4 5.6 6"]
#       [--seeds "0 1 2"] [--jobs 12000] [--policies "default las-het"] [--estimates "none oracle"]
#       [--elastic-range 1:8] [--restore 0] [--checkpoint-save 0] [--extra "ARGS"]
#       [--cluster v100=36,p100=36,k80=36]
#
# --elastic-range makes every job elastic (simulate --elastic-range); --restore and
# --checkpoint-save set the preemption costs (Gavel's simulator: 0, the default here); --extra
# passes more simulate flags (e.g. "--preempt-quantum 1800"); --cluster another cluster than
# Gavel's (e.g. one device fewer, to see how near capacity a rate runs).
#
# Needs build/hetsched (make build), or the binary in $HETSCHED_BIN. Each run takes seconds (LP
# policies up to a minute, ftf-het a few minutes under load).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HETSCHED_BIN:-./build/hetsched}
rates="2 4.4 5.6 6"
seeds="0 1 2"
jobs=12000
policies="default srpt-het easy-backfill fifo fifo-het las las-het maxmin-het"
estimates="none lognormal:1 history oracle"
multi=""
sharing=""
elastic="--no-elastic"
restore=0
save=0
extra=""
cluster="v100=36,p100=36,k80=36"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --multi-gpu) multi="--multi-gpu"; shift ;;
    --space-sharing) sharing="--space-sharing"; shift ;;
    --rates) rates="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --policies) policies="$2"; shift 2 ;;
    --estimates) estimates="$2"; shift 2 ;;
    --elastic-range) elastic="--elastic-range $2"; shift 2 ;;
    --restore) restore="$2"; shift 2 ;;
    --checkpoint-save) save="$2"; shift 2 ;;
    --extra) extra="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "gavel-fig8.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "gavel-fig8.sh: $bin not found: run 'make build' first" >&2; exit 2; }
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT

echo "| policy | estimates | jobs/h | avg JCT h per seed | mean | preemptions/job | preemption share | arrivals ran out |"
echo "|---|---|---|---|---|---|---|---|"
for policy in $policies; do
  for est in $estimates; do
    for rate in $rates; do
      per_seed=""; sum=0; n=0; ran_out=""; preempt=0; share=0
      for seed in $seeds; do
        trace="$traces/r$rate-s$seed$multi.trace"
        [[ -f $trace ]] || $bin gen-trace --rate "$rate" --jobs "$jobs" --seed "$seed" $multi -o "$trace"
        out=$($bin simulate --cluster "$cluster" --trace "$trace" --policy "$policy" \
              --round 360 --restore "$restore" --checkpoint-save "$save" \
              --measure-jobs 4000-5000 --estimates "$est" $sharing $elastic $extra -q)
        jct=$(awk '$1 == "avg_jct_h" {print $2}' <<<"$out")
        early=$(awk '$1 == "arrivals_ended_early" {print $2}' <<<"$out")
        preempt=$(awk -v a="$preempt" '$1 == "preemptions_per_job" {print a + $2}' <<<"$out")
        share=$(awk -v a="$share" '$1 == "preemption_share" {print a + $2}' <<<"$out")
        per_seed="$per_seed${per_seed:+ / }$jct"
        sum=$(awk -v a="$sum" -v b="$jct" 'BEGIN {print a + b}')
        n=$((n + 1))
        [[ $early == yes ]] && ran_out="$ran_out${ran_out:+, }seed $seed"
      done
      mean=$(awk -v a="$sum" -v n="$n" 'BEGIN {printf "%.2f", a / n}')
      preempt=$(awk -v a="$preempt" -v n="$n" 'BEGIN {printf "%.2f", a / n}')
      share=$(awk -v a="$share" -v n="$n" 'BEGIN {printf "%.1f %%", 100 * a / n}')
      echo "| $policy | $est | $rate | $per_seed | $mean | $preempt | $share | ${ran_out:-no} |"
    done
  done
done
