#!/usr/bin/env bash
# Browser check of the daemon's dashboard page (src/daemon/api/dashboard.html, served at GET /).
# Loads the page in Debian's headless Chromium, lets its JS poll the API for 8 s of virtual
# time, and checks the rendered DOM and a screenshot.
#
#   tests/daemon/api/dashboard_check.sh URL OUTDIR
#
#   URL     the dashboard, e.g. http://127.0.0.1:8080/ (a running `hetsched serve`)
#   OUTDIR  where to write dashboard.dom.html, dashboard.png and Chromium's logs (created)
#
# Checks: at least one class="node-row" row; #jobs-running and #devices-used hold a number;
# the connection banner (#conn-banner) is hidden, i.e. no "disconnected" / API error banner is
# showing; the page logged no uncaught JS error, no Content-Security-Policy refusal (the page
# allows requests to its own origin only) and no render error of its own; the screenshot exists
# and is over 10 kB.
# Exit status: 0 pass, 1 a check failed, 2 usage, 77 skip (chromium is not installed).
# CHROMIUM names another binary than `chromium`.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 URL OUTDIR" >&2
  exit 2
fi
url=$1
out=$2
chromium=${CHROMIUM:-chromium}

if ! command -v "$chromium" >/dev/null 2>&1; then
  echo "SKIP: '$chromium' is not installed (Debian: apt-get install chromium); dashboard not checked"
  exit 77
fi
if ! command -v timeout >/dev/null 2>&1; then
  echo "FAIL: 'timeout' (coreutils) is needed" >&2
  exit 1
fi
if ! mkdir -p "$out"; then
  echo "FAIL: cannot create the output directory '$out'" >&2
  exit 1
fi
out=$(cd "$out" && pwd)

# A fresh profile per run: no state from earlier runs, no lock clash with a concurrent one.
profile=$(mktemp -d "${TMPDIR:-/tmp}/dashboard-check.XXXXXX") || exit 1
trap 'rm -rf "$profile"' EXIT
flags=(--headless=new --no-sandbox --disable-gpu --virtual-time-budget=8000
       --user-data-dir="$profile" --no-first-run --no-default-browser-check
       --disable-extensions --disable-dev-shm-usage --hide-scrollbars)

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# The last lines of a Chromium log, without its D-Bus noise (there is no bus in a container).
log_tail() {
  echo "  last lines of $1:" >&2
  grep -v -e 'dbus/' -e 'DBus' "$1" | tail -n 10 | sed 's/^/    /' >&2
}
# Why Chromium could not load the page, when it says (e.g. net::ERR_CONNECTION_REFUSED).
load_error() {
  grep -o 'Page load failed: .*' "$1" 2>/dev/null | tail -n 1
}
unescape() {
  sed -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e 's/&#39;/'"'"'/g' -e 's/&nbsp;/ /g' -e 's/&amp;/\&/g'
}

# 1. The DOM after the page's JS has run.
dom=$out/dashboard.dom.html
timeout 60 "$chromium" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" \
  >"$dom" 2>"$out/chromium-dom.log"
rc=$?
if [[ $rc -eq 124 ]]; then
  fail "chromium --dump-dom did not finish within 60 s ($url)"
  log_tail "$out/chromium-dom.log"
elif [[ $rc -ne 0 ]]; then
  fail "chromium --dump-dom exited with status $rc ($url)"
  log_tail "$out/chromium-dom.log"
elif [[ -n $(load_error "$out/chromium-dom.log") ]]; then
  fail "chromium could not load $url: $(load_error "$out/chromium-dom.log") (is the daemon running?)"
elif [[ ! -s $dom ]]; then
  fail "chromium wrote an empty DOM for $url"
  log_tail "$out/chromium-dom.log"
elif ! grep -q 'id="jobs-running"' "$dom"; then
  fail "$url did not load the dashboard (no id=\"jobs-running\" in $dom)"
