#!/usr/bin/env bash
# Builds the images users run, hyperspool/runner:dev and hyperspool/operator:dev, from
# images/Dockerfile with docker (the context is this repository's root; nothing of the host's
# node_modules or dist/ goes in: the Dockerfile runs npm ci and npm run build itself). Prints each
# image's name on stdout once built.
#
#   hack/docker-images.sh [runner|operator|all]... [-- DOCKER-BUILD-FLAGS...]
#
# Default: both. Flags after `--` go to every `docker build` (--network host, --no-cache,
# --progress plain...), and so do those in HYPERSPOOL_DOCKER_BUILD_FLAGS (split on blanks; how
# hack/kind.sh passes them on). HYPERSPOOL_NODE_IMAGE replaces the base image
# (node:20-bookworm-slim), for a mirror or a local copy; HYPERSPOOL_IMAGE_TAG the tag (dev: what
# config/ and the operator's --runner-image default name). DOCKER names the docker binary.
#
# hack/images.sh is the other way to get these images: packed by hand from this host's files,
# without docker or a registry, for the local node of hack/local-cluster.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
docker=${DOCKER:-docker}
tag=${HYPERSPOOL_IMAGE_TAG:-dev}

log() { echo "docker-images: $*" >&2; }
die() { log "$*"; exit 1; }

targets=()
read -ra flags <<<"${HYPERSPOOL_DOCKER_BUILD_FLAGS:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    runner | operator) targets+=("$1") ;;
    all) targets+=(runner operator) ;;
    --) shift; flags+=("$@"); break ;;
    *) die "usage: $0 [runner|operator|all]... [-- docker-build-flags...]" ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(runner operator)
[ -z "${HYPERSPOOL_NODE_IMAGE:-}" ] || flags+=(--build-arg "NODE_IMAGE=$HYPERSPOOL_NODE_IMAGE")

command -v "$docker" >/dev/null 2>&1 || die "$docker is missing (install Docker, or set DOCKER)"
"$docker" info >/dev/null 2>&1 || die "$docker cannot reach a Docker daemon (is it running? DOCKER_HOST=${DOCKER_HOST:-unset})"

for target in "${targets[@]}"; do
  image="hyperspool/$target:$tag"
  start=$SECONDS
  log "building $image"
  "$docker" build -f "$repo/images/Dockerfile" --target "$target" -t "$image" ${flags[@]+"${flags[@]}"} "$repo" >&2
  log "$image: built in $((SECONDS - start))s"
  echo "$image"
done
