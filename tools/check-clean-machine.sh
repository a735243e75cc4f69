#!/usr/bin/env bash
# Proves a release archive runs where no Swift was ever installed. Makes a minimal Debian 12 root with
# debootstrap (cached in ~/.cache/kakapo/clean-root-bookworm.tar, or $KAKAPO_CACHE), installs into it only
# the packages the archive's README names on its "Runtime packages:" line, installs the archive with
# install.sh, and there (chroot, sharing this machine's network) runs `kakapo --version`, the quick start
# (replay of the demo cassette, answered to curl run from OUTSIDE the root: no client is installed in it),
# a recording through a local upstream that runs outside the root, and a replay of that recording; it
# checks the completions and the man page are installed. Exits 0 only when all of that works.
#
#   tools/check-clean-machine.sh dist/kakapo-VERSION-linux-ARCH.tar.gz
#   tools/check-clean-machine.sh --prepare      # only make (and cache) the clean root
#
# Needs root (debootstrap, chroot, mount), debootstrap, curl, python3 and a Debian mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

fail() { echo "check-clean-machine: $*" >&2; exit 1; }
say() { echo "check-clean-machine: $*" >&2; }

[ $# -eq 1 ] || fail "usage: tools/check-clean-machine.sh ARCHIVE.tar.gz | --prepare"
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

say "recording through an upstream outside the root"
mkdir -p "$work/site"
echo "hello from the upstream outside the root" >"$work/site/hello.txt"
: >"$work/upstream.out"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" >"$work/upstream.out" 2>&1 &
upstream_pid=$!
pids+=("$upstream_pid")
upstream_port=""
for _ in $(seq 1 100); do
    upstream_port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$work/upstream.out")
    [ -n "$upstream_port" ] && break
    sleep 0.1
done
[ -n "$upstream_port" ] || fail "the upstream (python3 -m http.server) did not start"
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

say "ok: $name runs on a clean Debian $suite with only: $packages"
