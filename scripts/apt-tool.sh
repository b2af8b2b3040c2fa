# Sourced by install-chromium.sh and install-ffmpeg.sh: a tool is found on
# PATH, or installed from Debian's packages when this is Debian and root.

# found CMD...: true when any non-empty CMD is a command.
found() {
  local c
  for c in "$@"; do
    if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
      return 0
    fi
  done
  return 1
}

# debian_root: true on Debian (or Ubuntu) as root, where apt-get can install.
debian_root() { [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ]; }

# apt_install NAME ARG...: installs with apt-get install ARG..., quietly.
apt_install() {
  echo "installing Debian's $1 with apt-get..."
  shift
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$@" >/dev/null
}
