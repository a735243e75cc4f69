#!/usr/bin/env bash
# Builds the release archive dist/kakapo-VERSION-linux-ARCH.tar.gz and its .sha256: a release build of
# `kakapo` with the Swift runtime linked in (--static-swift-stdlib), stripped; shell completions for bash,
# zsh and fish and a man page, all generated from the argument parser (so they cannot drift from --help);
# the demo cassette, LICENSE, the licenses of the code linked in, and a short README whose
# "Runtime packages:" line tools/check-clean-machine.sh installs; beside it, the same binary in the
# kakapo-proxy wheel and npm packages, and pytest-kakapo's wheel. VERSION comes from
# Sources/KakapoHTTP/KakapoVersion.swift, and the built binary's `--version` must say the same.
#
#   tools/release.sh           # about 10 minutes from clean on 2 cores; the build lives in .build-release
#
# KAKAPO_RELEASE_SCRATCH overrides the scratch path. Runs the compiler under `nice`.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "release: $*" >&2; exit 1; }
say() { echo "release: $*" >&2; }

scratch=${KAKAPO_RELEASE_SCRATCH:-.build-release}
version=$(sed -n 's/^ *public static let current = "\([0-9][0-9A-Za-z.+-]*\)"$/\1/p' Sources/KakapoHTTP/KakapoVersion.swift)
[ -n "$version" ] || fail "no version in Sources/KakapoHTTP/KakapoVersion.swift (public static let current = \"X.Y.Z\")"
case "$(uname -s)" in Linux) ;; *) fail "builds Linux archives only (this is $(uname -s))" ;; esac
arch=$(uname -m)
name=kakapo-$version-linux-$arch
runtime_packages="libcurl4 ca-certificates"

say "building kakapo $version (release, --static-swift-stdlib) in $scratch"
nice -n 10 swift build -c release --product kakapo --static-swift-stdlib --scratch-path "$scratch" >&2
binary=$(swift build -c release --static-swift-stdlib --scratch-path "$scratch" --show-bin-path)/kakapo
# swift-argument-parser's man page generator (the tool behind its generate-manual plugin), built from the
# checked-out dependency: it reads `kakapo --experimental-dump-help`.
say "building swift-argument-parser's generate-manual"
nice -n 10 swift build --product generate-manual --scratch-path "$scratch" >&2
generate_manual=$(swift build --scratch-path "$scratch" --show-bin-path)/generate-manual

stage=dist/$name
rm -rf "$stage" "dist/$name.tar.gz" "dist/$name.tar.gz.sha256"
mkdir -p "$stage/bin" "$stage/share/man/man1" "$stage/share/bash-completion/completions" \
    "$stage/share/zsh/site-functions" "$stage/share/fish/vendor_completions.d" "$stage/share/kakapo"
cp "$binary" "$stage/bin/kakapo"
strip "$stage/bin/kakapo"
kakapo=$stage/bin/kakapo

reported=$("$kakapo" --version)
[ "$reported" = "$version" ] || fail "the built kakapo --version says \"$reported\", KakapoVersion.swift says $version"
if objdump -p "$kakapo" | grep -q 'NEEDED *libswift'; then
    fail "the binary still needs Swift's shared libraries: $(objdump -p "$kakapo" | grep 'NEEDED *libswift' | tr -s ' ')"
