#!/usr/bin/env bash
# Installs the versitygw S3 gateway (Apache-2.0) when it is missing.
set -euo pipefail
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
if command -v versitygw >/dev/null 2>&1 || [ -x "$gobin/versitygw" ]; then
  exit 0
fi
echo "installing versitygw v1.8.0 with go install..."
go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
