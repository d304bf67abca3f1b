#!/usr/bin/env bash
# The Slurm serving evidence of docs/results.md ("Serving live on Slurm"): a Slurm test bed
# (scripts/slurm-testbed.sh: 7 nodes, nv1 and nv2 with 4 a100 each) and `hetsched serve
# --backend slurm` on it run service `chat` (llama-7b, stand-in replicas with llama.cpp's metric
# names, so that a gateway's pushed rate drives the plan). Its replicas are Slurm jobs on the
# nodes hetsched placed them on, reached at the node's NodeAddr on a port of serving.ports. The
# rate pushed goes 0 -> 400 -> 0 requests/s: 1 replica, then 3, then 1 again. At each step it
# prints the service's replicas (GET /v1/services/chat) beside Slurm's running jobs (squeue),
# and at the end every Slurm job of the run.
# Everything listens on 127.0.0.1 only; the bed is torn down at the end, also on failure.
#
#   scripts/serving-slurm.sh OUT_DIR      (needs root and Slurm, as the test bed does)
#
# Writes OUT_DIR/{serve.yaml,daemon.log,steps.txt} and the bed under OUT_DIR/bed.
set -euo pipefail
out=${1:?usage: serving-slurm.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HETSCHED:-$root/build/hetsched}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/bed" "$out"/hetsched.db* "$out/steps.txt"
bed=$out/bed
token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
api="http://127.0.0.1:$port"
daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  "$root/scripts/slurm-testbed.sh" down "$bed" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$root/scripts/slurm-testbed.sh" up "$bed" >/dev/null
export SLURM_CONF=$bed/slurm.conf
mkdir -p "$bed/work/hetsched"
cat >"$out/serve.yaml" <<EOF
tokens:
  - token: $token
    role: admin
backend: slurm
slurm:
  conf: $bed/slurm.conf
  partitions: [het]
  device_types: {a100: a100-80g, mi250x: mi250x, 910b: ascend-910b}
  cpu_type: xeon-8380
  output_dir: $bed/work/hetsched
  poll_interval: 200ms
serving:
  scrape_every: 1s
  replan_every: 2s
  ports: 20000-20099
EOF
"$bin" serve --listen "127.0.0.1:$port" --db "$out/hetsched.db" --config "$out/serve.yaml" \
  >"$out/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do curl -sf "$api/healthz" >/dev/null && break; sleep 0.2; done
call() { curl -sf -H "Authorization: Bearer $token" "$@"; }

call -X POST "$api/v1/jobs" -d "$(python3 -c 'import json,sys; print(json.dumps({
  "name": "chat", "kind": "service", "model": "llama-7b", "stacks": ["cuda"],
  "rate": [["0h", 1]], "tokens": {"input": 64, "output": 16},
  "command": ["python3", sys.argv[1], "--port", "{port}", "--prefill-s", "0.01",
              "--decode-step-s", "0.04", "--metrics", "llamacpp"]}))' \
  "$root/tests/testing/stand_in_model_server.py")" >/dev/null

# Ready replicas of chat, and chat's running Slurm jobs.
ready() {
  call "$api/v1/services/chat" | python3 -c '
import json, sys
print(sum(r["state"] == "ready" for r in json.load(sys.stdin)["replicas"]))'
}
slurm_jobs() { squeue -h -t running -o '%j' | grep -c '^hetsched:chat\.' || true; }
# Pushes RATE every second until chat has WANT ready replicas and WANT running Slurm jobs
# (at most 60 s), then prints both sides.
step() {
  local rate=$1 want=$2 t0=$SECONDS
  until [ "$(ready)" = "$want" ] && [ "$(slurm_jobs)" = "$want" ]; do
    if ((SECONDS - t0 > 60)); then
      echo "no $want ready replicas within 60 s at $rate requests/s" >&2
      exit 1
    fi
    call -X POST "$api/v1/services/chat/load" -d "{\"requests_per_s\": $rate}" >/dev/null
    sleep 1
  done
  {
    echo "== pushed $rate requests/s: $want replica(s) after $((SECONDS - t0)) s"
    echo "\$ curl -s -H \"Authorization: Bearer \$T\" $api/v1/services/chat"
    call "$api/v1/services/chat" | python3 -c '
import json, sys
v = json.load(sys.stdin)
print("plan:", v["plan"]["replicas"], "forecast %.0f requests/s" % v["plan"]["forecast_requests_per_s"])
for r in v["replicas"]:
    print("  %-8s %-7s %-4s %-9s %s" % (r["job"], r["state"], r["node"], r["device_type"], r["endpoint"]))
if v["message"]:
    print("message:", v["message"])'
    echo "\$ squeue -t running -o '%i %j %T %N %b'"
    squeue -t running -o '%i %j %T %N %b'
  } | tee -a "$out/steps.txt"
}
step 0 1
step 400 3
step 0 1
{
  echo "== every Slurm job of the run"
  echo "\$ squeue -t all -o '%i %j %T %N'"
  squeue -t all -o '%i %j %T %N'
} | tee -a "$out/steps.txt"
