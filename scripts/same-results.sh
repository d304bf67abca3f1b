#!/usr/bin/env bash
# Checks that a change left simulation results as they were: runs a fixed set of 26 simulations
# (every policy, space sharing, rounds, power policies with a tariff and an injected boot
# failure, random faults, history estimates) with two hetsched binaries and compares their JSON
# results, wall-clock timings left out. Exit status 0 when every result is identical.
#
#   scripts/same-results.sh [--ignore KEY,...] [--extra "ARGS"] OLD_BINARY NEW_BINARY
#
# --ignore leaves out result fields the new binary adds; --extra appends ARGS to every run
# (e.g. "--restore 0 --checkpoint-save 0"). Build the old binary from the commit before the
# change (e.g. a git worktree) first.
set -euo pipefail
cd "$(dirname "$0")/.."
ignore=""
extra=""
while [[ $# -gt 2 ]]; do
  case "$1" in
    --ignore) ignore="$2"; shift 2 ;;
    --extra) extra="$2"; shift 2 ;;
    *) echo "same-results.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ $# -ne 2 || "$1" == -h || "$1" == --help ]]; then sed -n '2,11p' "$0"; exit 2; fi
for b in "$1" "$2"; do
  [[ -x $b ]] || { echo "same-results.sh: $b is not an executable" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$2" gen-trace --jobs 300 --rate 6 --multi-gpu --seed 7 -o "$work/g.trace" >/dev/null
C=v100=12,p100=12,k80=12
T=$work/g.trace
SEED="--cluster examples/clusters/seed-startup.yaml --trace examples/workloads/seed-day.yaml"
LAB="--cluster examples/clusters/lab-mixed.yaml --trace examples/workloads/small-mixed.yaml"
runs=()
for p in fifo fifo-het priority easy-backfill las las-het srpt-het srpt-het-fair maxmin \
         maxmin-het max-throughput min-makespan min-cost ftf-het; do
  runs+=("$p|--cluster $C --trace $T --policy $p")
done
runs+=("ss-maxmin|--cluster $C --trace $T --policy maxmin-het --space-sharing"
       "ss-fifo|--cluster $C --trace $T --policy fifo-het --space-sharing"
       "ss-srpt|--cluster $C --trace $T --policy srpt-het-fair --space-sharing"
       "rounds|--cluster $C --trace $T --policy maxmin-het --round 360"
       "naive|$SEED --policy fifo --ignore-compat"
       "seed|$SEED"
       "seed-consol|$SEED --power consolidate+cap --tariff 0-7:0.10,7-22:0.25,22-24:0.10"
       "seed-idle|$SEED --power idle-timeout --suspend-time 300 --boot-failure-nodes gpu-nv-02"
       "faults|--cluster $C --trace $T --policy srpt-het-fair --mtbf 20000 --mttr 600 --seed 3"
       "lab|$LAB"
       "lab-hist|$LAB --estimates history --policy easy-backfill"
       "frontier|--cluster examples/clusters/frontier-mixed.yaml --trace examples/workloads/small-mixed.jsonl --power consolidate")
# Results without wall-clock measurements (they differ from run to run).
strip() {
  python3 -c '
import json, sys
ignored = set(filter(None, sys.argv[2].split(",")))
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in ignored and
                not any(s in k for s in ("wall", "elapsed", "decision_", "latency"))}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))' "$1" "$ignore"
}
differ=0
for r in "${runs[@]}"; do
  name=${r%%|*}
  args=${r#*|}
  for side in old new; do
    bin=$1
    [[ $side == new ]] && bin=$2
    # shellcheck disable=SC2086
    if ! "$bin" simulate -q $args $extra --json "$work/$side-$name.json" >"$work/$side-$name.out" 2>&1; then
      echo "$name: the $side binary failed: $(tail -n 1 "$work/$side-$name.out")" >&2
      differ=1
      continue 2
    fi
  done
  if diff <(strip "$work/old-$name.json") <(strip "$work/new-$name.json") >"$work/$name.diff"; then
    echo "same       $name"
  else
    echo "DIFFERENT  $name ($(wc -l <"$work/$name.diff") diff lines)"
    differ=1
  fi
done
exit $differ
