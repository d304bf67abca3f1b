#!/usr/bin/env bash
# How much load ONE replica carries within its SLO in the serving simulation itself: the
# evidence behind docs/results.md ("What one replica sustains"). A one-node cluster holds the
# devices of exactly one replica (TYPE, DEVICES of them, with the node's island as in
# examples/clusters/seed-startup.yaml), so the autoscaler, whatever it forecasts, runs one
# replica all along. The service is one of the seed day's three (examples/workloads/
# seed-day-serving.yaml: model, SLO, tokens; chat replays Azure's conversation trace
# time-warped to a constant rate, as the seed day warps it to its curve; code and summarise
# are Poisson arrivals with fixed token counts), at each RATE in turn for HORIZON seconds.
# Prints, per rate: requests, share within the SLO, p99 TTFT and TPOT (s), and the replica's
# rating as the autoscaler saw it (the last note "above their rating", when the load exceeded it).
#
#   scripts/serving-replica-rate.sh OUT_DIR SERVICE TYPE DEVICES [--poisson] RATE ...
#
# SERVICE: chat, code or summarise; TYPE: mi250x, a100-80g or ascend-910b; DEVICES: 1 to 8
# (the replica's tp is the autoscaler's cheapest choice within them). --poisson: chat with
# Poisson arrivals and its trace's mean tokens (1,155 prompt, 211 output) instead of the
# trace. HORIZON (default 43200) and HETSCHED (default build/hetsched) from the environment.
set -euo pipefail
usage="usage: serving-replica-rate.sh OUT_DIR SERVICE TYPE DEVICES [--poisson] RATE ..."
out=${1:?$usage}
service=${2:?$usage}
type=${3:?$usage}
devices=${4:?$usage}
shift 4
poisson=0
if [[ ${1:-} == --poisson ]]; then
  poisson=1
  shift
fi
[[ $# -gt 0 ]] || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HETSCHED:-$root/build/hetsched}
horizon=${HORIZON:-43200}
[[ -x $bin ]] || { echo "serving-replica-rate.sh: $bin is not an executable" >&2; exit 2; }
[[ $devices =~ ^[1-8]$ ]] || { echo "serving-replica-rate.sh: DEVICES must be 1 to 8, not '$devices'" >&2; exit 2; }
positive() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v x="$1" 'BEGIN { exit !(x > 0) }'; }
positive "$horizon" ||
  { echo "serving-replica-rate.sh: HORIZON must be a positive number of seconds, not '$horizon'" >&2; exit 2; }
for rate in "$@"; do
  positive "$rate" ||
    { echo "serving-replica-rate.sh: RATE must be a positive number, not '$rate'" >&2; exit 2; }
done
# The island of each type's nodes in examples/clusters/seed-startup.yaml.
case "$type" in
  mi250x) island="{kind: xgmi, members: all, bandwidth: 100GB/s, latency: 2us}" ;;
  a100-80g) island="{kind: nvlink, members: all, bandwidth: 300GB/s, latency: 2us}" ;;
  ascend-910b) island="{kind: hccs, members: all, bandwidth: 56GB/s, latency: 3us}" ;;
  *) echo "serving-replica-rate.sh: unknown TYPE '$type' (expected mi250x, a100-80g or ascend-910b)" >&2
     exit 2 ;;
esac
# The seed day's services (examples/workloads/seed-day-serving.yaml), less their rate curves.
trace=$root/data/inference/azure-llm-2023/AzureLLMInferenceTrace_conv.csv
case "$service" in
  chat)
    spec="model: llama-70b
    stacks: [\"cuda>=12.0\", \"rocm>=6.0\"]
    slo: {ttft: 2s, tpot: 100ms, percentile: 99}"
    if [[ $poisson == 1 ]]; then
      tokens="tokens: {input: 1155, output: 211}"
    else
      tokens="requests: $trace"
    fi ;;
  code)
    spec="model: llama-13b
    stacks: [\"cuda>=12.0\", \"rocm>=6.0\", cann]
    slo: {ttft: 1s, tpot: 50ms, percentile: 99}"
    tokens="tokens: {input: 2048, output: 28}" ;;
  summarise)
    spec="model: llama-7b
    stacks: [\"cuda>=12.0\", \"rocm>=6.0\", cann, x86_64]
    slo: {ttft: 2s, tpot: 150ms, percentile: 99}"
    tokens="tokens: {input: 1500, output: 200}" ;;
  *) echo "serving-replica-rate.sh: unknown SERVICE '$service' (expected chat, code or summarise)" >&2
     exit 2 ;;
esac
[[ $poisson == 0 || $service == chat ]] ||
  { echo "serving-replica-rate.sh: --poisson is for chat (the others are Poisson already)" >&2; exit 2; }
mkdir -p "$out"
cat >"$out/cluster.yaml" <<EOF
name: one-replica
racks:
  - {name: rack, uplink_bandwidth: 1600Gb/s, latency: 0.5us}
nodes:
  - name: node-01
    rack: rack
    devices:
      - {type: $type, count: $devices}
    islands:
      - $island
    host_link: {bandwidth: 31.5GB/s, latency: 1.5us}
    nic: {bandwidth: 200Gb/s, latency: 1us}
    host_memory: 1TiB
    cores: 64
EOF
echo "$service on one $type replica (at most $devices devices), ${horizon} s per rate"
echo "| rate requests/s | requests | within SLO | p99 TTFT s | p99 TPOT s | rating (last note) |"
echo "|---|---|---|---|---|---|"
for rate in "$@"; do
  cat >"$out/workload-$rate.yaml" <<EOF
jobs:
  - name: $service
    kind: service
    $spec
    rate: [[0h, $rate]]
    $tokens
EOF
  "$bin" simulate --cluster "$out/cluster.yaml" --trace "$out/workload-$rate.yaml" \
    --serving-horizon "$horizon" --quiet --json "$out/$rate.json" >/dev/null
  python3 - "$out/$rate.json" "$rate" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
s = j["serving"]["services"][0]
if s["peak_replicas"] != 1:
    sys.exit(f"serving-replica-rate.sh: {s['peak_replicas']} replicas at once, expected 1 (the "
             "autoscaler's tp for this service fits more than once in DEVICES: give fewer)")
notes = [n for n in j["serving"]["notes"] if "above their rating" in n]
rating = re.search(r"rating of ([0-9.]+)", notes[-1]).group(1) if notes else "-"
print(f"| {sys.argv[2]} | {s['requests']} | {100 * s['within_slo'] / s['requests']:.3f} % "
      f"| {s['ttft_p99_s']:.2f} | {s['tpot_p99_s']:.3f} | {rating} |")
PY
done
