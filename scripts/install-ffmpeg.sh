#!/usr/bin/env bash
# Installs Debian's ffmpeg (ffmpeg and ffprobe) when it is not found: the
# recorder's export (`durable-browser recording get`) runs it.
set -euo pipefail
. "$(dirname "$0")/apt-tool.sh"
found "${FFMPEG_PATH:-}" ffmpeg && exit 0
if debian_root; then
  apt_install ffmpeg --no-install-recommends ffmpeg
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
