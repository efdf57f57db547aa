#!/usr/bin/env bash
# Builds Helm v4 (Apache-2.0) from the Go module proxy into a cache outside git and prints the
# binary's path on stdout. The chart's unit test (test/operator/helm-chart.test.ts) runs
# `helm lint` and `helm template` with it, and the e2e suite (test/e2e/helm.e2e.ts) installs the
# chart (deploy/helm/hyperspool) with it on the real node.
#
#   hack/build-helm.sh
#
# Idempotent: built only when missing; concurrent runs take turns on a lock. The version is set
# as Helm's release build sets it (otherwise `helm version` says v4.3 with no patch). A cold build
# takes a few minutes on 2 cores.
#
# Environment: HYPERSPOOL_CACHE (default ~/.cache/hyperspool); GOMODCACHE, GOCACHE, GOPROXY honoured.
set -euo pipefail

module=helm.sh/helm/v4
version=v4.3.2

log() { echo "build-helm: $*" >&2; }
command -v go >/dev/null 2>&1 || { log "Go is not on PATH: install Go >= 1.24 (a newer toolchain is fetched when Helm's go.mod asks)"; exit 1; }

cache=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}
bin="$cache/helm-$version/bin"
mkdir -p "$bin"
exec 9>"$bin/.lock"
flock 9
if [ ! -x "$bin/helm" ]; then
  log "building $module@$version (once; cached in $bin)"
  GOBIN="$bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-auto} \
    go install -trimpath \
    -ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.gitTreeState=clean" \
    "$module/cmd/helm@$version" >&2
fi
echo "$bin/helm"
