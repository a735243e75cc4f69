#!/usr/bin/env bash
# Takes the inspector's screenshot for the docs: runs the browser test of the inspector
# (Tests/KakapoCLITests/InspectorBrowserTests.swift, real headless Chromium against the built kakapo), which
# saves .build/test-output/inspector/inspector.png (the list with a miss open), and copies it to
# docs/images/inspector.png.
#
#   tools/inspector-screenshot.sh    installs the browser when missing (tools/browser.sh), builds, runs the test
set -euo pipefail
cd "$(dirname "$0")/.."
tools/browser.sh install >/dev/null
swift build --build-tests
shot=.build/test-output/inspector/inspector.png
rm -f "$shot"
# CI=true: a missing browser fails the test instead of skipping it, so there is always a screenshot or an error.
if ! CI=true swift test --skip-build --filter InspectorBrowserTests; then
    echo "tools/inspector-screenshot.sh: the browser test failed (see .build/test-output/inspector)" >&2
    [ -f "$shot" ] || exit 1
    echo "tools/inspector-screenshot.sh: it still took a screenshot; check it before committing it" >&2
fi
[ -f "$shot" ] || { echo "tools/inspector-screenshot.sh: the test saved no $shot" >&2; exit 1; }
mkdir -p docs/images
cp "$shot" docs/images/inspector.png
echo "docs/images/inspector.png ($(wc -c <docs/images/inspector.png) bytes)"
