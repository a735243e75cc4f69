#!/usr/bin/env bash
# Installs what building and running Kakapo needs beyond the Swift toolchain: the development files of
# libcurl, zlib, brotli and zstd, and pkg-config; and the curl command (the quick start's client, and the
# HTTPS tests'). Does nothing, and needs no network, when they are already there.
#
#   tools/setup.sh            what building and running needs (system packages only)
#   tools/setup.sh --tests    that, then the Python venv of the tests (from PyPI; tools/test.sh runs this)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

tests=false
case "${1-}" in
    "") ;;
    --tests) tests=true ;;
    *) echo "tools/setup.sh: unknown option $1 (--tests also makes the test venv)" >&2; exit 2 ;;
esac

system_packages() {
    if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcurl zlib libbrotlidec libbrotlienc libzstd \
        && command -v curl >/dev/null 2>&1; then
        return 0
    fi
    if command -v apt-get >/dev/null 2>&1; then
        local sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        echo "tools/setup.sh: installing libcurl4-openssl-dev, zlib1g-dev, libbrotli-dev, libzstd-dev, pkg-config and curl with apt-get" >&2
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libcurl4-openssl-dev zlib1g-dev libbrotli-dev libzstd-dev \
            pkg-config curl >/dev/null
    elif command -v brew >/dev/null 2>&1; then
        echo "tools/setup.sh: installing curl, zlib, brotli, zstd and pkg-config with Homebrew" >&2
        brew install curl zlib brotli zstd pkg-config
    else
        echo "tools/setup.sh: install libcurl, zlib, brotli and zstd (with headers) and pkg-config" >&2
        exit 1
    fi
    pkg-config --exists libcurl zlib libbrotlidec libbrotlienc libzstd || {
        echo "tools/setup.sh: pkg-config still cannot find libcurl, zlib, brotli and zstd" >&2
        exit 1
    }
}

# The Python environment of the tests: a venv in the git-ignored .build with pytest, pytest-xdist,
# requests, httpx, the MCP SDK (mcp, for the MCP replay test), websockets (a permessage-deflate peer for the
# WebSocket tests), brotli and zstandard (the reference encoders of the br and zstd upstream, and requests'
# own br decoding) and pytest-kakapo itself (editable). Skipped when it already holds them for this
# pyproject.toml.
test_venv() {
    local venv="$root/.build/python-venv"
    local stamp="$venv/kakapo-pyproject.sha256"
    local want
    want=$( (sha256sum || shasum -a 256) <"$root/clients/python/pyproject.toml" | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
        "$venv/bin/python" -c 'import pytest, xdist, requests, httpx, pytest_kakapo, mcp, websockets, brotli, zstandard' 2>/dev/null; then
        return 0
    fi
    echo "tools/setup.sh: making the Python venv of the tests in $venv (from PyPI: pytest, pytest-xdist, requests, httpx, mcp, websockets, brotli, zstandard, and pytest-kakapo from clients/python)" >&2
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
        if command -v apt-get >/dev/null 2>&1; then
            $([ "$(id -u)" = 0 ] || echo sudo) apt-get install -y -qq python3-venv >/dev/null
        fi
    fi
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pytest pytest-xdist requests httpx 'mcp>=2.3,<3' 'websockets>=13,<17' \
        brotli zstandard
    # --no-deps: the plugin's other dependency, kakapo-proxy (the binary in a wheel), is what the tests
    # replace with the build under test (KAKAPO_BIN); it is not on PyPI yet.
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -e "$root/clients/python"
    echo "$want" >"$stamp"
}

system_packages
if $tests; then test_venv; fi
