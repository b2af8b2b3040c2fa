#!/usr/bin/env bash
# Installs Debian's ffmpeg (ffmpeg and ffprobe) when it is not found: the
# recorder's export (`durable-browser recording get`) runs it.
set -euo pipefail
for c in "${FFMPEG_PATH:-}" ffmpeg; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ]; then
  echo "installing Debian's ffmpeg with apt-get..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null
  exit 0
fi
cat >&2 <<'MSG'
No ffmpeg found. Install it, then run this again:
  Debian/Ubuntu:  sudo apt-get install ffmpeg
  Fedora:         sudo dnf install ffmpeg
  macOS:          brew install ffmpeg
or point FFMPEG_PATH (or --ffmpeg) at an ffmpeg executable.
MSG
exit 1
