#!/usr/bin/env bash
# Proves a release archive runs where no Swift was ever installed. Makes a minimal Debian 12 root with
# debootstrap (cached in ~/.cache/kakapo/clean-root-bookworm.tar, or $KAKAPO_CACHE), installs into it only
# the packages the archive's README names on its "Runtime packages:" line, installs the archive with
# install.sh, and there (chroot, sharing this machine's network) runs `kakapo --version`, the quick start
# (replay of the demo cassette, answered to curl run from OUTSIDE the root: no client is installed in it),
# a recording through a local upstream that runs outside the root, and a replay of that recording; it
# checks the completions and the man page are installed. Exits 0 only when all of that works.
#
# With --clients DIST it also proves the package managers' packages tools/release.sh wrote into DIST: in a
# root that has Debian's python3, nodejs, npm and golang-go (and still no Swift), it installs the
# kakapo-proxy and pytest-kakapo wheels with `pip --no-index` (pytest's and requests' wheels for the
# root's Python are downloaded here first), the npm tarballs with `npm install --offline`, and the Go
# package from its folder (GOPROXY=off), and runs one test in pytest, node:test and go test each: recorded
# through the upstream, then replayed with it gone. pytest and node find the binary in their packages (PATH has no kakapo);
# go test finds the archive's, on PATH.
#
#   tools/check-clean-machine.sh dist/kakapo-VERSION-linux-ARCH.tar.gz
#   tools/check-clean-machine.sh --clients dist dist/kakapo-VERSION-linux-ARCH.tar.gz
#   tools/check-clean-machine.sh --prepare      # only make (and cache) the clean root
#
# Needs root (debootstrap, chroot, mount), debootstrap, curl, python3 and a Debian mirror (and PyPI for
# pytest's and requests' wheels, with --clients).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

fail() { echo "check-clean-machine: $*" >&2; exit 1; }
say() { echo "check-clean-machine: $*" >&2; }

clients=""
if [ "${1:-}" = "--clients" ]; then
    [ $# -ge 2 ] || fail "--clients needs the folder tools/release.sh wrote (dist)"
    clients=$(realpath "$2") || fail "--clients $2: no such folder"
    [ -d "$clients" ] || fail "--clients $2: not a folder"
    shift 2
fi
[ $# -eq 1 ] || fail "usage: tools/check-clean-machine.sh [--clients DIST] ARCHIVE.tar.gz | --prepare"
[ "$(id -u)" = "0" ] || fail "needs root (debootstrap, chroot and mount)"
command -v debootstrap >/dev/null || fail "needs debootstrap (apt-get install debootstrap)"
command -v curl >/dev/null || fail "needs curl (the test client, run outside the root)"
command -v python3 >/dev/null || fail "needs python3 (the upstream, run outside the root)"

suite=bookworm
cache_dir=${KAKAPO_CACHE:-$HOME/.cache/kakapo}
cache=$cache_dir/clean-root-$suite.tar
mirror=${KAKAPO_DEBIAN_MIRROR:-}
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources | head -n 1)
fi
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /tmp/kakapo-clean.XXXXXX)
root=$work/root
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for mount in "$root/proc" "$root/dev"; do
        if mountpoint -q "$mount" 2>/dev/null; then umount -l "$mount" || true; fi
    done
    # Only remove the root once nothing is mounted in it any more.
    if ! grep -q " $work/" /proc/mounts; then rm -rf "$work"; fi
}
trap cleanup EXIT

if [ ! -f "$cache" ]; then
    say "making a minimal Debian $suite root from $mirror (once; cached in $cache)"
    mkdir -p "$root" "$cache_dir"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap failed (log above)"; }
    tar -C "$root" -cf "$cache.partial" . && mv "$cache.partial" "$cache"
    rm -rf "$root"
fi
if [ "$1" = "--prepare" ]; then say "clean root ready: $cache"; exit 0; fi

