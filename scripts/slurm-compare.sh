#!/usr/bin/env bash
# The evidence of docs/results.md ("hetsched on Slurm"): the same mixed job set run on the Slurm
# test bed (scripts/slurm-testbed.sh) twice,
#   slurm:    Slurm's own scheduler (backfill), jobs asking only --gres=gpu:N, as users submit
#             today (each job is released the moment it is submitted: the bed holds new jobs);
#   hetsched: hetsched serve --backend slurm placing the same jobs, which say their stacks in
#             --comment stacks=... (Slurm has no use for that comment).
# Every job runs a script that fails at once on a node without its stack, as a binary built for
# another vendor does. Prints one table row per run: jobs completed, failed, makespan, average
# JCT of completed jobs, node-hours powered (sinfo sampled each second from the first
# submission), then hetsched's
# added latency from submit to running and how fast each drains a queue of short jobs.
#
#   sudo scripts/slurm-compare.sh [--jobs N] [--seed S] [--queue N] [--hetsched PATH]
set -euo pipefail

jobs=40
seed=1
queue=200
hetsched=build/hetsched
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --hetsched) hetsched=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "slurm-compare: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
hetsched=$(readlink -f "$hetsched")
[ -x "$hetsched" ] || { echo "slurm-compare: no $hetsched (make build first)" >&2; exit 1; }
root=$(mktemp -d /tmp/hs-cmp-XXXXXX)
bed=$root/bed
daemon_pid=""
sampler_pid=""
cleanup() {
  set +e  # everything below runs, whatever fails
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  bash "$here/slurm-testbed.sh" down "$bed" >/dev/null 2>&1
  rm -rf "$root"
}
trap cleanup EXIT

# The job set: "STACKS GPUS SECONDS" per line, the same for both runs.
RANDOM=$seed
workload=()
for ((i = 0; i < jobs; i++)); do
  r=$((RANDOM % 10))
  case $r in
    0|1|2) stacks=cuda; gpus=$((1 << (RANDOM % 3))) ;;
    3|4) stacks=rocm; gpus=$((1 << (RANDOM % 3))) ;;
    5|6) stacks=cuda,rocm; gpus=$((1 << (RANDOM % 2))) ;;
    7) stacks=cann; gpus=$((1 << (RANDOM % 4))) ;;
    *) stacks=x86_64; gpus=0 ;;
  esac
  workload+=("$stacks $gpus $((4 + RANDOM % 12))")
done

need=$root/need.sh
cat >"$need" <<'SH'
#!/bin/sh
case "$SLURMD_NODENAME" in
  nv*) have=cuda ;; amd*) have=rocm ;; asc*) have=cann ;; cpu*) have=x86_64 ;; *) have=none ;;
esac
for s in $(echo "$1" | tr , ' '); do
  [ "$s" = "$have" ] && { sleep "$2"; exit 0; }
done
echo "no $1 on $SLURMD_NODENAME" >&2
exit 1
SH
chmod 755 "$need"

up() {
  bash "$here/slurm-testbed.sh" down "$bed" >/dev/null 2>&1 || true
  rm -rf "$bed"
  bash "$here/slurm-testbed.sh" up "$bed" >/dev/null 2>&1 || { echo "slurm-compare: the test bed did not come up" >&2; exit 1; }
  export SLURM_CONF=$bed/slurm.conf
}

start_daemon() {
  mkdir -p "$root/d"
  cat >"$root/d/config.yaml" <<YAML
backend: slurm
listen: 127.0.0.1:0
database: $root/d/h.db
power: {policy: idle-timeout, suspend_time: 10s, suspend_timeout: 20s, resume_timeout: 60s}
slurm:
  conf: $bed/slurm.conf
  partitions: [het]
  cpu_type: xeon-8380
  output_dir: $root/d/jobs
  poll_interval: 200ms
YAML
  rm -f "$root/d/h.db"*
  "$hetsched" serve --config "$root/d/config.yaml" >"$root/d/out" 2>"$root/d/err" &
  daemon_pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$root/d/out" && return 0; sleep 0.1; done
  echo "slurm-compare: the daemon did not start:" >&2; cat "$root/d/err" >&2; exit 1
}

stop_daemon() { kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""; }

# submit MODE STACKS GPUS SECONDS: one job; MODE slurm releases it at once.
submit() {
  local args=(--parsable -o /dev/null -t 30)
  [ "$3" -gt 0 ] && args+=("--gres=gpu:$3")
  [ "$1" = hetsched ] && args+=("--comment=stacks=$2")
  local id
  id=$(sbatch "${args[@]}" --wrap "$need $2 $4")
  [ "$1" = slurm ] && scontrol release "$id"
  echo "$id"
}

