#!/usr/bin/env bash
# Gap of `hetsched plan dag --algo best` and `--algo exact` to the published optima of the
# Standard Task Graph Set (docs/results.md, "DAG planners against STG optima"): the graphs
# rand0000..rand0009 of the 50- and 100-task sets on 2, 4, 8 and 16 identical processors, each
# run with --time-limit LIMIT (default 10 s). Prints one CSV row per run to RUNS.csv (default
# stg-runs.csv) and a Markdown summary per set to stdout.
#
#   scripts/stg-gap.sh STG_DIR [LIMIT] [RUNS.csv]
#
# STG_DIR holds 50/rand000?.stg and 100/rand000?.stg from the STG site (the files are not
# redistributed here: data/dag/stg/README.md). Needs python3 and build/hetsched (or the binary
# named by $HETSCHED). Runs one at a time: up to 160 runs x LIMIT seconds (about 27 minutes at
# 10 s; proved runs end earlier).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || $# -gt 3 || "$1" == -h || "$1" == --help ]]; then sed -n '2,13p' "$0"; exit 2; fi
stg=$1
limit=${2:-10}
runs=${3:-stg-runs.csv}
bin=${HETSCHED:-build/hetsched}
[[ -x $bin ]] || { echo "stg-gap.sh: $bin not found (cmake --build build --target hetsched)" >&2; exit 2; }
for n in 50 100; do
  for i in 0 1 2 3 4 5 6 7 8 9; do
    f=$stg/$n/rand000$i.stg
    [[ -r $f ]] || { echo "stg-gap.sh: $f not found" >&2; exit 2; }
  done
done
echo "graph,processors,algo,makespan,proved_optimal,lower_bound,seconds" >"$runs"
for n in 50 100; do
  for i in 0 1 2 3 4 5 6 7 8 9; do
    for p in 2 4 8 16; do
      for algo in best exact; do
        start=$(date +%s.%N)
        out=$("$bin" plan dag "$stg/$n/rand000$i.stg" --procs "$p" --algo "$algo" \
          --time-limit "$limit" --json)
        end=$(date +%s.%N)
        python3 -c '
import json, sys
j = json.loads(sys.argv[1])
print(",".join([sys.argv[2], sys.argv[3], j["algo"], "%g" % j["makespan"],
                str(j["proved_optimal"]).lower(), "%g" % j["lower_bound"],
                "%.2f" % (float(sys.argv[5]) - float(sys.argv[4]))]))
' "$out" "$n/rand000$i.stg" "$p" "$start" "$end" >>"$runs"
      done
    done
  done
done
python3 - "$runs" data/dag/stg/optima.csv <<'EOF'
import csv, sys
runs = list(csv.DictReader(open(sys.argv[1])))
known = {(r["graph"], r["processors"]): r for r in csv.DictReader(open(sys.argv[2]))}
print("| set | algo | runs | proved optimal | optimum reached | mean gap | max gap | "
      "mean bound gap | mean s | max s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in ("50", "100"):
    for algo in ("best", "exact"):
        rs = [r for r in runs if r["algo"] == algo and r["graph"].startswith(n + "/")]
        gaps, bound_gaps, reached = [], [], 0
        for r in rs:
            k = known[(r["graph"], r["processors"])]
            m, lb = float(r["makespan"]), float(r["lower_bound"])
            # Where no optimum is published, the gap is to the best proved lower bound.
            ref = float(k["optimum"]) if k["optimum"] else max(lb, float(k["lower"]))
            gaps.append(100 * (m / ref - 1))
            reached += k["optimum"] != "" and m == float(k["optimum"])
            bound_gaps.append(100 * (m / lb - 1))
        secs = [float(r["seconds"]) for r in rs]
        proved = sum(r["proved_optimal"] == "true" for r in rs)
        print(f"| {n} tasks | {algo} | {len(rs)} | {proved} | {reached} | "
              f"{sum(gaps) / len(gaps):.2f}% | {max(gaps):.2f}% | "
              f"{sum(bound_gaps) / len(bound_gaps):.2f}% | {sum(secs) / len(secs):.1f} | "
              f"{max(secs):.1f} |")
EOF
