#!/usr/bin/env bash
# run-gavel.sh - run Gavel's own trace simulator (unmodified but for the experiment options
# below) on a trace and print its average job completion time (JCT) in hours, so hetsched's
# numbers can be checked against the reference implementation on the very same trace (e.g.
# one written by `hetsched gen-trace`).
#
# Gavel (Narayanan et al., OSDI 2020; https://github.com/stanford-futuredata/gavel, MIT
# license) is NOT part of hetsched and is not shipped with it: clone it yourself, e.g.
#   git clone https://github.com/stanford-futuredata/gavel && git -C gavel checkout c4fa400
# This script contains no Gavel code. It runs Gavel's scheduler/scripts/drivers/
# simulate_scheduler_with_trace.py as is, with /usr/bin/python3 (needs Debian's
# python3-numpy python3-scipy python3-psutil; the script installs nothing).
#
# Gavel imports at module level some things that Debian does not package and that its
# simulator never calls for the LP-free policies. The script writes small stand-ins for them
# into a temporary directory put first on PYTHONPATH; each raises an error if it is ever
# actually used, so a wrong assumption fails loudly instead of changing a result:
#   cvxpy              imported by policies/policy.py and every LP policy module. Only the LP
#                      policies (max_min_fairness*, finish_time_fairness*, max_sum_throughput*,
#                      min_total_duration*, ...) call it; fifo, fifo_perf, fifo_packed,
#                      gandiva, isolated and allox never do. (Written only if the real cvxpy
#                      is not importable.)
#   matrix_completion  imported by scheduler.py and throughput_estimator.py; used only to
#                      estimate throughputs from partial profiling, which the trace driver
#                      never enables (it gives the full throughputs file).
#   runtime.rpc.scheduler_server / scheduler_client
#                      imported by scheduler.py; Gavel's real package needs gRPC and generated
#                      protobuf stubs, and is used only on a physical cluster (simulate=False).
# Optional, with GAVEL_LP_PATCH=1 and only for max_min_fairness / max_min_fairness_perf:
# the max-min LP of Gavel's MaxMinFairnessPolicyWithPerf.get_allocation is solved with
# scipy.optimize.linprog (HiGHS) instead of cvxpy+ECOS. That is NOT Gavel's solver: max-min
# LPs have many optimal allocations and the two solvers may pick different ones, so such
# numbers approximate Gavel's. Announced on stderr when used.
#
# Usage: scripts/run-gavel.sh [options] GAVEL_CHECKOUT TRACE POLICY CLUSTER
#   GAVEL_CHECKOUT  Gavel repo root (or its scheduler/ directory)
#   TRACE           Gavel-format trace (10 tab-separated columns, last = arrival time in s)
#   POLICY          Gavel policy name, e.g. fifo fifo_perf fifo_packed gandiva isolated allox
#                   (LP-free); LP policies need cvxpy, or GAVEL_LP_PATCH=1 for
#                   max_min_fairness and max_min_fairness_perf
#   CLUSTER         v100=36,p100=36,k80=36 (omitted types count 0) or Gavel's 36:36:36
# Options:
#   --round S          seconds per scheduling round (default 360)
#   --seed N           Gavel's seed (default 0)
#   --throughputs F    throughputs file (default GAVEL/scheduler/simulation_throughputs.json)
#   --log F            keep Gavel's full output in F (it is large: ~100 kB per job)
# Experiments, to find where Gavel's simulator and hetsched's differ (NOT Gavel's setup:
# announced on stderr; docs/results.md, "Side by side with Gavel's own simulator"):
#   --reset-interval S Gavel recomputes a policy's allocation at most every S seconds (its
#                      minimum_time_between_allocation_resets, 1920 by default); 0: at every
#                      round where a job arrived or finished, as hetsched decides every round
#   --hetsched-fifo    fifo_perf only: its allocation by hetsched's fifo-het rule instead of
#                      rebuilding it from scratch: running jobs keep their type, moving in
#                      arrival order to a faster type with free GPUs when that gains more
#                      than 5 % of their best throughput; then waiting jobs start in arrival
#                      order on their fastest type with room, until one does not fit
#   -h, --help         this text
# Stdout: one line, the average JCT in hours over all jobs of the trace.
# Stderr: policy, cluster, jobs completed, wall time.
# Exit: 0 ok, 1 Gavel failed, 2 usage error or missing Python packages, 3 policy needs cvxpy.
set -euo pipefail

usage() { sed -n '2,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//'; }

