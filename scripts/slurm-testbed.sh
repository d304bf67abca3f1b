#!/usr/bin/env bash
# A real multi-node Slurm 22.05 cluster on this one machine: a private munged, one slurmctld and
# one slurmd per fake node, all on loopback, everything (config, state, logs, sockets, pid files)
# under DIR. For integration tests and for trying `hetsched serve --backend slurm`.
#
#   scripts/slurm-testbed.sh up [DIR]      start a bed (DIR defaults to /tmp/hetsched-slurm-testbed)
#   scripts/slurm-testbed.sh status [DIR]  show its daemons and nodes
#   scripts/slurm-testbed.sh down [DIR]    stop everything it started (safe to run twice)
#
# Several beds may run at once in different DIRs: ports are picked free at `up` time.
# Needs root and Debian's slurmctld, slurmd and munge packages (scripts/install-deps.sh).
#
# Every job of partition het (the default) is held at submit (DIR/job_submit.lua). Place and run
# one with 'scontrol update JobId=X NodeList=nv1; scontrol release X' (RUNNING about 1 s later;
# up to 3 s for the first job after 'up'). Jobs report $SLURMD_NODENAME, not `hostname`.
# Timings worth knowing: a requeued job may start again ~11 s after the requeue; power_down takes
# ~7 s to POWERED_DOWN, power_up ~1 s to IDLE, but a job released onto a powered-down node waits
# up to 30 s in CONFIGURING after the node is back (slurmctld checks every 30 s), so power the
# node up first.
set -euo pipefail

DEFAULT_DIR=/tmp/hetsched-slurm-testbed
NODES=(nv1 nv2 amd1 amd2 asc1 cpu1 cpu2)
UP_TIMEOUT=20 # seconds for all nodes to reach IDLE
# Set on every daemon we start (inherited by slurmstepd), so `down` finds strays even without
# pid files. Job processes do not inherit it: their environment comes from the submitter.
MARK=HETSCHED_TESTBED_DIR
# Serialises port picking between beds started in parallel, until the ports are bound.
PORT_LOCK=/tmp/.hetsched-slurm-testbed.ports.lock

usage() {
  cat <<EOF
Usage: $0 up|status|down [DIR]

  up      start munged, slurmctld and 7 slurmd (nv1 nv2 amd1 amd2 asc1 cpu1 cpu2) on loopback,
          wait until all nodes are idle, print 'export SLURM_CONF=DIR/slurm.conf' (also in DIR/env)
  status  show the bed's daemons and 'sinfo'; exit 0 only if slurmctld answers
  down    stop every process the bed started, even half-dead beds; safe to run twice

DIR defaults to $DEFAULT_DIR. Every job submitted to partition 'het' (the default) is held by
DIR/job_submit.lua until released: 'scontrol update JobId=X NodeList=N; scontrol release X'.
EOF
}

