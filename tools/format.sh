#!/usr/bin/env bash
# Formats Swift files in place with the checked-in .swift-format: the files given, or every one without
# arguments; `tools/format.sh --lint` only checks them all.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--lint" ]; then
    swift format lint --strict --recursive Sources Tests tools/fuzz Package.swift
elif [ "$#" -gt 0 ]; then
    swift format format --in-place "$@"
else
    swift format format --in-place --recursive Sources Tests tools/fuzz Package.swift
fi