round=360 seed=0 thr="" log="" reset_interval="" hetsched_fifo=0
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --round) round="${2:?--round needs a value}"; shift 2 ;;
    --seed) seed="${2:?--seed needs a value}"; shift 2 ;;
    --throughputs) thr="${2:?--throughputs needs a value}"; shift 2 ;;
    --log) log="${2:?--log needs a value}"; shift 2 ;;
    --reset-interval) reset_interval="${2:?--reset-interval needs a value}"; shift 2 ;;
    --hetsched-fifo) hetsched_fifo=1; shift ;;
    --) shift; args+=("$@"); break ;;
    -*) echo "run-gavel.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ ${#args[@]} -eq 4 ]] || { echo "run-gavel.sh: need GAVEL_CHECKOUT TRACE POLICY CLUSTER (see --help)" >&2; exit 2; }
[[ $round =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $reset_interval =~ ^[0-9]*$ ]] ||
  { echo "run-gavel.sh: --round, --seed and --reset-interval take integers" >&2; exit 2; }
[[ $hetsched_fifo == 0 || ${args[2]} == fifo_perf ]] ||
  { echo "run-gavel.sh: --hetsched-fifo changes fifo_perf only, not ${args[2]}" >&2; exit 2; }

py=/usr/bin/python3
[[ -x $py ]] || { echo "run-gavel.sh: $py not found (install Debian's python3)" >&2; exit 2; }
missing=()
for m in numpy scipy psutil; do
  "$py" -c "import $m" 2>/dev/null || missing+=("python3-$m")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "run-gavel.sh: $py lacks ${missing[*]}; install them first, e.g." >&2
  echo "  apt-get install -y python3-numpy python3-scipy python3-psutil" >&2
  exit 2
fi

gdir="${args[0]}"
[[ -d $gdir ]] || { echo "run-gavel.sh: no directory $gdir" >&2; exit 2; }
gdir="$(cd "$gdir" && pwd)"
[[ -f $gdir/scheduler.py ]] || gdir="$gdir/scheduler"
driver="$gdir/scripts/drivers/simulate_scheduler_with_trace.py"
[[ -f $gdir/scheduler.py && -f $driver ]] || { echo "run-gavel.sh: ${args[0]} is not a Gavel checkout (no scheduler/scheduler.py or its trace driver)" >&2; exit 2; }
[[ -f ${args[1]} ]] || { echo "run-gavel.sh: no trace file ${args[1]}" >&2; exit 2; }
trace="$(cd "$(dirname "${args[1]}")" && pwd)/$(basename "${args[1]}")"
policy="${args[2]}"
thr="${thr:-$gdir/simulation_throughputs.json}"
[[ -f $thr ]] || { echo "run-gavel.sh: no throughputs file $thr" >&2; exit 2; }
thr="$(cd "$(dirname "$thr")" && pwd)/$(basename "$thr")"

cluster="${args[3]}"
if [[ $cluster == *=* ]]; then
  v=0 p=0 k=0
  IFS=, read -ra kvs <<<"$cluster"
  for kv in "${kvs[@]}"; do
    n="${kv#*=}"
    [[ $n =~ ^[0-9]+$ ]] || { echo "run-gavel.sh: bad count in '$kv'" >&2; exit 2; }
    case "${kv%%=*}" in
      v100) v=$n ;; p100) p=$n ;; k80) k=$n ;;
      *) echo "run-gavel.sh: unknown GPU type in '$kv' (Gavel's simulator knows v100, p100, k80)" >&2; exit 2 ;;
    esac
  done
  cluster="$v:$p:$k"
fi
[[ $cluster =~ ^[0-9]+:[0-9]+:[0-9]+$ ]] || { echo "run-gavel.sh: bad cluster '${args[3]}' (want v100=N,p100=N,k80=N)" >&2; exit 2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/run-gavel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
stubs="$tmp/stubs"
mkdir -p "$stubs/runtime/rpc"

# A stand-in module: importing it works, using any of its names raises.
write_standin() {  # FILE WHY
  cat >"$1" <<EOF
# Written by hetsched's scripts/run-gavel.sh: stand-in, not the real module.
# $2
def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise RuntimeError("run-gavel.sh stand-in for " + __name__ + " used (" + name + "): $2")
EOF
}
have_cvxpy=0
"$py" -c 'import cvxpy' 2>/dev/null && have_cvxpy=1
[[ $have_cvxpy == 1 ]] || write_standin "$stubs/cvxpy.py" "cvxpy is not installed; only Gavel's LP policies call it"
"$py" -c 'import matrix_completion' 2>/dev/null ||
  write_standin "$stubs/matrix_completion.py" "only used to estimate throughputs, which the trace driver never enables"
echo '# Written by run-gavel.sh: stand-in for Gavel'"'"'s gRPC runtime package (physical cluster only).' >"$stubs/runtime/__init__.py"
: >"$stubs/runtime/rpc/__init__.py"
for m in scheduler_server scheduler_client; do
  write_standin "$stubs/runtime/rpc/$m.py" "Gavel uses it only on a physical cluster (simulate=False)"
done

run=("$driver")
patches=()  # modules written into $stubs that change Gavel before its driver runs
lp_policy=0
case "$policy" in
  max_min_fairness|max_min_fairness_perf) lp_policy=1 ;;
  finish_time_fairness*|max_min_fairness_*|max_sum_throughput*|min_total_duration*)
    [[ $have_cvxpy == 1 ]] || { echo "run-gavel.sh: policy $policy needs cvxpy, which $py cannot import" >&2; exit 3; } ;;
