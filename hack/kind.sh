#!/usr/bin/env bash
# The end-to-end suite (test/e2e) on a kind cluster, for people with Docker and kind. The suite's
# default, the local node of hack/local-cluster.sh, needs root and Kubernetes built from source;
# this needs neither, but needs a registry: kind's node image and PostgreSQL's are pulled.
#
#   hack/kind.sh [test] [VITEST-ARGS...]  the cluster (created, or reused), the images, then the
#                                        suite, with HYPERSPOOL_E2E_KUBECONFIG naming the cluster
#                                        and HYPERSPOOL_E2E_IMAGES=preloaded
#   hack/kind.sh up                       only the cluster and the images; prints export KUBECONFIG=
#   hack/kind.sh down                     deletes the cluster
#
# The cluster is HYPERSPOOL_KIND_CLUSTER (hyperspool-e2e), of kind's default node image or
# HYPERSPOOL_KIND_NODE_IMAGE; its kubeconfig is written to a file of its own,
# ${HYPERSPOOL_CACHE:-~/.cache/hyperspool}/kind/NAME.kubeconfig (~/.kube/config is left alone).
# hyperspool/runner:dev and hyperspool/operator:dev are built from images/Dockerfile by
# hack/docker-images.sh (HYPERSPOOL_NODE_IMAGE replaces their base, HYPERSPOOL_DOCKER_BUILD_FLAGS
# adds flags to docker build) and loaded into the cluster's node with `kind load`, and so is the
# PostgreSQL image the suite keeps the journal in (HYPERSPOOL_E2E_POSTGRES_IMAGE, default
# postgres:16; pulled when missing). A reused cluster's operator, if deployed, is restarted so that
# it runs the images just loaded. The suite itself runs on this machine (npm ci first), with KUBECTL
# or kubectl from PATH when there is one (else the suite builds it with hack/build-k8s.sh, which
# takes minutes). KIND and DOCKER name the binaries.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
kind=${KIND:-kind}
docker=${DOCKER:-docker}
cluster=${HYPERSPOOL_KIND_CLUSTER:-hyperspool-e2e}
kubeconfig=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}/kind/$cluster.kubeconfig
postgres_image=${HYPERSPOOL_E2E_POSTGRES_IMAGE:-postgres:16}
images=(hyperspool/runner:dev hyperspool/operator:dev "$postgres_image")
kubectl=${KUBECTL:-$(command -v kubectl || true)}

log() { echo "kind: $*" >&2; }
die() { log "$*"; exit 1; }

need() { # binary what-to-do
  command -v "$1" >/dev/null 2>&1 || die "$1 is missing ($2)"
}

exists() { "$kind" get clusters 2>/dev/null | grep -qx "$cluster"; }

cluster_up() {
  need "$kind" "https://kind.sigs.k8s.io, or set KIND"
  need "$docker" "install Docker, or set DOCKER"
  "$docker" info >/dev/null 2>&1 || die "$docker cannot reach a Docker daemon (is it running?)"
  mkdir -p "$(dirname "$kubeconfig")"
  if exists; then
    local state
    state=$("$docker" inspect -f '{{.State.Running}}' "$cluster-control-plane" 2>/dev/null) || state=missing
    [ "$state" = true ] ||
      die "cluster $cluster exists but its node $cluster-control-plane is not running ($state): docker start it, or $0 down"
    log "reusing cluster $cluster"
    "$kind" get kubeconfig --name "$cluster" >"$kubeconfig"
  else
    log "creating cluster $cluster"
    "$kind" create cluster --name "$cluster" --kubeconfig "$kubeconfig" --wait 120s \
      ${HYPERSPOOL_KIND_NODE_IMAGE:+--image "$HYPERSPOOL_KIND_NODE_IMAGE"}
  fi
  chmod 600 "$kubeconfig"
}

# load IMAGE: `kind load docker-image`, or, where that fails (Docker's containerd image store keeps
# multi-platform images whose other platforms' content `docker save` cannot export), this
# platform's image alone through an archive.
load() {
  "$kind" load docker-image --name "$cluster" "$1" >&2 && return 0
  local platform archive
  platform=$("$docker" version -f '{{.Server.Os}}/{{.Server.Arch}}')
  archive=$(mktemp "${TMPDIR:-/tmp}/hyperspool-kind.XXXXXX")
  log "loading $1 as a $platform archive instead"
  if "$docker" image save --platform "$platform" -o "$archive" "$1" &&
    "$kind" load image-archive --name "$cluster" "$archive" >&2; then
    rm -f "$archive"
  else
    rm -f "$archive"
    die "could not load $1 into $cluster"
  fi
}

images_up() {
  DOCKER=$docker "$here/docker-images.sh" runner operator >/dev/null
  if ! "$docker" image inspect "$postgres_image" >/dev/null 2>&1; then
    log "pulling $postgres_image"
    "$docker" pull "$postgres_image" >&2
  fi
  local image start
  for image in "${images[@]}"; do
    start=$SECONDS
    load "$image"
    log "$image: loaded in $((SECONDS - start))s"
  done
  # A reused cluster still runs the operator of the images loaded last time under the same tag:
  # new pods run these ones.
  if [ -n "$kubectl" ] &&
    "$kubectl" --kubeconfig "$kubeconfig" -n hyperspool-system get deployment hyperspool-operator >/dev/null 2>&1; then
    log "restarting the operator deployed earlier, on the new images"
    "$kubectl" --kubeconfig "$kubeconfig" -n hyperspool-system rollout restart deployment/hyperspool-operator >&2
  fi
}

run_suite() {
  [ -d "$repo/node_modules" ] || die "node_modules is missing: npm ci first"
  # The suite drives the cluster with this checkout's CLI too (spool signal...): build it as the
  # images were.
  (cd "$repo" && npm run build >&2)
  [ -z "$kubectl" ] || export KUBECTL=$kubectl
  log "running the e2e suite on $cluster"
  cd "$repo"
  HYPERSPOOL_E2E_KUBECONFIG=$kubeconfig HYPERSPOOL_E2E_IMAGES=preloaded HYPERSPOOL_E2E_POSTGRES_IMAGE=$postgres_image \
    npx vitest run --config test/e2e/vitest.config.ts "$@"
}

command=${1:-test}
[ $# -eq 0 ] || shift
case "$command" in
  up)
    [ $# -eq 0 ] || die "usage: $0 up"
    cluster_up
    images_up
    echo "export KUBECONFIG=$kubeconfig"
    ;;
  test)
    cluster_up
    images_up
    run_suite "$@"
    ;;
  down)
    [ $# -eq 0 ] || die "usage: $0 down"
    need "$kind" "https://kind.sigs.k8s.io, or set KIND"
    if exists; then
      "$kind" delete cluster --name "$cluster" >&2
    else
      log "no cluster $cluster"
    fi
    rm -f "$kubeconfig"
    ;;
  *) die "usage: $0 [test [vitest-args...]|up|down]" ;;
esac
