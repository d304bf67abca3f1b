#!/usr/bin/env bash
# scripts/check-sizes passes on the tree, and fails, naming what is wrong, on copies of src/ and
# scripts/size-exceptions.txt with one fault each: a new long function, a new long file, a
# listed item that grew, a listed item that shrank, a listed item that is gone.
# Usage: tests/scripts/check_sizes_test.sh [SOURCE_DIR]
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
check="$root/scripts/check-sizes"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
list=scripts/size-exceptions.txt

fresh_copy() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t/scripts"
  cp -r "$root/src" "$tmp/t/src"
  cp "$root/$list" "$tmp/t/$list"
}

# long_function NAME LINES: a .cc function of LINES lines, signature to closing brace.
long_function() {
  echo "int $1(int x) {"
  for _ in $(seq $(($2 - 2))); do echo "  x += 1;"; done
  echo "}"
}

# expect_failure NAME TEXT: check-sizes on the copy exits 1 and its output contains TEXT.
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

# expect_pass NAME: check-sizes on the copy exits 0.
expect_pass() {
  if ! out=$(bash "$check" "$tmp/t" 2>&1); then
    echo "FAIL $1: expected a pass, got:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}

bash "$check" "$root" || { echo "FAIL: the tree itself does not pass"; exit 1; }

fresh_copy
long_function Tally 80 >"$tmp/t/src/util/tally.cc"
expect_pass function-at-the-limit

fresh_copy
{ echo "namespace {"; long_function Tally 81; echo "}  // namespace"; } >"$tmp/t/src/util/tally.cc"
expect_failure new-long-function 'src/util/tally.cc:2: function Tally is 81 lines, over the limit of 80'

fresh_copy  # a signature over two lines counts from its first line
{ echo "int Tally(int x,"; echo "          int y) {"; long_function Unused 80 | sed '1d'; } \
  >"$tmp/t/src/util/tally.cc"
expect_failure two-line-signature 'src/util/tally.cc:1: function Tally is 81 lines'

fresh_copy
seq 801 | sed 's#^#// #' >"$tmp/t/src/util/tally.h"
expect_failure new-long-file 'src/util/tally.h: file is 801 lines, over the limit of 800'

fresh_copy
long_function Tally 90 >"$tmp/t/src/util/tally.cc"
echo "function src/util/tally.cc:Tally 85" >>"$tmp/t/$list"
expect_failure listed-function-grew 'function Tally is 90 lines, grown beyond the 85 listed'

fresh_copy
long_function Tally 90 >"$tmp/t/src/util/tally.cc"
echo "function src/util/tally.cc:Tally 95" >>"$tmp/t/$list"
expect_failure listed-function-shrank 'function Tally is 90 lines, down from the 95 listed: update'

fresh_copy
seq 900 | sed 's#^#// #' >"$tmp/t/src/util/tally.h"
echo "file src/util/tally.h 850" >>"$tmp/t/$list"
expect_failure listed-file-grew 'src/util/tally.h: file is 900 lines, grown beyond the 850 listed'

fresh_copy
seq 900 | sed 's#^#// #' >"$tmp/t/src/util/tally.h"
echo "file src/util/tally.h 950" >>"$tmp/t/$list"
expect_failure listed-file-shrank 'src/util/tally.h: file is 900 lines, down from the 950 listed'

fresh_copy  # a listed function brought within the limit must leave the list
long_function Tally 60 >"$tmp/t/src/util/tally.cc"
echo "function src/util/tally.cc:Tally 95" >>"$tmp/t/$list"
expect_failure listed-function-gone 'function src/util/tally.cc:Tally is gone or within its limit'

fresh_copy  # an edit above a listed function moves it, and the list still holds
long_function Tally 90 >"$tmp/t/src/util/tally.cc"
echo "function src/util/tally.cc:Tally 90" >>"$tmp/t/$list"
sed -i '1i int Before() { return 1; }\n' "$tmp/t/src/util/tally.cc"
expect_pass listed-function-moved

[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "check-sizes: every fault was caught"
