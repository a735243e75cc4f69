#!/usr/bin/env bash
# Packs kakapo-proxy and its Linux x64 platform package (@kakapo-proxy/linux-x64) for npm.
#
#   clients/node/pack.sh BINARY OUTDIR
#
# BINARY is a Linux x86-64 kakapo executable (the release build); OUTDIR gets
# kakapo-proxy-VERSION.tgz and kakapo-proxy-linux-x64-VERSION.tgz, VERSION being Kakapo's
# (Sources/KakapoHTTP/KakapoVersion.swift), stamped into both package.json files and into
# kakapo-proxy's optionalDependencies. The packages are put together in a temporary folder: the
# committed tree is never changed, and the binary is never copied into it.
#
#   npm install ./OUTDIR/kakapo-proxy-VERSION.tgz ./OUTDIR/kakapo-proxy-linux-x64-VERSION.tgz
#
# installs both from the files, with no registry (add --offline to be sure).
set -euo pipefail

die() {
    echo "clients/node/pack.sh: $*" >&2
    exit 1
}

[ $# -eq 2 ] || { echo "usage: clients/node/pack.sh BINARY OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
binary=$1
outdir=$2
command -v node >/dev/null || die "needs node"
command -v npm >/dev/null || die "needs npm"
[ -f "$binary" ] && [ -x "$binary" ] || die "no executable file at $binary"

version=$(sed -n 's/^ *public static let current = "\([^"]*\)".*/\1/p' "$root/Sources/KakapoHTTP/KakapoVersion.swift")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] ||
    die "no version in Sources/KakapoHTTP/KakapoVersion.swift (found '$version')"

# An ELF file for x86-64 (e_machine 0x3e), or the platform package would carry the wrong binary.
magic=$(od -An -tx1 -N4 "$binary" | tr -d ' \n')
machine=$(od -An -tx1 -j18 -N2 "$binary" | tr -d ' \n')
[ "$magic" = "7f454c46" ] && [ "$machine" = "3e00" ] || die "$binary is not a Linux x86-64 executable"
if said=$("$binary" --version 2>/dev/null); then
    [ "$said" = "$version" ] || die "$binary says it is $said, KakapoVersion.swift says $version"
else
    echo "clients/node/pack.sh: warning: cannot run $binary --version here; packing it as $version" >&2
fi

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# kakapo-proxy: package.json and what its "files" name; the version stamped.
node - "$here" "$stage/kakapo-proxy" "$version" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [from, to, version] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(from, 'package.json'), 'utf8'));
fs.mkdirSync(to, { recursive: true });
for (const entry of manifest.files) fs.cpSync(path.join(from, entry), path.join(to, entry), { recursive: true });
manifest.version = version;
for (const name of Object.keys(manifest.optionalDependencies || {})) {
  if (name.startsWith('@kakapo-proxy/')) manifest.optionalDependencies[name] = version;
}
delete manifest.scripts; // its tests are not in the package
fs.writeFileSync(path.join(to, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
EOF

# @kakapo-proxy/linux-x64: package.json, README.md and bin/kakapo.
platform="$stage/linux-x64"
mkdir -p "$platform/bin"
cp "$here/npm/linux-x64/README.md" "$platform/"
cp "$binary" "$platform/bin/kakapo"
chmod 755 "$platform/bin/kakapo"
node - "$here/npm/linux-x64/package.json" "$platform/package.json" "$version" <<'EOF'
const fs = require('node:fs');
const [from, to, version] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(from, 'utf8'));
manifest.version = version;
fs.writeFileSync(to, JSON.stringify(manifest, null, 2) + '\n');
EOF

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
for package in "$platform" "$stage/kakapo-proxy"; do
    name=$(cd "$package" && npm pack --ignore-scripts --pack-destination "$outdir" 2>"$stage/npm.log" | tail -n 1) ||
        { cat "$stage/npm.log" >&2; die "npm pack failed in $package"; }
    [ -f "$outdir/$name" ] || { cat "$stage/npm.log" >&2; die "npm pack made no $outdir/$name"; }
    echo "$outdir/$name"
done