archive=$(realpath "$1") || fail "no archive $1"
[ -f "$archive" ] || fail "no archive $1"
name=$(basename "$archive" .tar.gz)
version=$(echo "$name" | sed -n 's/^kakapo-\([0-9][0-9A-Za-z.+-]*\)-linux-[a-z0-9_]*$/\1/p')
[ -n "$version" ] || fail "$archive is not named kakapo-VERSION-linux-ARCH.tar.gz"
packages=$(tar -xzOf "$archive" "$name/README" | sed -n 's/^Runtime packages: *//p' | head -n 1)
[ -n "$packages" ] || fail "$name/README in $archive has no \"Runtime packages:\" line"
case "$packages" in *[!a-z0-9.+\ -]*) fail "unexpected characters in the runtime packages: $packages" ;; esac
[ -f "$archive.sha256" ] || fail "no checksum $archive.sha256 beside the archive"

# The clients' toolchains from Debian, installed once into a second cached root.
client_packages="python3 python3-venv nodejs npm golang-go"
client_cache=$cache_dir/clean-root-$suite-clients.tar
if [ -n "$clients" ] && [ ! -f "$client_cache" ]; then
    say "adding Debian's $client_packages to the clean root (once; cached in $client_cache)"
    mkdir -p "$root"
    tar -C "$root" -xf "$cache"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # shellcheck disable=SC2086 # the names are this script's own.
    chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin DEBIAN_FRONTEND=noninteractive sh -c \
        "apt-get update -qq && apt-get install -y -qq --no-install-recommends $client_packages" \
        >"$work/apt-clients.log" 2>&1 || { tail -n 20 "$work/apt-clients.log" >&2; fail "apt-get install $client_packages failed"; }
    chroot "$root" apt-get clean
    tar -C "$root" -cf "$client_cache.partial" . && mv "$client_cache.partial" "$client_cache"
    rm -rf "$root"
fi
if [ -n "$clients" ]; then cache=$client_cache; fi

mkdir -p "$root"
tar -C "$root" -xf "$cache"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount --bind /dev "$root/dev"
mount -t proc proc "$root/proc"
root_environment=(/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8)
in_root() { chroot "$root" "${root_environment[@]}" "$@"; }

say "installing the runtime packages the archive names: $packages"
in_root /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$work/apt.log" 2>&1 ||
    { tail -n 20 "$work/apt.log" >&2; fail "apt-get update in the root failed"; }
# shellcheck disable=SC2086 # the package names are checked above and split on purpose.
in_root /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages \
    >>"$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log" >&2; fail "apt-get install $packages failed"; }
if in_root sh -c 'command -v swift || ls /usr/lib/swift /usr/share/swift' >/dev/null 2>&1; then
    fail "the clean root has Swift in it"
fi

say "installing $name with install.sh (PREFIX=/usr/local)"
mkdir -p "$root/tmp/dist"
cp "$archive" "$archive.sha256" "$root/tmp/dist/"
cp install.sh "$root/tmp/install.sh"
in_root /usr/bin/env PREFIX=/usr/local sh /tmp/install.sh "/tmp/dist/$name.tar.gz" >&2 || fail "install.sh failed"

reported=$(in_root kakapo --version) || fail "kakapo --version failed in the clean root"
[ "$reported" = "$version" ] || fail "kakapo --version says \"$reported\", the archive is named for $version"
say "kakapo --version: $reported"

for file in bin/kakapo share/man/man1/kakapo.1 share/bash-completion/completions/kakapo \
    share/zsh/site-functions/_kakapo share/fish/vendor_completions.d/kakapo.fish share/kakapo/demo.json; do
    [ -s "$root/usr/local/$file" ] || fail "install.sh did not install $file"
done
grep -Eq '^\.(Dt|TH) ' "$root/usr/local/share/man/man1/kakapo.1" || fail "kakapo.1 is not a man page"
grep -q 'replay' "$root/usr/local/share/bash-completion/completions/kakapo" || fail "the bash completion names no subcommand"

