#!/usr/bin/env bash
# Installs Debian's chromium when no Chrome or Chromium is found.
set -euo pipefail
. "$(dirname "$0")/apt-tool.sh"
found "${CHROME_PATH:-}" chromium chromium-browser google-chrome google-chrome-stable && exit 0
if debian_root; then
  apt_install chromium chromium
  exit 0
fi
cat >&2 <<'MSG'
No Chrome or Chromium found. Install one, then run this again:
  Debian/Ubuntu:  sudo apt-get install chromium
  Fedora:         sudo dnf install chromium
  macOS:          brew install --cask chromium
or point CHROME_PATH (or --chrome) at a Chrome executable.
MSG
exit 1
