#!/usr/bin/env bash
# Measures what a first build costs (issue 27): a clean clone's `swift build --product kakapo` (what
# `swift run kakapo` does first), and two tiny consumer packages that depend on the clone by path, one on
# product KakapoTesting only, one on product Kakapo only. For each it reports wall and CPU (user+sys)
# time, the foreign load, the packages SwiftPM checked out (with sizes) and the modules it compiled (with
# object files, bytes and the span between the module's first and last output).
#
#   tools/first-build.sh [--rev REV] [--worktree-manifest] [--only clone|testing|kakapo] [--keep] [--out DIR]
#
#   --rev REV            check out REV in the clone (default: HEAD)
#   --worktree-manifest  copy this work tree's Package.swift over the clone's (measure an uncommitted change)
#   --only WHAT          run one of the three measurements
#   --keep               keep the temporary directory (printed at the end)
#   --out DIR            write the reports to DIR (default: a temp dir, printed)
#
# Everything runs under `nice -n 10`. CPU user+sys is the robust figure on a shared machine; wall time
# moves with the load of everything else, so /proc/loadavg is printed before and after each build.
# Package URLs resolve as the machine's git configuration says (here a local mirror), so the "fetch" is
# measured as what is checked out, not as network time.
set -euo pipefail
trap 'echo "first-build.sh: line $LINENO: a command failed (status $?)" >&2' ERR

repo="$(cd "$(dirname "$0")/.." && pwd)"
worktree_manifest=0
rev=HEAD
only=""
keep=0
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --worktree-manifest) worktree_manifest=1 ;;
        --rev)
            [ $# -ge 2 ] || { echo "first-build.sh: --rev needs a commit" >&2; exit 64; }
            rev="$2"
            shift
            ;;
        --only)
            [ $# -ge 2 ] || { echo "first-build.sh: --only needs clone, testing or kakapo" >&2; exit 64; }
            only="$2"
            shift
            case "$only" in clone | testing | kakapo) ;; *)
                echo "first-build.sh: --only '$only': expected clone, testing or kakapo" >&2
                exit 64
                ;;
            esac
            ;;
        --keep) keep=1 ;;
        --out)
            [ $# -ge 2 ] || { echo "first-build.sh: --out needs a directory" >&2; exit 64; }
            out="$2"
            shift
            ;;
        -h | --help)
            sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "first-build.sh: unknown argument '$1' (see --help)" >&2
            exit 64
            ;;
    esac
    shift
done

work="$(mktemp -d "${TMPDIR:-/tmp}/kakapo-first-build.XXXXXX")"
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi
[ -n "$out" ] || out="$work/reports"
mkdir -p "$out"