# Starts kakapo in the root in the background; sets `port` from its listening line.
start_kakapo() {
    local log=$1
    shift
    # The files exist before the background job opens them, so that polling them never fails.
    : >"$work/$log.out"
    : >"$work/$log.err"
    # Not through in_root: a backgrounded function is a subshell, and SIGTERM must reach kakapo itself.
    chroot "$root" "${root_environment[@]}" kakapo "$@" >"$work/$log.out" 2>"$work/$log.err" &
    kakapo_pid=$!
    pids+=("$kakapo_pid")
    port=""
    for _ in $(seq 1 300); do
        port=$(sed -n 's/^kakapo listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/$log.out")
        [ -n "$port" ] && return 0
        kill -0 "$kakapo_pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/$log.err" >&2
    fail "kakapo $* did not start"
}
stop_kakapo() {
    kill -TERM "$kakapo_pid"
    wait "$kakapo_pid" || fail "kakapo did not exit 0 on SIGTERM: $(cat "$work/$1.err")"
}

say "quick start: replay of the demo cassette"
start_kakapo replay replay --cassette /usr/local/share/kakapo/demo.json --port 0
answer=$(curl -fsS "http://127.0.0.1:$port/users/1") || fail "curl to the replaying kakapo failed"
echo "$answer" | grep -q "Ada Lovelace" || fail "the demo cassette's /users/1 answered: $answer"
stop_kakapo replay

# Serves $work/site/hello.txt on a free port outside the root; sets upstream_pid and upstream_port.
start_upstream() {
    mkdir -p "$work/site"
    echo "hello from the upstream outside the root" >"$work/site/hello.txt"
    : >"$work/upstream.out"
    python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" >"$work/upstream.out" 2>&1 &
    upstream_pid=$!
    pids+=("$upstream_pid")
    upstream_port=""
    for _ in $(seq 1 100); do
        upstream_port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$work/upstream.out")
        [ -n "$upstream_port" ] && return 0
        sleep 0.1
    done
    fail "the upstream (python3 -m http.server) did not start"
}

say "recording through an upstream outside the root"
start_upstream
start_kakapo record record --upstream "http://127.0.0.1:$upstream_port" --cassette /tmp/recorded.json --port 0
answer=$(curl -fsS "http://127.0.0.1:$port/hello.txt") || fail "curl through the recording kakapo failed"
[ "$answer" = "hello from the upstream outside the root" ] || fail "recording answered: $answer"
stop_kakapo record
kill "$upstream_pid"
grep -q "hello.txt" "$root/tmp/recorded.json" || fail "the recorded cassette has no /hello.txt"

say "replay of the recording with the upstream gone"
start_kakapo replay-recorded replay --cassette /tmp/recorded.json --port 0
answer=$(curl -fsS "http://127.0.0.1:$port/hello.txt") || fail "curl to the replay of the recording failed"
[ "$answer" = "hello from the upstream outside the root" ] || fail "the replayed recording answered: $answer"
stop_kakapo replay-recorded

if [ -z "$clients" ]; then
    say "ok: $name runs on a clean Debian $suite with only: $packages"
    exit 0
fi

# The package managers' packages: each runner's test records, then replays with the upstream gone.
wheel=$(ls "$clients"/kakapo_proxy-"$version"-py3-none-manylinux_*.whl 2>/dev/null | tail -n 1)
plugin=$(ls "$clients"/pytest_kakapo-*-py3-none-any.whl 2>/dev/null | sort -V | tail -n 1)
npm_main=$clients/kakapo-proxy-$version.tgz
npm_platform=$clients/kakapo-proxy-linux-x64-$version.tgz
[ -n "$wheel" ] || fail "no kakapo_proxy-$version wheel in $clients (tools/release.sh builds it)"
[ -n "$plugin" ] || fail "no pytest_kakapo wheel in $clients"
[ -f "$npm_main" ] && [ -f "$npm_platform" ] || fail "no $npm_main and $npm_platform (clients/node/pack.sh)"
inside=$root/tmp/clients
mkdir -p "$inside/pypi" "$inside/py-project" "$inside/node-project/test" "$inside/go-project"
cp "$wheel" "$plugin" "$npm_main" "$npm_platform" "$inside/"
cp -r clients/go "$inside/go-module"
go_module=$(sed -n 's/^module *//p' clients/go/go.mod)

# The environment of the runners: no kakapo on PATH (the packages carry it) but for go test.
runner() { in_root /usr/bin/env PATH=/usr/bin:/bin "UPSTREAM=http://127.0.0.1:$upstream_port" "$@"; }

in_root python3 -m venv /tmp/clients/venv >&2 || fail "python3 -m venv failed in the root"
# pytest's and requests' wheels for the root's Python, fetched here first (with this machine's pip
# settings: a package mirror or proxy the root knows nothing of), so that the install has no index.
root_python=$(in_root python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "no python3 in the root"
say "downloading pytest's and requests' wheels for the root's Python $root_python, for pip --no-index"
python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version "$root_python" \
    --dest "$inside/pypi" 'pytest>=8' requests >&2 || fail "pip download of pytest and requests failed"
say "pip install of the two wheels with no index"
in_root /tmp/clients/venv/bin/pip install -q --disable-pip-version-check --no-index --find-links /tmp/clients/pypi \
    "/tmp/clients/$(basename "$wheel")" "/tmp/clients/$(basename "$plugin")" requests >&2 || fail "pip install of the wheels failed"
printf '[pytest]\n' >"$inside/py-project/pytest.ini"
cat >"$inside/py-project/test_hello.py" <<'PY'
import os

import pytest
import requests


@pytest.mark.kakapo
def test_hello():
    answer = requests.get(os.environ["UPSTREAM"] + "/hello.txt", timeout=30)
    assert answer.text.strip() == "hello from the upstream outside the root"
PY

say "npm install of the two tarballs, offline"
printf '{"name": "clean-check", "version": "1.0.0", "private": true}\n' >"$inside/node-project/package.json"
in_root sh -c "cd /tmp/clients/node-project && npm install --offline --no-audit --no-fund --loglevel=error \
    /tmp/clients/$(basename "$npm_main") /tmp/clients/$(basename "$npm_platform")" >&2 || fail "npm install of the tarballs failed"
cat >"$inside/node-project/test/hello.test.js" <<'JS'
const { test } = require('node:test');
const assert = require('node:assert');
require('kakapo-proxy/node-test').useKakapo();

test('hello', async () => {
  const answer = await fetch(process.env.UPSTREAM + '/hello.txt');
  assert.strictEqual((await answer.text()).trim(), 'hello from the upstream outside the root');
});
JS

printf 'module cleancheck\n\ngo 1.19\n\nrequire %s v0.0.0\n\nreplace %s => /tmp/clients/go-module\n' \
    "$go_module" "$go_module" >"$inside/go-project/go.mod"
cat >"$inside/go-project/hello_test.go" <<GO
package cleancheck

import (
	"io"
	"os"
	"strings"
	"testing"

	"$go_module/kakapotest"
)

func TestHello(t *testing.T) {
	session := kakapotest.Session(t)
	answer, err := session.Client.Get(os.Getenv("UPSTREAM") + "/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer answer.Body.Close()
	body, _ := io.ReadAll(answer.Body)
	if strings.TrimSpace(string(body)) != "hello from the upstream outside the root" {
		t.Fatalf("answered %q", body)
	}
}
GO
go_env=(CGO_ENABLED=0 GOPROXY=off GOFLAGS=-mod=mod GOCACHE=/tmp/clients/gocache GOPATH=/tmp/clients/gopath)

run_clients() {
    local mode=$1
    runner KAKAPO_RECORD="$mode" sh -c 'cd /tmp/clients/py-project && /tmp/clients/venv/bin/python -m pytest -q -p no:cacheprovider' >&2 ||
        fail "pytest (KAKAPO_RECORD=$mode) failed in the root"
    runner KAKAPO_RECORD="$mode" sh -c 'cd /tmp/clients/node-project && node --test test/' >&2 ||
        fail "node --test (KAKAPO_RECORD=$mode) failed in the root"
    in_root /usr/bin/env "UPSTREAM=http://127.0.0.1:$upstream_port" KAKAPO_RECORD="$mode" "${go_env[@]}" \
        sh -c 'cd /tmp/clients/go-project && go test -count=1 ./...' >&2 || fail "go test (KAKAPO_RECORD=$mode) failed in the root"
}

say "pytest, node --test and go test record through the upstream"
start_upstream
run_clients once
kill "$upstream_pid"
wait "$upstream_pid" 2>/dev/null || true
for cassette in py-project/cassettes/test_hello/test_hello.json node-project/test/cassettes/hello.test/hello.json; do
    grep -q "hello.txt" "$inside/$cassette" || fail "no /hello.txt recorded in $cassette"
done
ls "$inside"/go-project/cassettes/*.json >/dev/null 2>&1 || fail "go test recorded no cassette in go-project/cassettes"
say "pytest, node --test and go test replay with the upstream gone"
run_clients none

say "ok: $name runs on a clean Debian $suite with only: $packages; the wheels, the npm tarballs and the Go package record and replay there"
