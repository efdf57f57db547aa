#!/usr/bin/env bash
# Builds Jaeger (Apache-2.0) from the Go module proxy into a cache outside git and prints the
# binary's path on stdout. The tracing test (test/dev/tracing.test.ts) sends the engine's spans to
# it over OTLP/HTTP and reads them back through its query API, so a trace is proven against a real
# receiver, not a fake one.
#
#   hack/build-jaeger.sh
#
# The module's go.mod has replace directives, so `go install pkg@version` refuses it; the binary is
# built inside a throwaway module that requires it as a tool. Idempotent: built only when missing;
# concurrent runs take turns on a lock. A cold build took about 9 minutes on 2 busy cores.
#
# Environment: HYPERSPOOL_CACHE (default ~/.cache/hyperspool); GOMODCACHE, GOCACHE, GOPROXY honoured.
set -euo pipefail

module=github.com/jaegertracing/jaeger
version=v1.75.0
package=$module/cmd/jaeger

log() { echo "build-jaeger: $*" >&2; }
command -v go >/dev/null 2>&1 || { log "Go is not on PATH: install Go >= 1.24"; exit 1; }

cache=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}
bin="$cache/jaeger-$version/bin"
mkdir -p "$bin"
exec 9>"$bin/.lock"
flock 9
if [ ! -x "$bin/jaeger" ]; then
  log "building $package@$version (once; cached in $bin)"
  export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && go mod init hyperspool-jaeger-build >/dev/null 2>&1 \
    && go get -tool "$package@$version" >&2 \
    && go build -trimpath -ldflags='-s -w' -o "$bin/jaeger" "$package" >&2)
fi
echo "$bin/jaeger"