# The modules a build compiled: $1 the package directory, $2 the label. One line per module that has object
# files: objects, their MB, and the seconds from its first to its last output (.o or .swiftmodule).
modules() {
    local dir="$1" label="$2"
    echo "-- modules compiled (.build/debug/*.build), by object files: objects, object MB, first to last output (s)"
    local build_dir start
    build_dir="$(cd "$dir/.build/debug" && pwd -P)"
    start="$(find "$build_dir" -name '*.o' -printf '%T@\n' | sort -n | awk 'NR == 1')"
    for m in "$build_dir"/*.build; do
        [ -d "$m" ] || continue
        find "$m" \( -name '*.o' -o -name '*.swiftmodule' \) -printf '%T@ %s %f\n' |
            awk -v name="$(basename "$m" .build)" -v start="${start:-0}" '
                $3 ~ /\.o$/ { n++; bytes += $2 }
                { if (first == "" || $1 < first) first = $1; if ($1 > last) last = $1 }
                END {
                    if (n == 0) exit
                    printf "  %-36s %5d %8.1f %7.1f  (done at +%.0f s)\n", name, n, bytes / 1048576, last - first, last - start
                }'
    done | sort -k2 -n -r | tee "$work/$label.modules"
    awk '{ n++; objects += $2; mb += $3 } END { printf "  %d modules compiled, %d object files, %.1f MB\n", n, objects, mb }' \
        "$work/$label.modules"
}

# One build, timed: $1 label, $2 directory, rest: the swift build arguments.
measure() {
    local label="$1" dir="$2"
    shift 2
    local report="$out/$label.txt"
    {
        echo "== $label: (cd $dir && swift build $*)"
        echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
    } >"$report"
    local status=0
    (cd "$dir" && nice -n 10 /usr/bin/time -v -o "$work/$label.time" swift build "$@" >"$work/$label.log" 2>&1) ||
        status=$?
    {
        echo "loadavg after:  $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "exit status: $status"
        awk -F': ' '
            /User time/ { user = $2 } /System time/ { sys = $2 } /Elapsed \(wall/ { wall = $2 }
            /Maximum resident/ { rss = $2 }
            END { printf "wall %s  cpu %.1f s (user %s + sys %s)  max RSS %.0f MB\n", wall, user + sys, user, sys, rss / 1024 }
        ' "$work/$label.time"
        echo
        echo "-- packages checked out (.build/checkouts), size on disk"
        if [ -d "$dir/.build/checkouts" ]; then
            (cd "$dir/.build/checkouts" && for p in *; do [ -d "$p" ] && du -sk "$p"; done) |
                awk '{ total += $1; printf "  %-32s %7.1f MB\n", $2, $1 / 1024 } END { printf "  %d packages, %.1f MB\n", NR, total / 1024 }'
        else
            echo "  (none)"
        fi
        echo
        if [ "$status" != 0 ] || [ ! -d "$dir/.build/debug" ]; then
            echo "-- the build failed; the last lines of its output:"
            tail -20 "$work/$label.log"
            status=1
        else
            modules "$dir" "$label"
        fi
    } >>"$report" || status=1
    cat "$report"
    echo
    [ "$status" = 0 ] || { echo "first-build.sh: $label failed (report above, in $report)" >&2; exit 1; }
}

clone="$work/Kakapo"
git clone -q "$repo" "$clone"
git -C "$clone" checkout -q --detach "$(git -C "$repo" rev-parse --verify "$rev^{commit}")"
echo "clone of $(git -C "$clone" rev-parse --short HEAD) in $clone"
if [ "$worktree_manifest" = 1 ]; then
    cp "$repo/Package.swift" "$clone/Package.swift"
    echo "with the work tree's Package.swift"
fi
echo "$(swift --version 2>/dev/null | head -1), $(nproc) cores"
echo

if [ -z "$only" ] || [ "$only" = clone ]; then
    measure clone "$clone" --product kakapo
fi

# A consumer package: $1 label, $2 product, $3 a line of Swift that uses it, $4 the dependency's traits
# argument (", traits: []" or nothing for the default traits), $5 "resolve" to only resolve.
consumer() {
    local label="$1" product="$2" use="$3" traits="$4" only_resolve="${5:-}"
    local dir="$work/consumer-$label"
    mkdir -p "$dir/Sources/Consumer"
    cat >"$dir/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$clone"$traits)],
    targets: [.target(name: "Consumer", dependencies: [.product(name: "$product", package: "Kakapo")])]
)
EOF
    printf 'import %s\n\n%s\n' "$product" "$use" >"$dir/Sources/Consumer/Consumer.swift"
    echo "consumer-$label depends on: .package(path: \"$clone\"$traits), product $product"
    if [ "$only_resolve" = resolve ]; then
        (cd "$dir" && nice -n 10 swift package resolve >"$work/consumer-$label.log" 2>&1) || {
            echo "first-build.sh: consumer-$label: swift package resolve failed:" >&2
            tail -20 "$work/consumer-$label.log" >&2
            exit 1
        }
        {
            echo "== consumer-$label: (cd $dir && swift package resolve)"
            echo "-- packages checked out (.build/checkouts), size on disk"
            (cd "$dir/.build/checkouts" && for p in *; do [ -d "$p" ] && du -sk "$p"; done) |
                awk '{ total += $1; printf "  %-32s %7.1f MB\n", $2, $1 / 1024 } END { printf "  %d packages, %.1f MB\n", NR, total / 1024 }'
        } | tee "$out/consumer-$label.txt"
        echo
        return
    fi
    measure "consumer-$label" "$dir"
}

# A manifest that declares package traits lets a consumer turn them off (`traits: []`): the consumers then
# do so, and one more consumer only resolves with the default traits, to show what those fetch.
no_traits=""
if grep -q 'enabledTraits:' "$clone/Package.swift"; then
    no_traits=", traits: []"
fi

if [ -z "$only" ] || [ "$only" = testing ]; then
    consumer testing KakapoTesting 'public func consumerTouch() -> Any.Type { CassetteContext.self }' "$no_traits"
    if [ -n "$no_traits" ]; then
        consumer testing-default-traits KakapoTesting 'public func consumerTouch() {}' "" resolve
    fi
fi
if [ -z "$only" ] || [ "$only" = kakapo ]; then
    consumer kakapo Kakapo 'public func consumerTouch() -> Any.Type { Router.self }' "$no_traits"
fi

echo "reports in $out"
[ "$keep" = 0 ] || echo "kept $work"