log() { echo "slurm-testbed: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# --- small helpers ------------------------------------------------------------------------------

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# The pid in a pid file, if that process is still ours (its command line names DIR): a stale
# pid file must not make us signal an unrelated process that got the same pid.
pid_of() {
  local pid
  pid=$({ tr -dc '0-9' <"$1"; } 2>/dev/null) || return 0
  [ -n "$pid" ] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF "$DIR/" && echo "$pid"
  return 0
}

# Pids of processes carrying our mark for this DIR (daemons, slurmstepd, power-save scripts).
marked_pids() {
  grep -lzxF "$MARK=$DIR" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

# All descendants of the given pids (job processes under a slurmstepd).
descendants() {
  [ $# -gt 0 ] || return 0
  ps -e -o pid=,ppid= | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2 }
    END {
      do {
        added = 0
        for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; print p; added = 1 }
      } while (added)
    }'
}

# TERM the pids, give them up to $1 seconds, then KILL what is left.
stop_pids() {
  local grace=$1 p i
  shift
  local pids=()
  for p in "$@"; do alive "$p" && pids+=("$p"); done
  [ ${#pids[@]} -eq 0 ] && return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    local left=()
    for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

port_in_use() { ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .; }

# Prints N free ports, consecutive, from a random base below the ephemeral range (32768+) so
# outgoing connections cannot take them between picking and binding.
pick_ports() {
  local n=$1 try base i ok
  for ((try = 0; try < 50; try++)); do
    base=$((10000 + (RANDOM % 2200) * 10))
    ok=1
    for ((i = 0; i < n; i++)); do
      if port_in_use $((base + i)); then
        ok=0
        break
      fi
    done
    if [ $ok = 1 ]; then
      seq "$base" $((base + n - 1))
      return 0
    fi
  done
  return 1
}

# --- up ----------------------------------------------------------------------------------------

STEP=""
STEP_LOG=""
step() {
  STEP=$1
  STEP_LOG=${2:-}
  log "$STEP"
}

on_up_exit() {
  local rc=$?
  [ $rc -eq 0 ] && return 0
  trap - EXIT
  log "up FAILED at step: $STEP"
  if [ -n "$STEP_LOG" ]; then
    local f
    for f in $STEP_LOG; do
      [ -s "$f" ] || continue
      log "--- last lines of $f:"
      tail -n 20 "$f" >&2
    done
  fi
  log "tearing down what was started"
  do_down >/dev/null 2>&1 || true
  exit $rc
}

write_config() {
  local ctld_port=$1
  shift
  local -a ports=("$@")

  mkdir -p "$DIR"/{etc,run,log,state,dev/dri,munge,work}
  local n
  for n in "${NODES[@]}"; do mkdir -p "$DIR/spool/$n"; done
  # Jobs and non-root clients must be able to traverse DIR; munge wants its socket's folder
  # world-executable.
  chmod 755 "$DIR" "$DIR"/{run,log,spool,munge,work}

  # GRES need device files in 22.05; /dev/null stands in for every accelerator.
  local i
  for i in 0 1 2 3; do ln -sf /dev/null "$DIR/dev/nvidia$i"; done
  for i in 128 129 130 131; do ln -sf /dev/null "$DIR/dev/dri/renderD$i"; done
  for i in 0 1 2 3 4 5 6 7; do ln -sf /dev/null "$DIR/dev/davinci$i"; done

  local host
  host=$(hostname -s)
  # Every node is this host, told apart by its slurmd port (each slurmd runs with -N <node>).
  node_addr() { echo "NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[$1]}"; }
  cat >"$DIR/slurm.conf" <<EOF
# Written by scripts/slurm-testbed.sh; regenerated by every 'up'.
ClusterName=hetsched
# Loopback only: slurmctld binds to 127.0.0.1, slurmd to its NodeAddr.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
# A private munged for this bed; cred_expire is also how long a requeued job waits before it may
# start again (default 120 s, too slow for tests).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munged.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root

SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
PlugStackConfig=$DIR/etc/plugstack.conf
SlurmctldDebug=info
SlurmdDebug=info

# No cgroup delegation and no accounting daemon here.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.log
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none

# Nodes claim 16 cores and 128 GB whatever this host has.
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default, a job that asks for no memory would get the whole node's.
DefMemPerCPU=1024
GresTypes=gpu
# (No AccountingStorageTRES=gres/gpu: without slurmdbd slurmctld refuses it. GPUs in use show
# in 'scontrol show node -d' as GresUsed=gpu:a100:2(IDX:0-1).)

# Hold every job of partition het until an outside scheduler (hetsched) places and releases it.
JobSubmitPlugins=lua

# Fast turnaround: schedule on every event, not once a minute (sbatch to RUNNING in about 1 s).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,bf_interval=5
# Finished jobs stay visible to 'scontrol show job' for 10 minutes.
MinJobAge=600
# Seconds between SIGTERM and SIGKILL when a job is cancelled or times out.
KillWait=5
# A DOWN node comes back by itself when its slurmd registers again.
ReturnToService=2
# A killed slurmd: node NOT_RESPONDING after ~15 s, DOWN (and its batch jobs requeued) after
# ~28 s. Lower would be faster but risks flapping nodes on a loaded test machine.
SlurmdTimeout=10

# Power saving, so that 'scontrol update nodename=X state=power_down|power_up' is accepted.
# SuspendTime is a day so that idle nodes never power down by themselves. The programs stop and
# restart the node's slurmd. The power-save thread looks every second instead of every 10.
SuspendTime=86400
SuspendTimeout=5
ResumeTimeout=30
SuspendRate=0
ResumeRate=0
SuspendProgram=$DIR/suspend.sh
ResumeProgram=$DIR/resume.sh
SlurmctldParameters=power_save_interval=1,power_save_min_interval=0
DebugFlags=Power

NodeName=DEFAULT RealMemory=128000 State=UNKNOWN
NodeName=nv1 $(node_addr 0) CPUs=16 Gres=gpu:a100:4 Features=cuda
NodeName=nv2 $(node_addr 1) CPUs=16 Gres=gpu:a100:4 Features=cuda
NodeName=amd1 $(node_addr 2) CPUs=16 Gres=gpu:mi250x:4 Features=rocm
NodeName=amd2 $(node_addr 3) CPUs=16 Gres=gpu:mi250x:4 Features=rocm
NodeName=asc1 $(node_addr 4) CPUs=16 Gres=gpu:910b:8 Features=cann
NodeName=cpu1 $(node_addr 5) Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 Features=x86_64
NodeName=cpu2 $(node_addr 6) Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 Features=x86_64
PartitionName=het Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  cat >"$DIR/gres.conf" <<EOF
NodeName=nv[1-2] Name=gpu Type=a100 File=$DIR/dev/nvidia[0-3]
NodeName=amd[1-2] Name=gpu Type=mi250x File=$DIR/dev/dri/renderD[128-131]
NodeName=asc1 Name=gpu Type=910b File=$DIR/dev/davinci[0-7]
EOF

  # slurmd loads a cgroup plugin even with proctrack/linuxproc and task/none, so it needs a
  # mounted cgroup filesystem (v1 or v2); nothing is constrained. These are the defaults, written
  # here so that the bed does not depend on the host's cgroup.conf.
  cat >"$DIR/cgroup.conf" <<EOF
CgroupPlugin=autodetect
CgroupMountpoint=/sys/fs/cgroup
EOF

  : >"$DIR/etc/plugstack.conf" # keep /etc/slurm/plugstack.conf out of the bed

  # slurmctld loads job_submit.lua from the folder of slurm.conf.
  cat >"$DIR/job_submit.lua" <<'EOF'
-- Holds every job of partition "het" (also jobs that name no partition: het is the default), so
-- that an outside scheduler (hetsched) decides where it runs: it pins the job with
-- 'scontrol update JobId=X NodeList=...' and then 'scontrol release X'. Priority 0 is what
-- 'sbatch -H' sends, so the job pends with Reason=JobHeldUser, like a user hold: root and the
-- job's owner may release it. Jobs that Slurm requeues itself (node failure) are not held again.
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.partition == nil or job_desc.partition == "het" then
    job_desc.priority = 0
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
EOF

  # Power saving: stop a node's slurmd on suspend, start it again on resume.
  cat >"$DIR/suspend.sh" <<EOF
#!/bin/bash
# Run by slurmctld with a hostlist such as 'nv[1-2]'.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$DIR/slurm.conf
for node in \$(scontrol show hostnames "\$1"); do
  pid=\$(cat "$DIR/run/slurmd.\$node.pid" 2>/dev/null) || continue
  kill -TERM "\$pid" 2>/dev/null || true
done
exit 0
EOF
  cat >"$DIR/resume.sh" <<EOF
#!/bin/bash
# Run by slurmctld with a hostlist such as 'nv[1-2]', and an environment without /usr/sbin.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$DIR/slurm.conf $MARK=$DIR
for node in \$(scontrol show hostnames "\$1"); do
  # Programs started by slurmctld have most signals blocked, SIGTERM included: unblock them so
  # that 'down' can stop this slurmd. -b: report a boot time of now, since slurmctld ignores a
  # resumed node whose boot time is older than the resume request (this host never reboots).
  # Both times are whole seconds. Once on a busy host a slurmd started in the request's second
  # (it logged Uptime=1) was never taken as up, and the node went DOWN at ResumeTimeout; a
  # second's wait puts its boot time in a later second than the request.
  sleep 1
  perl -MPOSIX -e 'sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die "sigprocmask: \$!";
                   exec @ARGV or die "exec \$ARGV[0]: \$!"' \\
    slurmd -b -f "\$SLURM_CONF" -N "\$node" </dev/null >>"$DIR/log/resume.log" 2>&1
done
exit 0
EOF
  chmod 755 "$DIR/suspend.sh" "$DIR/resume.sh"
  echo "export SLURM_CONF=$DIR/slurm.conf" >"$DIR/env"
}

# Starts a daemon marked as ours, without the port lock's descriptor (it would keep the lock).
daemon() { env "$MARK=$DIR" "$@" </dev/null 9>&-; }

wait_for() { # wait_for SECONDS CMD...: poll CMD every 0.1 s
  local t=$1 i
  shift
  for ((i = 0; i < t * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

all_ports_listening() {
  local p
  for p in "$@"; do
    ss -Htln "( sport = :$p )" 2>/dev/null | grep -q . || return 1
  done
}

all_nodes_idle() {
  local n
  n=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | wc -l)
  [ "$n" -eq ${#NODES[@]} ]
}

do_up() {
  local t0=$SECONDS
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmd and a private munged need it)"
  local b
  for b in slurmctld slurmd munged scontrol sinfo sbatch perl ss flock; do
    command -v "$b" >/dev/null ||
      die "'$b' is missing; install Slurm and munge with scripts/install-deps.sh" \
        "(Debian packages slurmctld slurmd slurm-client munge)"
  done
  # Unix socket paths are limited to 108 bytes; slurmd puts <spool>/<node>_<job>.<step> sockets
  # under DIR. slurm.conf cannot quote paths with spaces.
  [ ${#DIR} -le 60 ] || die "DIR is too long for Unix socket paths (max 60 characters): $DIR"
  [[ $DIR != *[[:space:]]* ]] || die "DIR must not contain spaces: $DIR"

  if [ -e "$DIR" ]; then
    if [ -e "$DIR/.slurm-testbed" ]; then
      if alive "$(pid_of "$DIR/run/slurmctld.pid")" || [ -n "$(marked_pids)" ]; then
        die "a test bed is already running in $DIR; run '$0 down $DIR' first"
      fi
      rm -rf "${DIR:?}"/* # a stopped bed of ours: start afresh
    elif [ -n "$(ls -A "$DIR")" ]; then
      die "$DIR exists, is not empty and is not a test bed; refusing to use it"
    fi
  fi
  mkdir -p "$DIR"
  touch "$DIR/.slurm-testbed"
  trap on_up_exit EXIT

  export SLURM_CONF=$DIR/slurm.conf

  step "picking free ports"
  exec 9>"$PORT_LOCK"
  flock -w 60 9 || die "timed out waiting for $PORT_LOCK"
  local ports
  mapfile -t ports < <(pick_ports $((${#NODES[@]} + 1)))
  [ ${#ports[@]} -eq $((${#NODES[@]} + 1)) ]
  write_config "${ports[@]}"

  step "starting munged" "$DIR/munge/munged.log"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$DIR/munge/munge.key"
  # --force: a private munged runs as root, which munged otherwise refuses.
  daemon munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munged.sock" \
    --pid-file="$DIR/munge/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    --log-file="$DIR/munge/munged.log"
  wait_for 5 test -S "$DIR/munge/munged.sock"

  step "starting slurmctld" "$DIR/log/slurmctld.log"
  # -c: start from a clean state, never from an earlier bed's jobs.
  daemon slurmctld -c -f "$SLURM_CONF"
  wait_for 10 scontrol ping >/dev/null 2>&1

  step "starting slurmd ${NODES[*]}" "$DIR/log/slurmd.*.log"
  local n
  for n in "${NODES[@]}"; do
    daemon slurmd -f "$SLURM_CONF" -N "$n"
  done
  wait_for 10 all_ports_listening "${ports[@]}"
  flock -u 9
  exec 9>&-

  step "waiting for all ${#NODES[@]} nodes to be idle" "$DIR/log/slurmctld.log $DIR/log/slurmd.*.log"
  if ! wait_for $UP_TIMEOUT all_nodes_idle; then
    sinfo -N -o '%N %T %E' >&2 || true
    false
  fi

  trap - EXIT
  log "up in $((SECONDS - t0)) s: $DIR (ctld port ${ports[0]}, slurmd ports ${ports[*]:1})"
  sinfo
  echo "export SLURM_CONF=$DIR/slurm.conf"
}

# --- down and status -----------------------------------------------------------------------------

no_running_jobs() { [ -z "$(timeout 2 squeue -h -t running,completing -o %A 2>/dev/null)" ]; }

do_down() {
  if [ ! -e "$DIR/.slurm-testbed" ]; then
    log "no test bed in $DIR; nothing to stop"
    return 0
  fi
  export SLURM_CONF=$DIR/slurm.conf
  local ctld
  ctld=$(pid_of "$DIR/run/slurmctld.pid")

  # Cancel jobs first so slurmstepd ends them cleanly while slurmd still runs.
  if alive "$ctld" && timeout 3 scontrol ping >/dev/null 2>&1; then
    local jobs
    jobs=$(timeout 5 squeue -h -t running,completing,configuring,suspended -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      timeout 5 scancel $jobs 2>/dev/null || true
      wait_for 5 no_running_jobs || true
    fi
  fi

  # Then everything at once (slurmctld takes ~2 s to exit, munged ~1.5 s): the daemons from
  # their pid files and by their mark, which also finds slurmstepd and a slurmd that resume.sh
  # started late, plus their descendants (job processes under slurmstepd). Again, in case a
  # power-save script started something meanwhile.
  local f pids
  for _ in 1 2 3; do
    pids=$(marked_pids)
    for f in "$DIR"/run/*.pid "$DIR/munge/munged.pid"; do
      [ -e "$f" ] && pids+=" $(pid_of "$f")"
    done
    # shellcheck disable=SC2086
    pids="$pids $(descendants $pids)"
    # shellcheck disable=SC2086
    stop_pids 5 $pids
    [ -z "$(marked_pids)" ] && break
  done
  rm -f "$DIR"/run/*.pid "$DIR/munge/munged.pid"
  log "down: $DIR"
}

do_status() {
  if [ ! -e "$DIR/.slurm-testbed" ]; then
    log "no test bed in $DIR"
    return 1
  fi
  export SLURM_CONF=$DIR/slurm.conf
  local f name pid
  for f in "$DIR/munge/munged.pid" "$DIR/run/slurmctld.pid" "$DIR"/run/slurmd.*.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    pid=$(pid_of "$f")
    if alive "$pid"; then echo "$name: running (pid $pid)"; else echo "$name: not running"; fi
  done
  if timeout 3 scontrol ping >/dev/null 2>&1; then
    sinfo -N -o '%N %T %G %f'
    echo "export SLURM_CONF=$DIR/slurm.conf"
  else
    echo "slurmctld: not answering"
    return 1
  fi
}

# --- main ----------------------------------------------------------------------------------------

cmd=${1:-}
case $cmd in
-h | --help | help)
  usage
  exit 0
  ;;
up | down | status) ;;
*)
  usage >&2
  exit 2
  ;;
esac
[ $# -le 2 ] || {
  usage >&2
  exit 2
}
DIR=$(realpath -m "${2:-$DEFAULT_DIR}")
export PATH=$PATH:/usr/sbin:/sbin

case $cmd in
up) do_up ;;
down) do_down ;;
status) do_status ;;
esac
