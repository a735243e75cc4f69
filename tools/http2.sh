#!/usr/bin/env bash
# What the HTTP/2 listener tests need (Tests/KakapoHTTP2Tests: ListenerHTTP2Tests, HostileHTTP2Tests):
# a curl that speaks HTTP/2 (Debian's does), and Python's `h2` (with its `hpack`) in .build/python-venv for
# the raw-frame peer (H2Peer.swift) that multiplexes requests and sends hostile frames.
#
#   tools/http2.sh install   checks curl, installs h2 (pinned, the version tools/h2upstream.sh pins) into the venv
#   tools/http2.sh check     exit 0 when both are there
#
# Idempotent: a venv that already has this version is left alone.
set -euo pipefail
command=${1:?usage: tools/http2.sh install|check}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.build/python-venv/bin/python"
version=4.4.1

curl_speaks_http2() {
    command -v curl >/dev/null 2>&1 && curl -V | grep -q 'HTTP2'
}

has_h2() {
    [ -x "$python" ] && "$python" -c "import h2, hpack, sys; sys.exit(0 if h2.__version__ == '$version' else 1)" 2>/dev/null
}

case "$command" in
install)
    if ! curl_speaks_http2; then
        command -v apt-get >/dev/null 2>&1 || { echo "tools/http2.sh: no apt-get: install a curl with HTTP/2" >&2; exit 1; }
        sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        echo "tools/http2.sh: installing curl with apt-get" >&2
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq curl >/dev/null
    fi
    curl_speaks_http2 || { echo "tools/http2.sh: this curl has no HTTP/2 (curl -V lists no HTTP2)" >&2; exit 1; }
    if ! has_h2; then
        [ -x "$python" ] || { echo "tools/http2.sh: no venv at .build/python-venv: run tools/setup.sh --tests first" >&2; exit 1; }
        echo "tools/http2.sh: installing h2==$version into .build/python-venv" >&2
        "$root/.build/python-venv/bin/pip" install -q "h2==$version"
    fi
    has_h2 || { echo "tools/http2.sh: h2 $version is not importable after installing" >&2; exit 1; }
    ;;
check)
    curl_speaks_http2 && has_h2
    ;;
*)
    echo "usage: tools/http2.sh install|check" >&2
    exit 2
    ;;
esac
