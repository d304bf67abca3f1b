#!/usr/bin/env bash
# The daemon at scale (docs/benchmarks.md, "The daemon at scale"): starts `hetsched serve`
# (virtual backend) on a cluster shaped like bench/sim_bench's, fills it and queues jobs behind
# it through the API, submits at a fixed rate from a second process (bench/daemon_load_bench),
# then kills the daemon with SIGKILL and times its restart until /healthz answers 200.
#
#   scripts/daemon-scale.sh [--full] [--nodes N] [--queued N] [--rate R] [--seconds S]
#                           [--connections C] [--policy P] [--build DIR] [--keep]
#                           [--restart-db DB [--restarts N]]
#
# Defaults are small (100 nodes, 1,000 queued, 200/s for 5 s); --full is issue 33's scale:
# 10,000 nodes (80,000 devices), 100,000 queued, 2,000/s for 60 s. The fill is one gang-8 job
# per node, then --queued more gang-8 jobs that wait behind them; each runs 1 to 20 modeled
# minutes (time scale 1), so through the timed load nodes keep freeing and queued jobs keep
# starting while the queue stays full. The timed load is single-device jobs of 60 modeled
# seconds. The daemon logs at warn (at info it writes a line per submission). Prints each
# phase's figures and the daemon's peak RSS (VmHWM).
# --keep leaves the database (and the daemon's log) in the folder it names, e.g. to profile a
# restart on it.
# --restart-db DB skips the fill and the load: it restarts the daemon --restarts times (default
# 3), each on a fresh copy of DB (a database kept with --keep, and its -wal file if any; give
# the same --nodes or --full it was made with), and prints each restart's wall and CPU seconds
# until /healthz answered 200.
# The daemon inherits the environment: GLIBC_TUNABLES=glibc.malloc.hugetlb=1 times it with its
# heap on transparent huge pages (docs/operations.md, "A restart's time at scale").
set -euo pipefail

nodes=100 queued=1000 rate=200 seconds=5 connections=8 policy=default build=build keep=0
restart_db="" restarts=3
ready_limit=60  # seconds a restart may take before the script gives up
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) nodes=10000 queued=100000 rate=2000 seconds=60 ready_limit=600; shift ;;
    --nodes) nodes="$2"; shift 2 ;;
    --queued) queued="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --policy) policy="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --restart-db) restart_db="$2"; shift 2 ;;
    --restarts) restarts="$2"; shift 2 ;;
    *) sed -n '2,25p' "$0" >&2; exit 2 ;;
  esac
done