fi
needed=$(objdump -p "$kakapo" | sed -n 's/^ *NEEDED *//p' | sort | tr '\n' ' ')
glibc=$(objdump -T "$kakapo" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
glibcxx=$(objdump -T "$kakapo" | grep -o 'GLIBCXX_[0-9.]*' | sed 's/GLIBCXX_//' | sort -V | tail -n 1)
# Ubuntu 22.04 has glibc 2.35 and GCC 12's libstdc++ (GLIBCXX_3.4.30), Debian 12 glibc 2.36 and the same.
if [ "$(printf '%s\n' "$glibc" 2.35 | sort -V | tail -n 1)" = "2.35" ] &&
    [ "$(printf '%s\n' "$glibcxx" 3.4.30 | sort -V | tail -n 1)" = "3.4.30" ]; then
    oldest_systems="Debian 12 (bookworm) and Ubuntu 22.04 (jammy)"
else
    oldest_systems="Debian 12 (bookworm); not Ubuntu 22.04 (glibc 2.35)"
fi

"$kakapo" --generate-completion-script bash >"$stage/share/bash-completion/completions/kakapo"
"$kakapo" --generate-completion-script zsh >"$stage/share/zsh/site-functions/_kakapo"
"$kakapo" --generate-completion-script fish >"$stage/share/fish/vendor_completions.d/kakapo.fish"
# The commit's time (or SOURCE_DATE_EPOCH), so that the same commit makes the same archive.
mtime=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
date=$(date -u -d "@$mtime" +%Y-%m-%d)
"$generate_manual" "$kakapo" --date "$date" --output-directory "$stage/share/man/man1" >&2
[ -s "$stage/share/man/man1/kakapo.1" ] || fail "generate-manual wrote no kakapo.1"
cp cassettes/demo.json "$stage/share/kakapo/demo.json"
cp LICENSE "$stage/LICENSE"

# The licenses of what is linked in: the Swift runtime and Foundation, and the packages.
{
    echo "kakapo $version links in the following code, under these licenses."
    for license in "$scratch"/checkouts/*/LICENSE*; do
        printf '\n===== %s (%s) =====\n\n' "$(basename "$(dirname "$license")")" "$(basename "$license")"
        cat "$license"
    done
    printf '\n===== Swift runtime, standard library and Foundation =====\n\n'
    echo "Apache License 2.0 with Runtime Library Exception: https://swift.org/LICENSE.txt"
} >"$stage/share/kakapo/THIRD-PARTY-LICENSES"

cat >"$stage/README" <<README
Kakapo $version for Linux ($arch): a record-and-replay HTTP proxy.
MIT license (see LICENSE); the licenses of the code linked in: share/kakapo/THIRD-PARTY-LICENSES.

Runtime packages: $runtime_packages
(Debian and Ubuntu package names. The Swift runtime is linked in: no Swift is needed. The binary
also needs libc6, libstdc++6, libgcc-s1 and zlib1g, which every Debian or Ubuntu system has.)

Oldest systems: $oldest_systems
(the binary needs glibc $glibc and libstdc++ GLIBCXX_$glibcxx or later, and libcurl built with OpenSSL:
Debian's libcurl4, not libcurl3-gnutls; proven on Debian 12 with its libcurl 7.88).

Install with install.sh, published beside the archive (no root; checks the SHA-256 in the .sha256 file):
    sh install.sh $name.tar.gz      # into ~/.local (or PREFIX=/usr/local)
or unpack and copy bin/kakapo onto your PATH, share/ under your prefix.

Quick start:
    kakapo replay --cassette share/kakapo/demo.json --port 8080 &
    curl http://127.0.0.1:8080/users/1
    kakapo --help; man kakapo
README

mkdir -p dist
# The package managers' packages, around the same stripped binary: the kakapo-proxy wheel (pip installs
# the binary as a script) and pytest-kakapo's wheel, which depends on it; the npm packages kakapo-proxy
# and its Linux platform package @kakapo-proxy/linux-ARCH, which carries the binary (clients/node/pack.sh).
say "building the kakapo-proxy and pytest-kakapo wheels"
rm -f dist/kakapo_proxy-"$version"-*.whl dist/pytest_kakapo-*.whl
SOURCE_DATE_EPOCH=$mtime python3 tools/build-wheel.py "$kakapo" dist >&2
python3 -m pip wheel -q --disable-pip-version-check --no-deps --wheel-dir dist clients/python >&2
if [ "$arch" = x86_64 ]; then
    say "packing the npm packages"
    clients/node/pack.sh "$kakapo" dist >&2
else
    say "no npm packages: clients/node has a platform package for linux-x64 only (this is $arch)"
fi

# Reproducible: sorted names, no owners, one time, gzip without a timestamp.
tar -C dist --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -cf - "$name" |
    gzip -n -9 >"dist/$name.tar.gz"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
rm -rf "$stage"
say "needs: $needed(glibc $glibc, GLIBCXX_$glibcxx)"
say "dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1)), sha256 $(cut -d' ' -f1 "dist/$name.tar.gz.sha256")"
shopt -s nullglob
for package in dist/kakapo_proxy-"$version"-*.whl dist/pytest_kakapo-*.whl dist/kakapo-proxy-*"$version".tgz; do
    say "$package ($(du -h "$package" | cut -f1))"
done
echo "dist/$name.tar.gz"