# Until no job waits or runs.
wait_all() {
  while squeue -h -t PD,R,CG,CF -o %i | grep -q .; do sleep 1; done
}

# Powered nodes (sinfo: not '~', powered down), one line per second, from now until
# stop_sampling: the node-seconds of a run are the sum.
start_sampling() {
  (while :; do sinfo -h -N -o '%t' | grep -vc '~$' || true; sleep 1; done) >"$root/powered" &
  sampler_pid=$!
}
stop_sampling() {
  kill "$sampler_pid"
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
  awk '{s += $1} END {printf "%.3f", s / 3600}' "$root/powered"
}

epoch() {
  case $1 in
    Unknown | N/A) echo 0 ;;
    *) date -d "$1" +%s ;;
  esac
}

# One run of the job set; prints its table row.
run() {
  local mode=$1
  up
  [ "$mode" = hetsched ] && start_daemon
  start_sampling
  for w in "${workload[@]}"; do
    # shellcheck disable=SC2086
    submit "$mode" $w >/dev/null
    sleep 0.5  # arrivals spread over the first seconds, the same in both runs
  done
  wait_all
  local node_hours
  node_hours=$(stop_sampling)
  local completed=0 failed=0 first=0 last=0 jct_sum=0
  while IFS='|' read -r _ state submitted _ ended; do
    local s e
    s=$(epoch "$submitted"); e=$(epoch "$ended")
    { [ "$first" -eq 0 ] || [ "$s" -lt "$first" ]; } && first=$s
    [ "$e" -gt "$last" ] && last=$e
    if [ "$state" = COMPLETED ]; then
      completed=$((completed + 1)); jct_sum=$((jct_sum + e - s))
    else
      failed=$((failed + 1))
    fi
  done < <(squeue -h -t all -o '%i|%T|%V|%S|%e')
  printf '| %-8s | %9d | %6d | %10d | %26s | %18s |\n' "$mode" "$completed" "$failed" \
    "$((last - first))" "$(awk -v s=$jct_sum -v n=$completed 'BEGIN{printf "%.1f", n ? s/n : 0}')" \
    "$node_hours"
  [ "$mode" = hetsched ] && stop_daemon
  return 0
}

# Median seconds from sbatch to RUNNING of 10 one-GPU jobs on an idle cluster.
latency() {
  local mode=$1 samples=()
  up
  [ "$mode" = hetsched ] && start_daemon
  for _ in $(seq 10); do
    local t0 id
    t0=$(date +%s.%N)
    id=$(submit "$mode" cuda 1 1)
    until [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] ||
      [ "$(squeue -h -t all -j "$id" -o %T)" = COMPLETED ]; do sleep 0.02; done
    samples+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')")
    sleep 1.5
  done
  [ "$mode" = hetsched ] && stop_daemon
  printf '%s\n' "${samples[@]}" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'
}

# Seconds to drain a queue of `queue` one-GPU jobs of no length submitted at once.
drain() {
  local mode=$1
  up
  [ "$mode" = hetsched ] && start_daemon
  local t0=$SECONDS
  for ((i = 0; i < queue; i++)); do submit "$mode" cuda,rocm,cann 1 0 >/dev/null; done
  local submitted=$((SECONDS - t0))
  wait_all
  echo "$submitted $((SECONDS - t0)) $(squeue -h -t all -o %T | grep -c COMPLETED)"
  [ "$mode" = hetsched ] && stop_daemon
  return 0
}

echo "$jobs jobs (seed $seed), 7 nodes: nv1-2 a100 x4, amd1-2 mi250x x4, asc1 910b x8, cpu1-2"
echo
echo '| run      | completed | failed | makespan s | avg JCT s (completed jobs) | node-hours powered |'
echo '|----------|-----------|--------|------------|----------------------------|--------------------|'
run slurm
run hetsched
echo
echo "median submit-to-running, 10 one-GPU jobs on an idle cluster: slurm $(latency slurm) s," \
  "hetsched $(latency hetsched) s"
read -r s_sub s_all s_done <<<"$(drain slurm)"
read -r h_sub h_all h_done <<<"$(drain hetsched)"
echo "a queue of $queue jobs of no length (1 GPU, any stack) submitted at once:" \
  "slurm drained it in $s_all s ($s_done completed; submitting took $s_sub s)," \
  "hetsched in $h_all s ($h_done completed; submitting took $h_sub s)"
