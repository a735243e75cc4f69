#!/usr/bin/env bash
# Runs everything CI checks: installs what is missing, builds once with no warnings in Kakapo's own code,
# checks formatting, and runs the whole test suite on that build.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests use, installed only when missing (and said when it is): from the system's packages
# (apt-get; sudo when not root) libcurl, zlib, brotli and zstd with headers, pkg-config and curl; nodejs,
# node-undici and golang-go (the Node and Go client packages); chromium, chromium-driver, firefox-esr and libnss3-tools; tinyproxy; postgresql; python3-venv. From PyPI, into
# .build/python-venv: pytest, pytest-xdist, requests, httpx, mcp, websockets, brotli, zstandard, selenium,
# h2, grpcio and grpcio-tools.
echo "tools/test.sh: installs what the tests use when it is missing: libcurl, zlib, brotli and zstd headers, pkg-config, curl, nodejs, node-undici, golang-go, chromium, chromium-driver, firefox-esr, libnss3-tools, tinyproxy and postgresql (apt-get), and the Python packages of the tests into .build/python-venv (PyPI)" >&2
tools/setup.sh --tests

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One build of everything, tests included; `swift test --skip-build` below runs on it.
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$PWD/(Sources|Tests|tools|Examples)/.*: warning:" "$log" >/dev/null; then
    echo "tools/test.sh: the build has warnings in Kakapo's own code (see above)" >&2
    exit 1
fi

if swift format --version >/dev/null 2>&1; then
    tools/format.sh --lint
fi

# pytest-kakapo's own tests (clients/python, pytester runs against the debug binary just built), in the
# venv tools/setup.sh made.
KAKAPO_BIN=.build/debug/kakapo .build/python-venv/bin/python -m pytest -q -p no:cacheprovider clients/python/tests

# A short, repeatable smoke of every fuzzing entry point (tools/fuzz; libFuzzer comes with the toolchain
# on Linux). It builds its own instrumented copy in .build-fuzz.
if [ "$(uname)" = Linux ]; then
    tools/fuzz/run --runs 2000
fi

# A throwaway PostgreSQL server for the shared-Store tests (installed with apt-get when missing).
pgdir=$(mktemp -d)
trap 'tools/postgres.sh stop "$pgdir" >/dev/null 2>&1 || true; rm -rf "$pgdir" "$log"' EXIT
KAKAPO_TEST_POSTGRES_URL=$(tools/postgres.sh start "$pgdir")
export KAKAPO_TEST_POSTGRES_URL KAKAPO_TEST_POSTGRES_DIR="$pgdir"

# Debian's packages the JavaScript and Go tests need, installed when missing.
apt_install() {
    local sudo=""
    if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
command -v node >/dev/null 2>&1 || apt_install nodejs
command -v npm >/dev/null 2>&1 || apt_install npm
[ -f /usr/share/nodejs/undici/package.json ] || apt_install node-undici
command -v go >/dev/null 2>&1 || apt_install golang-go

# The inspector page's pure JavaScript modules, with Node's own test runner.
node --test Tests/InspectorJS/

# The npm package kakapo-proxy (clients/node) with Node's test runner against the debug build: fetch(),
# Debian's undici, child processes, the node:test adapter and stand-ins of Jest's and Vitest's hooks, and
# its packed tarballs installed offline.
KAKAPO_BIN="$PWD/.build/debug/kakapo" node --test clients/node/test/

# The Go package kakapotest (clients/go) with go test, parallel subtests included; no module is fetched.
(cd clients/go && KAKAPO_BIN="$PWD/../../.build/debug/kakapo" GOPROXY=off GOFLAGS=-mod=mod go test -count=1 ./...)

# The real browser of the inspector's browser test: Debian's chromium and chromium-driver, selenium in the
# venv (under CI=true the test fails when they are missing).
tools/browser.sh install >/dev/null

# tinyproxy, the corporate proxy of the upstream-proxy tests (they start their own instances; under
# CI=true they fail when it is missing).
tools/tinyproxy.sh install >/dev/null

# HTTP/2 and gRPC peers (the tests fail under CI=true when they are missing): curl with HTTP/2 and the h2
# library for raw frames and the h2c upstream, grpcio and grpcio-tools for the gRPC service and client.
tools/http2.sh install >/dev/null
tools/h2upstream.sh install >/dev/null
tools/grpc.sh install >/dev/null

# At most 8 tests at a time: the suite starts servers, kakapo processes and Python peers, and with every
# test started at once a 2-core machine starved some of them for seconds (timing checks that guard against
# hangs failed). Measured on 2 cores: unbounded 59 s, 12 at a time 59 s, 8 61 s, 6 65 s.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
swift test --skip-build 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then exit "$status"; fi
if ! grep -q 'Suite "Shared Store (PostgreSQL)" passed' "$log"; then
    echo "tools/test.sh: the PostgreSQL tests did not run" >&2
    exit 1
fi
# Swift Testing's count plus XCTest's (its last "Executed" line is the total), as the last line.
count=$(sed -nE 's/.*Test run with ([0-9]+) tests? .*passed.*/\1/p' "$log" | tail -n 1)
xctests=$(sed -nE 's/.*Executed ([0-9]+) tests?, with 0 failures.*/\1/p' "$log" | tail -n 1)
echo "$(( ${count:-0} + ${xctests:-0} )) passed, 0 failed"
