#!/usr/bin/env bash
# The forward proxy the upstream-proxy tests go through (Debian's tinyproxy, 1.10 or later for BasicAuth).
#
#   tools/tinyproxy.sh install   installs tinyproxy with apt-get when it is missing, and prints its path
#   tools/tinyproxy.sh path      prints the path of the tinyproxy binary (exit 1 when there is none)
#
# The tests start their own instance on a free loopback port with a generated configuration
# (Tests/KakapoCLITests/UpstreamProxyTests.swift); the package's own service is stopped and disabled so
# nothing listens on tinyproxy's default port 8888.
set -euo pipefail
command=${1:?usage: tools/tinyproxy.sh install|path}

find_bin() {
    for candidate in "$(command -v tinyproxy 2>/dev/null || true)" /usr/bin/tinyproxy /usr/sbin/tinyproxy; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
    done
    return 1
}

case "$command" in
install)
    if ! find_bin >/dev/null; then
        command -v apt-get >/dev/null 2>&1 || { echo "tools/tinyproxy.sh: no apt-get: install tinyproxy yourself" >&2; exit 1; }
        sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        echo "tools/tinyproxy.sh: installing tinyproxy with apt-get" >&2
        $sudo apt-get update -qq >&2
        # policy-rc.d-free containers start the service on install: stop it again, the tests run their own.
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq tinyproxy >/dev/null
        if command -v systemctl >/dev/null 2>&1; then $sudo systemctl disable --now tinyproxy >/dev/null 2>&1 || true; fi
        if command -v service >/dev/null 2>&1; then $sudo service tinyproxy stop >/dev/null 2>&1 || true; fi
    fi
    find_bin || { echo "tools/tinyproxy.sh: cannot find or install tinyproxy" >&2; exit 1; }
    ;;
path)
    find_bin
    ;;
*)
    echo "usage: tools/tinyproxy.sh install|path" >&2
    exit 2
    ;;
esac
