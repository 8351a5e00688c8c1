#!/usr/bin/env bash
# The browser tests of `make test` (tests/site/) drive a Chromium already on this machine
# (Playwright never downloads one). Find it; or install Debian's where this user may
# (root, with apt-get); or stop at once, with one line saying what to install.
set -uo pipefail
for candidate in "${CHROMIUM:-}" chromium chromium-browser google-chrome; do
    if [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1; then
        exit 0
    fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make test: installing Debian's chromium for the browser tests (tests/site/)"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq chromium >/dev/null; then
        exit 0
    fi
fi
echo "make test needs Chromium for its browser tests: install it (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium) or set CHROMIUM=/path/to/chromium" >&2
exit 1
