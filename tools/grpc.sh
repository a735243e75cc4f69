#!/usr/bin/env bash
# The gRPC peer of the gRPC tests (Tests/KakapoGRPCTests): grpcio and grpcio-tools from PyPI, pinned, in the
# test venv (.build/python-venv, made by tools/setup.sh --tests). The tests write the Python stubs and a descriptor
# set for Tests/KakapoGRPCTests/Fixtures/demo.proto with `python -m grpc_tools.protoc` into a temporary folder.
#
#   tools/grpc.sh install   installs them when missing (idempotent) and prints the venv's python
#   tools/grpc.sh path      prints the venv's python when both import (exit 1 otherwise)
set -euo pipefail
command=${1:?usage: tools/grpc.sh install|path}
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build/python-venv"
python="$venv/bin/python"
GRPCIO_VERSION=1.85.3
GRPCIO_TOOLS_VERSION=1.85.1

installed() {
    [ -x "$python" ] && "$python" -c 'import grpc, grpc_tools.protoc' >/dev/null 2>&1
}

case "$command" in
install)
    if ! installed; then
        if [ ! -x "$python" ]; then
            python3 -m venv "$venv" || { echo "tools/grpc.sh: cannot make $venv (apt-get install python3-venv)" >&2; exit 1; }
        fi
        echo "tools/grpc.sh: installing grpcio==$GRPCIO_VERSION grpcio-tools==$GRPCIO_TOOLS_VERSION" >&2
        "$venv/bin/pip" install -q "grpcio==$GRPCIO_VERSION" "grpcio-tools==$GRPCIO_TOOLS_VERSION" >&2
    fi
    installed || { echo "tools/grpc.sh: grpcio does not import from $python" >&2; exit 1; }
    echo "$python"
    ;;
path)
    installed || exit 1
    echo "$python"
    ;;
*)
    echo "usage: tools/grpc.sh install|path" >&2
    exit 2
    ;;
esac
