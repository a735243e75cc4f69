#!/usr/bin/env bash
# The HTTP/2 upstream the upstream-over-HTTP/2 tests run (Tests/KakapoHTTP2Tests/UpstreamHTTP2Tests.swift):
# a small Python server on the `h2` library (pure Python), cleartext with prior knowledge or TLS with ALPN.
#
#   tools/h2upstream.sh install   installs h2 (pinned) into .build/python-venv, which tools/setup.sh --tests makes
#   tools/h2upstream.sh check     exit 0 when the venv can import it
#
# Idempotent: a venv that already has this version is left alone.
set -euo pipefail
command=${1:?usage: tools/h2upstream.sh install|check}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.build/python-venv/bin/python"
version=4.4.1

has_it() {
    [ -x "$python" ] && "$python" -c "import h2, sys; sys.exit(0 if h2.__version__ == '$version' else 1)" 2>/dev/null
}

case "$command" in
install)
    if ! has_it; then
        [ -x "$python" ] || { echo "tools/h2upstream.sh: no venv at .build/python-venv: run tools/setup.sh --tests first" >&2; exit 1; }
        echo "tools/h2upstream.sh: installing h2==$version into .build/python-venv" >&2
        "$root/.build/python-venv/bin/pip" install -q "h2==$version"
    fi
    has_it || { echo "tools/h2upstream.sh: h2 $version is not importable after installing" >&2; exit 1; }
    ;;
check)
    has_it
    ;;
*)
    echo "usage: tools/h2upstream.sh install|check" >&2
    exit 2
    ;;
esac
