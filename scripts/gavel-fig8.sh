#!/usr/bin/env bash
# Reproduces the continuous-arrival experiment of Gavel (Narayanan et al., OSDI 2020, Figure 8)
# with hetsched: cluster v100=36,p100=36,k80=36, Gavel's job mix, rounds of 360 s, no
# preemption overhead, JCT averaged over jobs 4000-5000, several seeds.
#
# Usage: scripts/gavel-fig8.sh [OUT_DIR]
#   RATES="0.4 1 2 3 4 5 6"  SEEDS="0 1 2"  JOBS=7000  MULTI=0|1
#   POLICIES=fifo,fifo-het,las,las-het,srpt-het,default  HETSCHED=build/hetsched
# Writes OUT_DIR/rate-R-seed-S.json (one compare run each) and prints a CSV summary:
#   rate,seed,policy,avg_jct_h,p99_jct_h,jobs_unfinished
set -euo pipefail
OUT=${1:-results/gavel-fig8}
HETSCHED=${HETSCHED:-build/hetsched}
RATES=${RATES:-"0.4 1 2 3 4 5 6"}
SEEDS=${SEEDS:-"0 1 2"}
JOBS=${JOBS:-7000}
MULTI=${MULTI:-0}
POLICIES=${POLICIES:-fifo,fifo-het,las,las-het,srpt-het,default}
mkdir -p "$OUT"
multi_flag=""
[[ "$MULTI" == 1 ]] && multi_flag="--multi-gpu"
echo "rate,seed,policy,avg_jct_h,p99_jct_h,jobs_unfinished"
for rate in $RATES; do
  for seed in $SEEDS; do
    trace="$OUT/rate-$rate-seed-$seed.trace"
    "$HETSCHED" gen-trace --rate "$rate" --jobs "$JOBS" --seed "$seed" $multi_flag -o "$trace"
    "$HETSCHED" compare --cluster v100=36,p100=36,k80=36 --trace "$trace" \
      --policies "$POLICIES" --round 360 --restore 0 --measure-jobs 4000-5000 --quiet \
      --json "$OUT/rate-$rate-seed-$seed.json" >/dev/null
    python3 - "$OUT/rate-$rate-seed-$seed.json" "$rate" "$seed" <<'PY'
import json, sys
path, rate, seed = sys.argv[1:4]
for r in json.load(open(path)):
    print(f"{rate},{seed},{r['policy']},{r['avg_jct_s']/3600:.3f},{r['p99_jct_s']/3600:.3f},"
          f"{r['jobs_unfinished']}")
PY
    rm -f "$trace"
  done
done
