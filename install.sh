#!/bin/sh
# Installs a Kakapo release archive without root: checks its SHA-256 (from the .sha256 file beside it, or
# --sha256), then copies `kakapo` into $PREFIX/bin, its man page into $PREFIX/share/man/man1, its bash, zsh
# and fish completions under $PREFIX/share, and the demo cassette and licenses into $PREFIX/share/kakapo.
# PREFIX defaults to ~/.local.
#
# What the check guards against: the .sha256 beside the archive catches a corrupted or truncated download;
# fetched over https:// it also keeps a network in between from changing the archive. It cannot catch a
# release host that serves a changed archive with a matching .sha256: for that, pin the sum published
# elsewhere (release notes, your own lock file) with --sha256. Over plain http:// anyone in between could
# change both files, so a URL starting http:// needs --sha256, and an https:// download may not be
# redirected to http://.
#
#   sh install.sh kakapo-0.9.0-linux-x86_64.tar.gz
#   sh install.sh https://example.org/releases/kakapo-0.9.0-linux-x86_64.tar.gz
#   PREFIX=/opt/kakapo sh install.sh --sha256 HEX kakapo-0.9.0-linux-x86_64.tar.gz
set -eu

fail() {
    echo "install.sh: $*" >&2
    exit 1
}
usage="usage: install.sh [--sha256 HEX] ARCHIVE_URL_OR_PATH (kakapo-VERSION-linux-ARCH.tar.gz)"

expected=""
source=""
while [ $# -gt 0 ]; do
    case "$1" in
        --sha256)
            [ $# -ge 2 ] || fail "--sha256 needs the archive's SHA-256 (64 hex digits)"
            expected=$2
            shift 2
            ;;
        --sha256=*)
            expected=${1#--sha256=}
            shift
            ;;
        -h | --help)
            echo "$usage"
            exit 0
            ;;
        -*) fail "unknown option $1; $usage" ;;
        *)
            [ -z "$source" ] || fail "one archive only; $usage"
            source=$1
            shift
            ;;
    esac
done
[ -n "$source" ] || fail "$usage"

name=$(basename "$source")
name=${name%.tar.gz}
case "$name" in
    kakapo-*-linux-*) ;;
    *) fail "$source is not named kakapo-VERSION-linux-ARCH.tar.gz" ;;
esac
case "$name" in *[!A-Za-z0-9._+-]*) fail "unexpected characters in the archive name $name" ;; esac

prefix=${PREFIX:-${HOME:?install.sh: neither PREFIX nor HOME is set}/.local}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kakapo-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

download() {
    case "$1" in
        https://*) protocols='=https' ;;
        *) protocols='=https,http' ;;
    esac
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --proto "$protocols" --proto-redir "$protocols" -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        case "$1" in
            https://*)
                # wget has no way to refuse a redirect to http:// for one file (--https-only is for recursive
                # downloads): the answers' headers are kept, and a download that went through one is refused.
                wget -S -O "$2" "$1" 2>"$tmp/wget.log" || { tail -n 5 "$tmp/wget.log" >&2; fail "cannot download $1"; }
                if grep -qi '^ *location: *http://' "$tmp/wget.log"; then
                    rm -f "$2"
                    fail "$1 was redirected to plain http://; refusing it"
                fi
                ;;
            *) wget -q -O "$2" "$1" ;;
        esac
    else
        fail "needs curl or wget to download $1"
    fi
}

archive=$tmp/$name.tar.gz
case "$source" in
    http://*)
        [ -n "$expected" ] ||
            fail "$source is plain http://: a .sha256 fetched beside it could be changed with it; pass the sum published elsewhere with --sha256 HEX, or use https://"
        ;;
esac
case "$source" in
    http://* | https://*)
        download "$source" "$archive" || fail "cannot download $source"
        if [ -z "$expected" ]; then
            download "$source.sha256" "$tmp/checksum" ||
                fail "cannot download $source.sha256 (or pass --sha256 HEX)"
        fi
        ;;
    *)
        [ -f "$source" ] || fail "no archive $source"
        cp "$source" "$archive"
        if [ -z "$expected" ]; then
            [ -f "$source.sha256" ] || fail "no $source.sha256 beside the archive (or pass --sha256 HEX)"
            cp "$source.sha256" "$tmp/checksum"
        fi
        ;;
