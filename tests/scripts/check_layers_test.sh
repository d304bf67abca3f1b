#!/usr/bin/env bash
# scripts/check-layers passes on the tree, and fails, naming what is wrong, on copies of src/ and
# docs/architecture.md with one fault each: an include of a layer not allowed, an include
# circle, a folder missing from the diagram, a layer without its folder, a stale known circle.
# Usage: tests/scripts/check_layers_test.sh [SOURCE_DIR]
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
check="$root/scripts/check-layers"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fresh_copy() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t/docs"
  cp -r "$root/src" "$tmp/t/src"
  cp "$root/docs/architecture.md" "$tmp/t/docs/"
}

# expect_failure NAME TEXT: check-layers on the copy exits 1 and its output contains TEXT.
expect_failure() {
  local out rc=0
  out=$(bash "$check" "$tmp/t" 2>&1) || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: exit $rc, expected 1 and '$2' in:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}

bash "$check" "$root" || { echo "FAIL: the tree itself does not pass"; exit 1; }

fresh_copy  # the daemon reaching up into the simulator
sed -i '0,/^#include "/s//#include "sim\/engine.h"\n#include "/' "$tmp/t/src/daemon/store.cc"
expect_failure upward-include 'src/daemon/store.cc:1: #include "sim/engine.h": layer daemon may not include layer sim'

fresh_copy  # two backends are side by side: neither includes the other
echo '#include "backends/slurm/slurm_records.h"' >>"$tmp/t/src/backends/local/device_probe.cc"
expect_failure sideways-include 'layer backends/local may not include layer backends/slurm'

fresh_copy  # a circle through two .cc files, as gavel_reader and workload_reader had
echo '#include "util/units.h"' >>"$tmp/t/src/util/file.cc"
echo '#include "util/file.h"' >>"$tmp/t/src/util/units.cc"
expect_failure circle 'include circle: util/file -> util/units -> util/file'

fresh_copy  # a private header X_internal.h belongs to X's module
echo '#include "util/units.h"' >"$tmp/t/src/util/file_internal.h"
echo '#include "util/file_internal.h"' >>"$tmp/t/src/util/file.cc"
echo '#include "util/file.h"' >>"$tmp/t/src/util/units.cc"
expect_failure internal-header-circle 'include circle: util/file -> util/units -> util/file'

fresh_copy
echo '#include "util/no_such.h"' >>"$tmp/t/src/util/file.cc"
expect_failure missing-file '#include "util/no_such.h": no such file under src/'

fresh_copy
mkdir "$tmp/t/src/extra" && echo 'int x;' >"$tmp/t/src/extra/x.cc"
expect_failure folder-not-in-diagram 'src/extra: folder not in the layer diagram'

fresh_copy
rm -r "$tmp/t/src/obs"
sed -i 's#"obs/[a-z]*\.h"#"util/status.h"#' $(grep -rl '"obs/' "$tmp/t/src")
expect_failure layer-without-folder 'layer obs has no folder src/obs'

fresh_copy
# A circle: line for an include that does not exist, whatever circles the tree still has.
sed -i 's#^```layers$#&\ncircle: k8s/objects -> util/file#' "$tmp/t/docs/architecture.md"
expect_failure stale-known-circle 'k8s/objects no longer includes util/file'

fresh_copy
sed -i 's#^obs/ *util#obs/ util daemon#' "$tmp/t/docs/architecture.md"
expect_failure layer-circle 'the layers depend on each other in a circle'

[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "check-layers: every fault was caught"
