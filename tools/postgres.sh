#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and benchmarks of the shared Store.
#
#   tools/postgres.sh start DIR   installs PostgreSQL when missing (Debian's package), creates a cluster in
#                                 DIR (once) on a free loopback port, starts it, and prints its URL:
#                                 postgres://kakapo:kakapo-test@127.0.0.1:PORT/postgres
#   tools/postgres.sh stop DIR    stops it (DIR and the port are kept, so `start DIR` brings it back)
#   tools/postgres.sh url DIR     prints the URL again
#
# PostgreSQL refuses to run as root: as root the server runs as the `postgres` user the package creates.
set -euo pipefail
command=${1:?usage: tools/postgres.sh start|stop|url DIR}
dir=${2:?usage: tools/postgres.sh start|stop|url DIR}
password=kakapo-test

find_bin() {
    for candidate in "$(command -v pg_ctl 2>/dev/null || true)" /usr/lib/postgresql/*/bin/pg_ctl /usr/local/pgsql/bin/pg_ctl; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then dirname "$candidate"; return 0; fi
    done
    return 1
}

bin=$(find_bin || true)
if [ -z "$bin" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        echo "tools/postgres.sh: installing postgresql with apt-get" >&2
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    fi
    bin=$(find_bin) || { echo "tools/postgres.sh: cannot find or install PostgreSQL (pg_ctl)" >&2; exit 1; }
fi

as_owner() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

url() { echo "postgres://kakapo:$password@127.0.0.1:$(cat "$dir/port")/postgres"; }

case "$command" in
start)
    mkdir -p "$dir"
    if [ ! -f "$dir/port" ]; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' >"$dir/port"
        echo "$password" >"$dir/password"
        mkdir -p "$dir/data" "$dir/run"
        if [ "$(id -u)" = "0" ]; then chown -R postgres "$dir"; chmod 755 "$dir"; fi
        as_owner "$bin/initdb" -D "$dir/data" --username=kakapo --pwfile="$dir/password" --auth=scram-sha-256 \
            --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if [ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        url
        exit 0
    fi
    # The server outlives this script: it must not keep descriptors the caller handed down (a caller that
    # waits for them to close, as Foundation's Process does on Linux, would wait for the server to stop).
    (
        for fd in /proc/self/fd/*; do
            n=${fd##*/}
            if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
        done
        exec </dev/null
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-p $(cat "$dir/port") -k $dir/run -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
            start >/dev/null
    ) || { cat "$dir/server.log" >&2; exit 1; }
    url
    ;;
stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
url)
    url
    ;;
*)
    echo "tools/postgres.sh: unknown command $command (start, stop or url)" >&2
    exit 2
    ;;
esac
