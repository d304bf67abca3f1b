#!/usr/bin/env bash
# The evidence of docs/results.md ("The cheapest mix against single-type baselines"): the
# serving simulation under hetsched's cheapest mix, under `single:TYPE` for every device type of
# examples/clusters/seed-startup.yaml, and under static-peak, on four workloads:
#
#   seed-day      examples/workloads/seed-day-serving.yaml (three services and the training day)
#   bursty-day    examples/workloads/serving-azure-traces.yaml (the same services, code bursty)
#   window-70b    a 20-minute window of Azure's conversation trace (its minutes 38 to 58, at the
#   window-13b    speed it was recorded) served by one service, llama-70b or llama-13b, on CUDA,
#                 ROCm or CANN, SLO TTFT 2 s and TPOT 100 ms at p99, books closed after 1,200 s
#
#   scripts/serving-baselines.sh OUT_DIR [WORKLOAD ...]
#
# WORKLOADs: any of the four names (default: all). Writes OUT_DIR/WORKLOAD-MODE.json (simulate's
# --json) or OUT_DIR/WORKLOAD-MODE.err (why a mode cannot serve the workload) and prints one
# table per workload: requests within SLO, serving cost and energy, plans that left forecast
# load without room, plans that left forecast headroom uncovered because only costlier types
# had room for it (serving.plans.headroom_left), replicas started, and how hetsched's plans
# compared with the cheapest single type covering the same forecast. HETSCHED names the binary (default build/hetsched).
# Paths in the refusals are printed relative to the repository root, and as OUT_DIR/... for the
# files written there, so that the output reads the same from any checkout.
set -euo pipefail
out=${1:?usage: serving-baselines.sh OUT_DIR [WORKLOAD ...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HETSCHED:-$root/build/hetsched}
[[ -x $bin ]] || { echo "serving-baselines.sh: $bin is not an executable" >&2; exit 2; }
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(seed-day bursty-day window-70b window-13b)
for w in "${workloads[@]}"; do
  case "$w" in
    seed-day | bursty-day | window-70b | window-13b) ;;
    *) echo "serving-baselines.sh: unknown workload '$w' (expected seed-day, bursty-day," \
         "window-70b or window-13b)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
cluster=$root/examples/clusters/seed-startup.yaml
types=(a100-80g ascend-910b epyc-7763 mi250x xeon-8380)

window_trace() {
  [[ -f $out/conv-window.csv ]] && return
  "$root/scripts/replay-serving-trace" \
    --trace "$root/data/inference/azure-llm-2023/AzureLLMInferenceTrace_conv.csv" \
    --speedup 1 --skip 38 --minutes 20 --compressed-trace "$out/conv-window.csv" >/dev/null
}

window_workload() {  # MODEL FILE
  cat >"$2" <<EOF
jobs:
  - name: chat
    kind: service
    model: $1
    stacks: ["cuda>=12.0", "rocm>=6.0", cann]
    slo: {ttft: 2s, tpot: 100ms, percentile: 99}
    requests: conv-window.csv
EOF
}

for w in "${workloads[@]}"; do
  args=()
  case "$w" in
    seed-day) args=(--trace "$root/examples/workloads/seed-day-serving.yaml") ;;
    bursty-day) args=(--trace "$root/examples/workloads/serving-azure-traces.yaml") ;;
    window-70b | window-13b)
      window_trace
      window_workload "llama-${w#window-}" "$out/$w.yaml"
      args=(--trace "$out/$w.yaml" --serving-horizon 1200) ;;
  esac
  for mode in hetsched "${types[@]/#/single:}" static-peak; do
    rm -f "$out/$w-$mode.json" "$out/$w-$mode.err"
    if ! "$bin" simulate --cluster "$cluster" "${args[@]}" --serving "$mode" --quiet \
        --json "$out/$w-$mode.json" >/dev/null 2>"$out/$w-$mode.err"; then
      rm -f "$out/$w-$mode.json"
    else
      rm -f "$out/$w-$mode.err"
    fi
  done
done

python3 - "$root" "$out" "${workloads[@]}" <<'PY'
import json, os, sys
root, out, workloads = sys.argv[1], sys.argv[2], sys.argv[3:]


def relative(message):
    """The message with this checkout's and OUT_DIR's absolute paths taken out."""
    return message.replace(out + "/", "OUT_DIR/").replace(root + "/", "")


modes = ["hetsched"] + ["single:" + t for t in
                        ("a100-80g", "ascend-910b", "epyc-7763", "mi250x", "xeon-8380")] + ["static-peak"]
for w in workloads:
    print(f"\n{w}")
    print("| serving | requests within SLO | serving cost USD | serving energy kWh | plans with forecast load without room | plans with headroom left | replicas started |")
    print("|---|---|---|---|---|---|---|")
    refused = []
    for m in modes:
        path = os.path.join(out, f"{w}-{m}.json")
        if not os.path.exists(path):
            err = open(os.path.join(out, f"{w}-{m}.err")).read().strip().splitlines()
            refused.append((m, relative(err[-1]) if err else "failed"))
            continue
        j = json.load(open(path))
        sv = j["serving"]
        no_room = len({n.split(":")[0] for n in sv["notes"] if "find no room" in n})
        started = sum(s["replicas_started"] for s in sv["services"])
        print(f"| {m} | {100 * j['slo_attainment']:.3f} % ({sv['requests'] and sum(s['within_slo'] for s in sv['services'])} of {sv['requests']}) "
              f"| {j['serving_cost_usd']:,.2f} | {j['serving_energy_kwh']:,.1f} | {no_room} of {sv['plans']['solved']} "
              f"| {sv['plans']['headroom_left']} | {started} |")
    for m, why in refused:
        print(f"refused {m}: {why}")
    p = json.load(open(os.path.join(out, f"{w}-hetsched.json")))["serving"]["plans"]
    ratio = p["mix_usd_per_hour"] / p["single_type_usd_per_hour"] if p["single_type_usd_per_hour"] else 1
    print(f"hetsched's plans: {p['solved']}; a single type covered the forecast in "
          f"{p['single_type_covers']}: the plan cost {ratio:.3f}x the cheapest such type's "
          f"(summed), less in {p['mix_cheaper']}, that type's plan applied in "
          f"{p['single_type_kept']} (the mix saved under 2 %)")
PY
