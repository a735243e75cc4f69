#!/usr/bin/env bash
# The real browsers of the inspector's browser tests (Tests/KakapoCLITests/InspectorBrowserTests.swift and
# InspectorFirefoxTests.swift) and of docs/browsers.md's transcript: Debian's chromium and chromium-driver,
# firefox-esr, certutil (libnss3-tools, which trusts Kakapo's CA in Chromium's NSS store), and selenium in the test
# venv (.build/python-venv, made by tools/setup.sh --tests; it brings websocket-client, which the Firefox test uses). Selenium is always handed /usr/bin/chromedriver, so it never downloads a driver.
#
#   tools/browser.sh install   installs what is missing (apt-get for the browser and its driver, pip for
#                              selenium into the venv) and prints the path of chromedriver
#   tools/browser.sh check     exits 0 when everything is there (prints nothing), 1 naming what is missing
set -euo pipefail
command=${1:?usage: tools/browser.sh install|check}
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.build/python-venv"
driver=/usr/bin/chromedriver
browser=/usr/bin/chromium
firefox=/usr/bin/firefox-esr
certutil=/usr/bin/certutil

missing() {
    local what=()
    [ -x "$browser" ] || what+=("chromium")
    [ -x "$driver" ] || what+=("chromium-driver")
    [ -x "$firefox" ] || what+=("firefox-esr")
    [ -x "$certutil" ] || what+=("libnss3-tools")
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
        what+=("selenium (in $venv)")
    fi
    echo "${what[*]}"
}

case "$command" in
install)
    if [ ! -x "$browser" ] || [ ! -x "$driver" ] || [ ! -x "$firefox" ] || [ ! -x "$certutil" ]; then
        command -v apt-get >/dev/null 2>&1 || {
            echo "tools/browser.sh: no apt-get: install chromium, chromium-driver, firefox-esr and libnss3-tools yourself" >&2
            exit 1
        }
        sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        echo "tools/browser.sh: installing chromium, chromium-driver, firefox-esr and libnss3-tools with apt-get" >&2
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver firefox-esr libnss3-tools >/dev/null
    fi
    if [ ! -x "$venv/bin/python" ]; then
        # tools/setup.sh --tests makes the venv (with the packages of the other Python tests); make a bare one
        # when this script runs first, which setup.sh fills later.
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
        echo "tools/browser.sh: installing selenium into $venv" >&2
        "$venv/bin/pip" install -q --disable-pip-version-check 'selenium>=4.11,<5'
    fi
    left=$(missing)
    if [ -n "$left" ]; then
        echo "tools/browser.sh: still missing: $left" >&2
        exit 1
    fi
    echo "$driver"
    ;;
check)
    left=$(missing)
    if [ -n "$left" ]; then
        echo "tools/browser.sh: missing: $left (run tools/browser.sh install)" >&2
        exit 1
    fi
    ;;
*)
    echo "usage: tools/browser.sh install|check" >&2
    exit 2
    ;;
esac