else
  nodes=$(grep -o 'class="node-row"' "$dom" | wc -l)
  devs=$(grep -Eo 'class="dev dev-[a-z]+"' "$dom" | wc -l)
  job_rows=$(grep -o 'class="job-row"' "$dom" | wc -l)
  if [[ $nodes -lt 1 ]]; then
    fail "no node row (class=\"node-row\") in $dom: /v1/nodes was not rendered"
  fi
  running=$(grep -Eo '<[^>]*id="jobs-running"[^>]*>[0-9]+<' "$dom" | head -n 1 | sed -E 's/.*>([0-9]+)<$/\1/')
  if [[ -z $running ]]; then
    fail "#jobs-running does not hold a number in $dom: /v1/cluster was not rendered"
  fi
  used=$(grep -Eo '<[^>]*id="devices-used"[^>]*>[0-9]+<' "$dom" | head -n 1 | sed -E 's/.*>([0-9]+)<$/\1/')
  if [[ -z $used ]]; then
    fail "#devices-used does not hold a number in $dom"
  fi
  # The banner stays in the DOM; it is showing when it lacks the hidden attribute. Its title
  # (class="banner-title") exists only while a poll is failing.
  banner=$(grep -Eo '<[^>]*id="conn-banner"[^>]*>' "$dom" | head -n 1)
  if [[ -z $banner ]]; then
    fail "no #conn-banner element in $dom"
  elif [[ $banner != *' hidden'* || $banner == *'data-state="disconnected"'* ||
          $banner == *'data-state="error"'* ]] || grep -q 'class="banner-title"' "$dom"; then
    title=$(grep -Eo 'class="banner-title">[^<]*' "$dom" | head -n 1 | sed 's/^class="banner-title">//' | unescape)
    items=$(grep -Eo '<li>[^<]*</li>' "$dom" | sed -E 's#</?li>##g; s/^/    /' | unescape)
    fail "the connection banner is showing: ${title:-$banner}"
    [[ -n $items ]] && echo "$items" >&2
  fi
  # The page's console (Chromium logs it as INFO:CONSOLE with --enable-logging=stderr).
  console_errors=$(grep -E 'CONSOLE.*("Uncaught|"hetsched dashboard|Content Security Policy)' \
                   "$out/chromium-dom.log")
  if [[ -n $console_errors ]]; then
    fail "the page logged errors to its console:"
    echo "$console_errors" | head -n 10 | sed -E 's/^.*INFO:CONSOLE[^]]*\] /    /' >&2
  fi
  echo "dom: $nodes node rows, $devs device cells, $job_rows job rows, jobs-running=${running:-?}," \
       "devices-used=${used:-?} ($dom)"
fi

# 2. A screenshot at 1280x1000.
png=$out/dashboard.png
rm -f "$png"
timeout 60 "$chromium" "${flags[@]}" --screenshot="$png" --window-size=1280,1000 "$url" \
  >"$out/chromium-screenshot.log" 2>&1
rc=$?
if [[ $rc -eq 124 ]]; then
  fail "chromium --screenshot did not finish within 60 s ($url)"
  log_tail "$out/chromium-screenshot.log"
elif [[ $rc -ne 0 ]]; then
  fail "chromium --screenshot exited with status $rc ($url)"
  log_tail "$out/chromium-screenshot.log"
elif [[ -n $(load_error "$out/chromium-screenshot.log") ]]; then
  fail "chromium could not load $url for the screenshot: $(load_error "$out/chromium-screenshot.log")"
elif [[ ! -f $png ]]; then
  fail "chromium wrote no screenshot at $png"
  log_tail "$out/chromium-screenshot.log"
else
  size=$(wc -c <"$png" | tr -d ' ')
  if [[ $size -le 10240 ]]; then
    fail "the screenshot $png is only $size bytes (expected over 10 kB: a blank page?)"
  else
    echo "screenshot: $png ($size bytes)"
  fi
fi

if [[ $failures -gt 0 ]]; then
  echo "dashboard check FAILED ($failures problem(s)); see $out" >&2
  exit 1
fi
echo "dashboard check passed ($url)"
