#!/usr/bin/env bash
# Runs each libFuzzer target in build-fuzz/fuzz for SECONDS seconds from its seed corpus
# (fuzz/corpus/NAME) and what earlier runs found (build-fuzz/corpus/NAME). Fails when any target
# finds anything, naming the target and the input that broke it; the full output of each run is
# kept in build-fuzz/logs/NAME.log.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 30 k8s_extender_fuzz
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
if ! [[ $seconds =~ ^[0-9]+$ ]] || (( seconds == 0 )); then
  echo "scripts/fuzz.sh: SECONDS: '$seconds' (expected a whole number of seconds above 0)" >&2
  exit 2
fi
targets=("$@")
if (( ${#targets[@]} == 0 )); then
  for f in build-fuzz/fuzz/*_fuzz; do targets+=("$(basename "$f")"); done
fi
mkdir -p build-fuzz/logs
failed=()
for name in "${targets[@]}"; do
  binary=build-fuzz/fuzz/$name
  if [[ ! -x $binary ]]; then
    echo "scripts/fuzz.sh: no fuzz target '$name' in build-fuzz/fuzz (run make fuzz first)" >&2
    exit 2
  fi
  artifacts=build-fuzz/artifacts/$name
  mkdir -p "build-fuzz/corpus/$name" "$artifacts"
  log=build-fuzz/logs/$name.log
  echo "== $name ($seconds s)"
  if "$binary" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$artifacts/" "build-fuzz/corpus/$name" "fuzz/corpus/$name" >"$log" 2>&1; then
    grep -E '^Done [0-9]+ runs' "$log" || tail -n 1 "$log"
  else
    status=$?
    grep -E 'ERROR: |SUMMARY: |^    #[0-4] ' "$log" | head -n 12
    echo "FAILED: $name (exit $status); input: $(ls -t "$artifacts" | head -n 1 | sed "s|^|$artifacts/|")"
    echo "        log: $log; reproduce: $binary <input>"
    failed+=("$name")
  fi
done
if (( ${#failed[@]} > 0 )); then
  echo "fuzz: ${#failed[@]} target(s) found a problem: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), $seconds s each, nothing found"