esac
if [[ $lp_policy == 1 && ${GAVEL_LP_PATCH:-0} == 1 ]]; then
  echo "run-gavel.sh: GAVEL_LP_PATCH=1: $policy's max-min LP is solved by scipy HiGHS (linprog), not Gavel's solver (cvxpy+ECOS); the result approximates Gavel's" >&2
  cat >"$stubs/hetsched_highs_maxmin.py" <<'EOF'
# Written by hetsched's scripts/run-gavel.sh (GAVEL_LP_PATCH=1). NOT Gavel's solver.
# Replaces MaxMinFairnessPolicyWithPerf.get_allocation by the same max-min LP, solved with
# scipy.optimize.linprog (HiGHS):
#   maximize t  s.t.  t <= sum_j C[i,j] x[i,j]   for every job i,
#                     sum_i sf[i] x[i,j] <= workers[j],  sum_j x[i,j] <= 1,  x >= 0,
#   C[i,j] = throughput[i,j] * sf[i] / (priority_weight[i] * proportional_throughput[i]).
# (max_min_fairness delegates to the same method with all throughputs set to 1.)
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from policies import max_min_fairness as _mmf


def _allocation(self, unflattened_throughputs, scale_factors,
                unflattened_priority_weights, cluster_spec):
    thr, index = self.flatten(unflattened_throughputs, cluster_spec)
    if thr is None:
        return None
    m, n = thr.shape
    job_ids = index[0]
    sf = self.scale_factors_array(scale_factors, job_ids, m, n)
    prop = self._proportional_policy.get_throughputs(thr, index, cluster_spec)
    weight = np.array([1.0 / unflattened_priority_weights[j] for j in job_ids])
    coef = thr * sf * (weight / np.asarray(prop).reshape(m)).reshape(m, 1)
    nx = m * n                      # x flattened row-major, then t
    fair = sp.hstack([-sp.block_diag([coef[i:i + 1, :] for i in range(m)]),
                      sp.csr_matrix(np.ones((m, 1)))])
    capacity = sp.hstack([sp.hstack([sp.diags(sf[i, :]) for i in range(m)]),
                          sp.csr_matrix((n, 1))])
    one_job = sp.hstack([sp.kron(sp.eye(m), np.ones((1, n))), sp.csr_matrix((m, 1))])
    a_ub = sp.vstack([fair, capacity, one_job]).tocsr()
    b_ub = np.concatenate([np.zeros(m), np.asarray(self._num_workers, float), np.ones(m)])
    cost = np.zeros(nx + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub,
                  bounds=[(0, None)] * nx + [(None, None)], method='highs')
    if res.status != 0:
        print('WARNING: Allocation returned by policy not optimal!')
    x = res.x[:nx].reshape(m, n)
    return self.unflatten(x.clip(min=0.0).clip(max=1.0), index)


_mmf.MaxMinFairnessPolicyWithPerf.get_allocation = _allocation
EOF
  patches+=(hetsched_highs_maxmin)
elif [[ $lp_policy == 1 && $have_cvxpy == 0 ]]; then
  echo "run-gavel.sh: policy $policy needs cvxpy, which $py cannot import; set GAVEL_LP_PATCH=1 to solve its LP with scipy HiGHS instead (not Gavel's solver)" >&2
  exit 3
fi

if [[ -n $reset_interval ]]; then
  echo "run-gavel.sh: --reset-interval $reset_interval: Gavel's allocation is recomputed at most every $reset_interval s (Gavel's own: 1920); not Gavel's setup" >&2
  cat >"$stubs/hetsched_reset_interval.py" <<EOF
# Written by hetsched's scripts/run-gavel.sh (--reset-interval). NOT Gavel's setup: the
# Scheduler's minimum_time_between_allocation_resets becomes $reset_interval s.
import scheduler as _scheduler

_gavel_init = _scheduler.Scheduler.__init__


def _init(self, *args, **kwargs):
    kwargs['minimum_time_between_allocation_resets'] = $reset_interval
    _gavel_init(self, *args, **kwargs)


_scheduler.Scheduler.__init__ = _init
EOF
  patches+=(hetsched_reset_interval)
fi
if [[ $hetsched_fifo == 1 ]]; then
  echo "run-gavel.sh: --hetsched-fifo: fifo_perf's allocation follows hetsched's fifo-het rule (running jobs keep their type); not Gavel's policy" >&2
  cat >"$stubs/hetsched_fifo.py" <<'EOF'
