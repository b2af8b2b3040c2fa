#!/usr/bin/env bash
# Installs Debian's chromium when no Chrome or Chromium is found.
set -euo pipefail
for c in "${CHROME_PATH:-}" chromium chromium-browser google-chrome google-chrome-stable; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ]; then
  echo "installing Debian's chromium with apt-get..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
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
