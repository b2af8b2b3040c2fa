#!/usr/bin/env bash
# Installs the pinned linters `make lint` runs, with go install, when the
# binary in GOBIN is missing or was built from another version.
#   scripts/install-lint-tools.sh STATICCHECK_VERSION WORKFLOWCHECK_VERSION
set -euo pipefail
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
install() { # binary module package version
  local bin="$gobin/$1"
  if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -qE "^\s+mod\s+$2\s+$4\s"; then
    return 0
  fi
  echo "installing $1 $4 with go install..."
  go install "$3@$4"
}
install staticcheck honnef.co/go/tools honnef.co/go/tools/cmd/staticcheck "$1"
install workflowcheck go.temporal.io/sdk/contrib/tools/workflowcheck go.temporal.io/sdk/contrib/tools/workflowcheck "$2"
