#!/usr/bin/env bash
# The measurement behind "Why Kakapo has its own HTTP types" (issue 29): builds tools/http-types-check in
# release under nice (its own build folder, .build-http-types-check, so the main build is left alone) and
# prints, as Markdown, how many cassette and tricky header fields survive swift-http-types' HTTPFields byte
# for byte next to Kakapo's HTTP.Headers, and what each conversion costs per request head.
#   tools/http-types-check.sh [--iterations N]      # default 200000 per run, best of 7 runs
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
nice -n 10 swift build -c release --package-path tools/http-types-check --scratch-path "$root/.build-http-types-check" \
    2>&1 | grep -E "error|warning: |Build complete" >&2 || true
"$root/.build-http-types-check/release/http-types-check" "$root" "$@"