esac
if [ -z "$expected" ]; then
    expected=$(head -c 200 "$tmp/checksum" | head -n 1 | cut -d ' ' -f 1)
fi
expected=$(printf '%s' "$expected" | tr 'A-F' 'a-f')
case "$expected" in
    *[!0-9a-f]* | "") fail "the expected SHA-256 \"$expected\" is not 64 hex digits" ;;
esac
[ ${#expected} -eq 64 ] || fail "the expected SHA-256 \"$expected\" is not 64 hex digits"

if command -v sha256sum >/dev/null 2>&1; then
    actual=$(sha256sum "$archive" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
    actual=$(shasum -a 256 "$archive" | cut -d ' ' -f 1)
else
    fail "needs sha256sum or shasum to check the archive"
fi
[ "$actual" = "$expected" ] ||
    fail "checksum mismatch for $source: expected $expected, got $actual; nothing installed"

# Only regular files and folders under $name/ are unpacked: a member with an absolute path or a `..`
# could land outside the unpacking folder, and a link could make the copies below read (and publish
# under share/kakapo) any file of this machine.
members=$(tar -tzf "$archive") || fail "cannot read $source as a tar.gz archive"
outside=$(printf '%s\n' "$members" | awk -v name="$name" '{
    n = length(name)
    if (substr($0, 1, n) != name || (length($0) > n && substr($0, n + 1, 1) != "/") || $0 ~ /(^|\/)\.\.(\/|$)/) {
        print; exit
    }
}')
[ -z "$outside" ] || fail "$source holds \"$outside\", outside $name/; nothing installed"
kinds=$(tar -tvzf "$archive" | awk 'substr($0, 1, 1) != "-" && substr($0, 1, 1) != "d" { print; exit }')
[ -z "$kinds" ] || fail "$source holds a link or special file ($kinds); only files and folders are installed; nothing installed"
mkdir "$tmp/unpacked"
tar -xzf "$archive" -C "$tmp/unpacked" || fail "cannot unpack $source"
linked=$(find "$tmp/unpacked" ! -type f ! -type d | head -n 1)
[ -z "$linked" ] || fail "$source unpacked a link or special file (${linked#"$tmp/unpacked/"}); nothing installed"
from=$tmp/unpacked/$name
[ -f "$from/bin/kakapo" ] || fail "$source holds no $name/bin/kakapo"

# Copies $1 (relative to the archive) to $2 (relative to PREFIX) through a temporary name, so that a
# running kakapo is replaced rather than overwritten; skips files the archive does not have.
place() {
    [ -f "$from/$1" ] || return 0
    mkdir -p "$prefix/$(dirname "$2")" || fail "cannot create $prefix/$(dirname "$2")"
    cp "$from/$1" "$prefix/$2.new.$$" || fail "cannot write $prefix/$2"
    chmod "$3" "$prefix/$2.new.$$"
    mv -f "$prefix/$2.new.$$" "$prefix/$2" || fail "cannot write $prefix/$2"
}
place bin/kakapo bin/kakapo 755
place share/man/man1/kakapo.1 share/man/man1/kakapo.1 644
place share/bash-completion/completions/kakapo share/bash-completion/completions/kakapo 644
place share/zsh/site-functions/_kakapo share/zsh/site-functions/_kakapo 644
place share/fish/vendor_completions.d/kakapo.fish share/fish/vendor_completions.d/kakapo.fish 644
place share/kakapo/demo.json share/kakapo/demo.json 644
place share/kakapo/THIRD-PARTY-LICENSES share/kakapo/THIRD-PARTY-LICENSES 644
place LICENSE share/kakapo/LICENSE 644
place README share/kakapo/README 644

version=$("$prefix/bin/kakapo" --version 2>/dev/null) ||
    fail "installed $prefix/bin/kakapo, but it does not run here: see share/kakapo/README for what it needs"
echo "installed kakapo $version into $prefix/bin/kakapo"
case ":${PATH:-}:" in
    *":$prefix/bin:"*) ;;
    *) echo "add $prefix/bin to your PATH: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
