#!/usr/bin/env bash
# Refreshes the demo output in README.md: runs `hetsched demo` (progress lines included) and
# replaces what lies between the `<!-- demo-output ... -->` and `<!-- /demo-output -->` lines
# with it. Run after a change that moves the demo's numbers, then read the prose around the
# block again: it quotes some of them.
#
#   scripts/refresh-readme-demo.sh [BINARY]     (default: build/hetsched)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then sed -n '2,7p' "$0"; exit 2; fi
bin=${1:-build/hetsched}
[[ -x $bin ]] || { echo "refresh-readme-demo.sh: $bin is not an executable" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out" "$out.readme"' EXIT
{ echo '```'; echo '$ ./build/hetsched demo'; "$bin" demo 2>&1; echo '```'; } >"$out"
awk -v out="$out" '
  /^<!-- demo-output/ { print; while ((getline line < out) > 0) print line; skip = 1; next }
  /^<!-- \/demo-output -->/ { skip = 0 }
  !skip { print }
' README.md >"$out.readme"
grep -q '^<!-- /demo-output -->' "$out.readme" || { echo "refresh-readme-demo.sh: no demo-output block in README.md" >&2; exit 1; }
cp "$out.readme" README.md
echo "README.md: demo output refreshed from $bin"
