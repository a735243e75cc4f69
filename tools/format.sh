#!/usr/bin/env bash
# Formats every Swift file in place with the checked-in .swift-format; `tools/format.sh --lint` only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--lint" ]; then
    swift format lint --strict --recursive Sources Tests tools/fuzz Package.swift
else
    swift format format --in-place --recursive Sources Tests tools/fuzz Package.swift
fi
