#!/usr/bin/env bash
# Installs the Debian 12 packages hetsched needs to build and test, and only those missing.
# With --package, also those `make package` needs.
# Non-interactive and idempotent: a second run with everything present does nothing.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang clang-format pkg-config
  python3  # scripts/check-layers (make check-layers, CI)
  ccache  # a compiler cache: rebuilding a clone reuses objects (CMakeLists.txt)
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libclp-dev coinor-libcbc-dev
  libcpp-httplib-dev libsqlite3-dev libsimdjson-dev
  # The Slurm test bed (scripts/slurm-testbed.sh) the Slurm backend's integration tests run on.
  slurmctld slurmd slurm-client munge iproute2
)
# Wanted but not required: headless chromium for the browser tests of the HTML report and the
# daemon's dashboard (tests/cli/demo_test.cc and serve_test.cc skip, saying so, where it is missing).
optional=(chromium)
# `--package` (make package): also dpkg-shlibdeps for CPack's Debian package; no browser.
if [ "${1:-}" = --package ]; then
  packages+=(dpkg-dev)
  optional=()
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
missing_optional=()
for p in "${optional[@]}"; do
  installed "$p" || missing_optional+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    if [ ${#missing[@]} -gt 0 ]; then
      echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
      exit 1
    fi
    echo "install-deps: no root or sudo to install ${missing_optional[*]}; the browser test" \
      "of the HTML report will be skipped" >&2
    exit 0
  fi
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || echo "install-deps: apt-get update failed; trying the cached package lists" >&2
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing_optional[*]} (optional)"
  $sudo apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" ||
    echo "install-deps: could not install ${missing_optional[*]}; the browser test of the" \
      "HTML report will be skipped" >&2
fi
