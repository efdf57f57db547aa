#!/usr/bin/env bash
# Builds the S3-compatible server that the artifact tests store into: versitygw (Versity S3 Gateway,
# Apache-2.0) with its posix backend, from the Go module proxy, into a cache outside git; prints the
# binary's path on stdout.
#
#   hack/build-s3-server.sh
#
# Used by test/support/s3-server.ts (the S3 backend's contract suite on loopback) and by
# hack/images.sh s3 (the e2e suite's server on the local node). Static (CGO_ENABLED=0) so the same
# binary runs in an image with nothing else in it. Idempotent: built only when missing; concurrent
# runs take turns on a lock. A cold build takes about 2 minutes on 2 cores.
#
# Environment: HYPERSPOOL_CACHE (default ~/.cache/hyperspool); GOMODCACHE, GOCACHE, GOPROXY honoured.
set -euo pipefail

module=github.com/versity/versitygw
version=v1.8.0

log() { echo "build-s3-server: $*" >&2; }
command -v go >/dev/null 2>&1 || { log "Go is not on PATH: install Go >= 1.24"; exit 1; }

cache=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}
bin="$cache/versitygw-$version/bin"
mkdir -p "$bin"
exec 9>"$bin/.lock"
flock 9
if [ ! -x "$bin/versitygw" ]; then
  log "building $module@$version (once; cached in $bin)"
  GOBIN="$bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-auto} \
    go install -trimpath -ldflags='-s -w' "$module/cmd/versitygw@$version" >&2
fi
echo "$bin/versitygw"
