#!/usr/bin/env bash
# Builds `kakapo` from this checkout (release, `swift build -c release --product kakapo`) and installs it
# into $PREFIX/bin (PREFIX defaults to ~/.local), with its bash, zsh and fish completions under
# $PREFIX/share, generated from the built binary. Says how to put $PREFIX/bin on your PATH when it is not.
# Linux and macOS; tools/setup.sh first installs what the build needs.
#
#   tools/install-from-source.sh                       # about 8 minutes from clean on 2 cores
#   PREFIX=/opt/kakapo tools/install-from-source.sh
#   KAKAPO_BINARY=.build/debug/kakapo tools/install-from-source.sh   # installs a binary already built
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "tools/install-from-source.sh: $*" >&2; exit 1; }

prefix=${PREFIX:-${HOME:?tools/install-from-source.sh: neither PREFIX nor HOME is set}/.local}
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
binary=${KAKAPO_BINARY:-}
if [ -z "$binary" ]; then
    echo "tools/install-from-source.sh: building kakapo (release) in .build" >&2
    swift build -c release --product kakapo >&2
    binary=$(swift build -c release --show-bin-path)/kakapo
fi
[ -x "$binary" ] || fail "no kakapo binary at $binary"
version=$("$binary" --version) || fail "$binary does not run"

# Each file is written under a temporary name and renamed, so a kakapo running from $PREFIX/bin is never
# overwritten in place and an interrupted install leaves the old one.
place() { # source target mode
    mkdir -p "$(dirname "$2")"
    cp "$1" "$2.installing.$$"
    chmod "$3" "$2.installing.$$"
    mv -f "$2.installing.$$" "$2"
}
completions=$(mktemp -d)
trap 'rm -rf "$completions"' EXIT
"$binary" --generate-completion-script bash >"$completions/bash"
"$binary" --generate-completion-script zsh >"$completions/zsh"
"$binary" --generate-completion-script fish >"$completions/fish"
place "$binary" "$prefix/bin/kakapo" 755
place "$completions/bash" "$prefix/share/bash-completion/completions/kakapo" 644
place "$completions/zsh" "$prefix/share/zsh/site-functions/_kakapo" 644
place "$completions/fish" "$prefix/share/fish/vendor_completions.d/kakapo.fish" 644
place cassettes/demo.json "$prefix/share/kakapo/demo.json" 644

echo "installed kakapo $version into $prefix/bin/kakapo"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "add $prefix/bin to your PATH: export PATH=\"$prefix/bin:\$PATH\" (in ~/.bashrc or ~/.zshrc to keep it)" ;;
esac
