#!/usr/bin/env bash
# The live serving evidence of docs/results.md ("Serving live: a replay of Azure's conversation
# trace"): `hetsched serve` on the local backend (one node of 16 a100-80g) runs service `chat`
# (llama-7b, stand-in replicas answering with the serving model's a100-80g timings) and 8
# preemptible training jobs of one device each; scripts/replay-serving-trace replays Azure's
# conversation trace 3x faster than it was recorded (its hour in about 20 minutes) against the
# published endpoints; midway the daemon is killed with SIGKILL and restarted on the same
# database. Everything listens on 127.0.0.1 only.
#
#   scripts/serving-replay.sh OUT_DIR [MINUTES] [HOLD]
#
# MINUTES of replay (default 20); HOLD, the config's serving.hold_taken_back (default the
# daemon's, 10m: the serving loop here runs 3x faster, so 200s holds as long in its terms).
#
# Writes OUT_DIR/{requests.csv,timeline.jsonl,summary.json} (the load generator's),
# OUT_DIR/daemon-{1,2}.log, OUT_DIR/train.log (each training job's starts and notices),
# OUT_DIR/upstreams.conf (the endpoints file), OUT_DIR/replicas.txt (every job's state, attempt
# and preemptions, and how many replica commands started on how many ports) and
# OUT_DIR/report.txt (replay-serving-trace --report: per minute, requests, share within the
# SLO, devices of serving and of training).
set -euo pipefail
out=${1:?usage: serving-replay.sh OUT_DIR [MINUTES] [HOLD]}
minutes=${2:-20}
hold=${3:+  hold_taken_back: $3}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HETSCHED:-$root/build/hetsched}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/hetsched.db* "$out"/train.log "$out"/*.pid "$out"/starts.log
token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token" >"$out/token"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
api="http://127.0.0.1:$port"
cat >"$out/serve.yaml" <<EOF
tokens:
  - token: $token
    role: admin
stop_grace: 10s
local_state_dir: local
serving:
  scrape_every: 2s
  replan_every: 20s   # the simulator's 60 s, 3x faster like the trace
  window: 20s
  endpoints_file: upstreams.conf
$hold
EOF
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Replicas and training jobs run in their own process groups (the local backend's), led by
  # the pid each wrote.
  for f in "$out"/replica-*.pid "$out"/train-*.pid; do
    [ -e "$f" ] && kill -9 -- "-$(cat "$f")" 2>/dev/null || true
  done
}
trap cleanup EXIT
start_daemon() {
  "$bin" serve --backend local --cluster a100-80g=16:per_node=16 --listen "127.0.0.1:$port" \
    --db "$out/hetsched.db" --config "$out/serve.yaml" >"$out/daemon-$1.log" 2>&1 &
  daemon=$!
  pids+=("$daemon")
  for _ in $(seq 100); do curl -sf "$api/healthz" >/dev/null && return; sleep 0.2; done
  echo "the daemon did not start: $out/daemon-$1.log" >&2
  exit 1
}
post() { curl -sf -H "Authorization: Bearer $token" -X POST "$api$1" -d "$2" >/dev/null; }
start_daemon 1

# A replica's timings: what `hetsched plan service` gives llama-7b on an a100-80g at the
# replica's tensor-parallel degree for the trace's mean request (1155 prompt and 211 generated
# tokens, bare roofline): one case per degree, picked by {tp}.
cases=""
for tp in 1 2 4 8; do
  read -r prefill step batch < <("$bin" plan service llama-7b --input 1155 --output 211 \
    --calibration none --max-tp $tp --json | python3 -c '
import json, sys
t = next(t for t in json.load(sys.stdin) if t["type"] == "a100-80g")
print(t["prefill_s"], t["decode_step_s"], t["batch"])')
  cases+="$tp) t='--prefill-s $prefill --decode-step-s $step --max-batch $batch';; "
done
# Each replica notes its start (a replica started twice would show twice).
replica="case {tp} in $cases esac; echo {port} >> $out/starts.log; exec python3 \
$root/tests/testing/stand_in_model_server.py --port {port} --mean-input 1155 \$t \
--pid-file $out/replica-{port}.pid"
post /v1/jobs "$(python3 -c 'import json,sys; print(json.dumps({
  "name": "chat", "kind": "service", "model": "llama-7b", "stacks": ["cuda"],
  "slo": {"ttft": "2s", "tpot": "100ms"}, "rate": [["0h", 11]],
  "tokens": {"input": 1155, "output": 211}, "command": ["/bin/sh", "-c", sys.argv[1]]}))' "$replica")"
for i in $(seq 0 7); do
  post /v1/jobs "{\"name\":\"train-$i\",\"stacks\":[\"cuda\"],\"preemptible\":true,
    \"command\":[\"/bin/sh\",\"-c\",\"echo \$\$ > $out/train-$i.pid; echo \$(date +%s) start train-$i >> $out/train.log; trap 'echo \$(date +%s) notice train-$i >> $out/train.log; exit 0' TERM; sleep 86400 & wait\"]}"
done
sleep 8  # the first replicas ready, the training placed

python3 "$root/scripts/replay-serving-trace" --api "$api" --token-file "$out/token" \
  --service chat --trace "$root/data/inference/azure-llm-2023/AzureLLMInferenceTrace_conv.csv" \
  --speedup 3 --minutes "$minutes" --ttft 2 --tpot 0.1 --out "$out" &
gen=$!
pids+=("$gen")
sleep $((minutes * 30))
echo "$(date +%s) kill -9 the daemon" | tee -a "$out/train.log"
kill -9 "$daemon"
wait "$daemon" 2>/dev/null || true
sleep 2
start_daemon 2
wait "$gen"
curl -s -H "Authorization: Bearer $token" "$api/v1/jobs?limit=100" | python3 -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    print(j["name"], j["state"], "attempt", j["attempt"], "preemptions", j["preemptions"])' \
  >"$out/replicas.txt"
echo "replica starts: $(wc -l <"$out/starts.log"), distinct ports: $(sort -u "$out/starts.log" | wc -l)" \
  | tee -a "$out/replicas.txt"
python3 "$root/scripts/replay-serving-trace" --report --out "$out" | tee "$out/report.txt"