hetsched="$build/hetsched"
load="$build/bench/daemon_load_bench"
for b in "$hetsched" "$load"; do
  [[ -x "$b" ]] || { echo "daemon-scale: $b missing (cmake --build $build)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/hetsched-scale-XXXXXX)
pid=""
stop_daemon() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
finish() {
  stop_daemon
  if [[ $keep == 1 ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap finish EXIT

# sim_bench's cluster (bench/bench_setup.h, GavelMixCluster): a third each of v100, p100 and
# k80 nodes, 8 devices a node.
third=$((nodes / 3))
cluster="v100=$((8 * third)):per_node=8,p100=$((8 * third)):per_node=8"
cluster+=",k80=$((8 * (nodes - 2 * third))):per_node=8"

# Starts the daemon in the background on port `$1` (0: any free one) and sets pid.
start_daemon() {
  : >"$dir/out"
  "$hetsched" serve --listen "127.0.0.1:$1" --db "$dir/h.db" --cluster "$cluster" \
    --time-scale 1 --policy "$policy" --log-level warn >"$dir/out" 2>>"$dir/daemon.log" &
  pid=$!
}

# The port the daemon printed, once it listens (it prints after recovering its state).
wait_listening() {
  for _ in $(seq 1 6000); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$dir/out")
    [[ -n "$port" ]] && { echo "$port"; return; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  echo "daemon-scale: the daemon did not start; its log:" >&2
  cat "$dir/daemon.log" >&2
  exit 1
}

peak_rss_mib() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }

# Connections refused since boot because a listener's accept queue was full (TcpExt
# ListenOverflows, the whole machine's): the client sends its SYN again after 1 s.
listen_overflows() {
  awk '/^TcpExt:/ { if (!seen) { for (i = 1; i <= NF; i++) col[$i] = i; seen = 1 }
                    else print $(col["ListenOverflows"]) }' /proc/net/netstat
}

# The control loop's passes of 100 ms or more logged after line `$1` of the daemon's log (it
# logs each at warn), and the longest: wall and CPU milliseconds, and where its wall time went.
log_lines() { wc -l <"$dir/daemon.log"; }
slow_passes() {
  python3 - "$dir/daemon.log" "$1" <<'PY'
import json, sys
passes = []
for line in open(sys.argv[1]).readlines()[int(sys.argv[2]):]:
    try:
        j = json.loads(line)
    except ValueError:  # not a log line of the daemon's (a crash's message)
        continue
    if j.get("msg", "").startswith("a slow pass"):
        passes.append(j)
if not passes:
    print("none logged"); sys.exit()
p = max(passes, key=lambda j: j["wall_ms"])
parts = ", ".join(f"{k[:-3]} {p[k]:.0f}" for k in p if k.endswith("_ms") and k not in ("wall_ms", "cpu_ms"))
print(f"{len(passes)}; longest {p['wall_ms']:.0f} ms wall, {p['cpu_ms']:.0f} ms CPU at {p['ts']} "
      f"({p['submissions']} submissions; ms: {parts})")
PY
}

jobs_by_state() {
  curl -s "http://127.0.0.1:$port/v1/cluster" |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(" ".join(f"{k}={v}" for k,v in j.items() if v))'
}

# Starts the daemon on the database in $dir and port `$port`, and prints how long it took
# until /healthz answered 200, with the daemon's CPU time until then (user + system: steadier
# than the wall time on a shared machine) and the machine's load average; then the recovery
# alone as the daemon timed it (hetsched_recovery_seconds: without the first scheduling pass,
# which /healthz may or may not have waited for).
timed_restart() {
  local start ready cpu recovery
  start=$(date +%s.%N)
  start_daemon "$port"
  "$load" --port "$port" --wait-ready "$ready_limit" >/dev/null
  ready=$(date +%s.%N)
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
  recovery=$(curl -s "http://127.0.0.1:$port/metrics" | awk '
    /^hetsched_recovery_seconds\{clock="wall"\}/ { wall = $2 }
    /^hetsched_recovery_seconds\{clock="cpu"\}/ { cpu = $2 }
    END { printf "%.2f s wall, %.2f s CPU", wall, cpu }')
  echo "restart to ready (/healthz 200): $(echo "$ready - $start" | bc -l | xargs printf '%.2f') s" \
    "(daemon CPU $cpu s; load average $(cut -d' ' -f1 /proc/loadavg); peak RSS $(peak_rss_mib) MiB)"
  echo "recovery alone (hetsched_recovery_seconds): $recovery"
}

echo "daemon-scale: $nodes nodes ($cluster), policy $policy, $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ -n "$restart_db" ]]; then
  [[ -f "$restart_db" ]] || { echo "daemon-scale: no database $restart_db" >&2; exit 1; }
  # A port nothing listens on now, for the daemon to take.
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  for ((i = 1; i <= restarts; i++)); do
    # A fresh copy each time: a restart requeues what ran and writes events.
    rm -f "$dir"/h.db*
    cp "$restart_db" "$dir/h.db"
    [[ -f "$restart_db-wal" ]] && cp "$restart_db-wal" "$dir/h.db-wal"
    timed_restart
    echo "jobs: $(jobs_by_state)"
    stop_daemon
  done
  exit 0
fi
start_daemon 0
port=$(wait_listening)
token="$dir/hetsched.token"

echo "== fill: $nodes running + $queued queued gang-8 jobs, as fast as the API takes them"
overflows=$(listen_overflows) from=$(log_lines)
"$load" --port "$port" --token-file "$token" --connections "$connections" --rate 0 \
  --count $((nodes + queued)) --seconds 100000 --prefix q --gang 8 --work-min 60 --work-max 1200
echo "jobs: $(jobs_by_state)"
echo "listen queue overflows: $(($(listen_overflows) - overflows)); slow passes: $(slow_passes "$from")"

echo "== timed load: $rate/s for $seconds s, single-device jobs of 60 s"
overflows=$(listen_overflows) from=$(log_lines)
"$load" --port "$port" --token-file "$token" --connections "$connections" --rate "$rate" \
  --seconds "$seconds" --prefix j --work-min 60 --work-max 60
echo "jobs: $(jobs_by_state)"
echo "listen queue overflows: $(($(listen_overflows) - overflows)); slow passes: $(slow_passes "$from")"
curl -s "http://127.0.0.1:$port/metrics" | awk '
  /^hetsched_decision_seconds_(sum|count)/ {v[$1] = $2}
  END {c = v["hetsched_decision_seconds_count"]; s = v["hetsched_decision_seconds_sum"];
       if (c > 0) printf "decisions: %d, mean %.3f ms\n", c, 1e3 * s / c}'
echo "peak RSS: $(peak_rss_mib) MiB"

echo "== restart after kill -9, on the same database and port"
stop_daemon
from=$(log_lines)
timed_restart
echo "jobs: $(jobs_by_state)"
sleep 5  # the restarted daemon's first passes: it starts the jobs that ran before
echo "slow passes in the 5 s after ready: $(slow_passes "$from")"
