#!/usr/bin/env bash
# Builds the pinned Kubernetes control-plane binaries (and etcd) that the integration tests run,
# from the Go module proxy, into a cache outside git; prints the bin directory on stdout.
#
#   hack/build-k8s.sh [component...]
#
# Components: kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd
# coredns, or `all`.
# Default: kube-apiserver kubectl etcd (what test/support/kube.ts and hack/control-plane.sh need).
#
# Versions: hack/k8s/go.mod pins k8s.io/kubernetes (and every k8s.io/* staging module to the
# matching v0.x); hack/etcd/go.mod pins go.etcd.io/etcd/server/v3. etcd is built from the module
# proxy too, rather than taken from Debian's etcd-server (3.4): that needs no root, runs the etcd
# minor that this Kubernetes release is tested with, and works the same on any Linux with Go.
# hack/coredns/go.mod pins CoreDNS (the local cluster's DNS), built from hack/coredns/main.go with
# only the plugins it needs.
#
# Idempotent: a binary is rebuilt only when missing or when its module's go.mod/go.sum or the
# build flags changed (a stamp file beside it records a hash of them). Concurrent runs (two test
# workers, CI and a developer) take turns on a lock in the cache.
#
# Environment: HYPERSPOOL_CACHE (default ~/.cache/hyperspool); the usual Go variables
# (GOMODCACHE, GOCACHE, GOPROXY) are honoured, so module downloads and compiled packages persist.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_module="$here/k8s"
etcd_module="$here/etcd"
coredns_module="$here/coredns"

log() { echo "build-k8s: $*" >&2; }
die() { log "$*"; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is not on PATH: install Go >= 1.21 (a newer toolchain is fetched from the module proxy when go.mod asks for one)"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum (coreutils) is missing"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) is missing"

# The version is the one k8s.io/kubernetes is required at in hack/k8s/go.mod (the single place to change it).
version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' "$k8s_module/go.mod")
[[ "$version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "cannot read the k8s.io/kubernetes version from $k8s_module/go.mod (got '$version')"
minor=${BASH_REMATCH[1]}

cache=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}
bin="$cache/k8s-$version/bin"
mkdir -p "$bin"

all_components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd coredns)
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver kubectl etcd)
if [ "${components[0]}" = all ]; then components=("${all_components[@]}"); fi
for c in "${components[@]}"; do
  [[ " ${all_components[*]} " == *" $c "* ]] || die "unknown component '$c' (known: ${all_components[*]} all)"
done

# -mod=mod: go.sum is committed, but a Go newer than the one that wrote it may want to add a line;
# that must not fail the build. GOTOOLCHAIN=auto (unless the caller chose one): a Go older than
# go.mod's `go` line fetches the right toolchain from the module proxy instead of refusing.
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
# Static binaries, as the Kubernetes release builds them: no libc dependency, and no cgo compile time.
export CGO_ENABLED=0

# Without these the server reports v0.0.0-master, and kubectl and client libraries warn about skew.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

stamp_of() { # module-dir extra... -> hash of what decides the binary's content
  local module=$1; shift
  # hack/coredns/main.go chooses CoreDNS's plugins; the other modules build code from go.mod alone.
  { cat "$module/go.mod" "$module/go.sum"; [ ! -f "$module/main.go" ] || cat "$module/main.go"; echo "$ldflags $CGO_ENABLED $*"; } | sha256sum | cut -d' ' -f1
}
is_current() { # name module-dir
  [ -x "$bin/$1" ] && [ -f "$bin/.$1.stamp" ] && [ "$(cat "$bin/.$1.stamp")" = "$(stamp_of "$2" "$1")" ]
}

exec 9>"$cache/k8s-$version/.lock"
flock 9

# Which are missing, per module (one `go build` per module lets Go compile the shared packages once
# and use both cores across all the commands).
k8s_todo=()
etcd_todo=()
coredns_todo=()
for c in "${components[@]}"; do
  case "$c" in
    etcd) is_current etcd "$etcd_module" || etcd_todo+=(etcd) ;;
    coredns) is_current coredns "$coredns_module" || coredns_todo+=(coredns) ;;
    *) is_current "$c" "$k8s_module" || k8s_todo+=("$c") ;;
  esac
done

tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ ${#k8s_todo[@]} -gt 0 ]; then
  log "building ${k8s_todo[*]} $version into $bin (minutes when cold)"
  start=$SECONDS
  pkgs=()
  for c in "${k8s_todo[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$k8s_module" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}")
  for c in "${k8s_todo[@]}"; do
    mv -f "$tmp/$c" "$bin/$c"
    stamp_of "$k8s_module" "$c" >"$bin/.$c.stamp"
  done
  log "built ${k8s_todo[*]} in $((SECONDS - start))s"
fi

if [ ${#etcd_todo[@]} -gt 0 ]; then
  etcd_version=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" { print $3; exit }' "$etcd_module/go.mod")
  log "building etcd $etcd_version into $bin"
  start=$SECONDS
  (cd "$etcd_module" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
  mv -f "$tmp/etcd" "$bin/etcd"
  stamp_of "$etcd_module" etcd >"$bin/.etcd.stamp"
  log "built etcd in $((SECONDS - start))s"
fi

if [ ${#coredns_todo[@]} -gt 0 ]; then
  coredns_version=$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" { print $3; exit }' "$coredns_module/go.mod")
  log "building coredns $coredns_version into $bin"
  start=$SECONDS
  (cd "$coredns_module" && go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .)
  mv -f "$tmp/coredns" "$bin/coredns"
  stamp_of "$coredns_module" coredns >"$bin/.coredns.stamp"
  log "built coredns in $((SECONDS - start))s"
fi

echo "$bin"