# Written by hetsched's scripts/run-gavel.sh (--hetsched-fifo). NOT Gavel's policy: in mode
# 'perf' (fifo_perf), FIFOPolicy.get_allocation follows hetsched's fifo-het rule. Jobs that
# hold a type keep it, moving in arrival order to a faster type with free GPUs when that gains
# more than 5 % of their best throughput; then the others start in arrival order on their
# fastest type with room, until one does not fit. Gavel instead rebuilds the allocation from
# scratch, so an earlier job can push a later running one to a slower type.
from policies import fifo as _fifo

_gavel_get_allocation = _fifo.FIFOPolicy.get_allocation
MOVE_GAIN = 0.05  # hetsched's SchedulerOptions::stickiness


def _fastest_with_room(throughputs, free, scale_factor):
    fits = [t for t in sorted(free) if free[t] >= scale_factor and throughputs[t] > 0]
    return max(fits, key=lambda t: throughputs[t]) if fits else None


def _get_allocation(self, throughputs, scale_factors, cluster_spec):
    if self._mode != 'perf':
        return _gavel_get_allocation(self, throughputs, scale_factors, cluster_spec)
    held = {j: t for j, t in self._allocation.items() if j in throughputs}
    free = dict(cluster_spec)
    for job_id, worker_type in held.items():
        free[worker_type] -= scale_factors[job_id]
    allocation = {}
    blocked = False
    for job_id in sorted(j for j in throughputs if not j.is_pair()):
        scale_factor = scale_factors[job_id]
        best = _fastest_with_room(throughputs[job_id], free, scale_factor)
        if job_id in held:
            own = held[job_id]
            top = max(throughputs[job_id].values())
            if (best is not None and
                    throughputs[job_id][best] - throughputs[job_id][own] > MOVE_GAIN * top):
                free[own] += scale_factor
                free[best] -= scale_factor
                own = best
            allocation[job_id] = own
        elif not blocked and best is None:
            blocked = True
        elif not blocked:
            allocation[job_id] = best
            free[best] -= scale_factor
    self._allocation = allocation
    result = {job_id: {t: 0.0 for t in cluster_spec} for job_id in throughputs}
    for job_id, worker_type in allocation.items():
        result[job_id][worker_type] = 1.0
    return result


_fifo.FIFOPolicy.get_allocation = _get_allocation
EOF
  patches+=(hetsched_fifo)
fi
if [[ ${#patches[@]} -gt 0 ]]; then
  cat >"$tmp/run_patched.py" <<'EOF'
# Written by hetsched's scripts/run-gavel.sh: imports the modules that change Gavel (named in
# argv[2], comma-separated), then runs Gavel's driver unchanged as __main__.
#   argv: GAVEL_SCHEDULER_DIR MODULES DRIVER [driver args]
import importlib, runpy, sys
sys.path.append(sys.argv[1])
for name in sys.argv[2].split(','):
    importlib.import_module(name)
sys.argv = sys.argv[3:]
runpy.run_path(sys.argv[0], run_name='__main__')
EOF
  run=("$tmp/run_patched.py" "$gdir" "$(IFS=,; echo "${patches[*]}")" "$driver")
fi

out="${log:-$tmp/gavel.log}"
start=$(date +%s.%N)
if ! (cd "$gdir" && PYTHONPATH="$stubs${PYTHONPATH:+:$PYTHONPATH}" "$py" "${run[@]}" \
        -t "$trace" -p "$policy" -c "$cluster" --seed "$seed" \
        --time_per_iteration "$round" --throughputs_file "$thr") >"$out" 2>&1; then
  tail -n 20 "$out" >&2
  echo "run-gavel.sh: Gavel failed (see above${log:+; full output in $log})" >&2
  exit 1
fi
end=$(date +%s.%N)
secs=$(awk '/^Average job completion time: / {print $5; exit}' "$out")
[[ -n $secs ]] || { tail -n 20 "$out" >&2; echo "run-gavel.sh: no average JCT in Gavel's output" >&2; exit 1; }
jobs=$(grep -c '^Job [0-9]*\( (high priority)\)\{0,1\}: [0-9.]*$' "$out" || true)
total=$(grep -c . "$trace" || true)
echo "run-gavel.sh: gavel policy=$policy cluster=$cluster round=${round}s seed=$seed jobs_completed=$jobs/$total wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')s" >&2
if [[ $jobs -lt $total ]]; then
  failed=$(grep -c '\[Job failed\]' "$out" || true)
  echo "run-gavel.sh: warning: only $jobs of $total jobs completed ($failed marked failed by Gavel after repeated zero-step rounds); Gavel's average leaves the others out" >&2
fi
awk -v s="$secs" 'BEGIN {printf "%.4f\n", s / 3600}'
