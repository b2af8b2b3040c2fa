#!/usr/bin/env bash
# Installs Debian's chromium when no Chrome or Chromium is found, and
# Debian's chromium-headless-shell beside it (headless sessions run it:
# about half the CPU and memory; without it they run the full browser).
set -euo pipefail
. "$(dirname "$0")/apt-tool.sh"
shell_wanted() {
  debian_root && [ -z "${CHROME_PATH:-}" ] && [ ! -x /usr/lib/chromium/chromium-headless-shell ] \
    && ! found chrome-headless-shell chromium-headless-shell
}
if found "${CHROME_PATH:-}" chromium chromium-browser google-chrome google-chrome-stable; then
  if shell_wanted; then
    # Optional: without it headless sessions run the full browser.
    apt_install chromium-headless-shell chromium-headless-shell \
      || echo "warning: could not install chromium-headless-shell; headless sessions will run the full chromium" >&2
  fi
  exit 0
fi
if debian_root; then
  apt_install chromium chromium chromium-headless-shell
  exit 0
fi
cat >&2 <<'MSG'
No Chrome or Chromium found. Install one, then run this again:
  Debian/Ubuntu:  sudo apt-get install chromium chromium-headless-shell
  Fedora:         sudo dnf install chromium
  macOS:          brew install --cask chromium
or point CHROME_PATH (or --chrome) at a Chrome executable.
MSG
exit 1
