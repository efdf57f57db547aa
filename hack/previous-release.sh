#!/usr/bin/env bash
# Builds "the previous release" for the upgrade test (test/e2e/upgrade.e2e.ts): the commit named in
# test/e2e/upgrade/previous-release, checked out of this repository's history with `git archive`,
# its dependencies installed (`npm ci`) and built (`npm run build`), and its runner and operator
# images built by ITS OWN hack/images.sh, then tagged hyperspool/runner:prev-<hash> and
# hyperspool/operator:prev-<hash> (never :dev, which is this checkout's) and imported into the
# local node when it runs.
#
#   hack/previous-release.sh [--no-import]
#
# Prints two lines on stdout: the directory of the built checkout (its config/, test/e2e/deploy and
# bin/spool are the previous release's), and the image tag (prev-<12 hex>).
#
# Built once per commit, under ${HYPERSPOOL_CACHE:-~/.cache/hyperspool}/previous/<hash>; later
# calls only import the two images. Concurrent calls take turns on a lock.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
root=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}
node_dir=${HYPERSPOOL_NODE_DIR:-/tmp/hyperspool-node}
sock="$node_dir/containerd/containerd.sock"

log() { echo "previous-release: $*" >&2; }
die() { log "$*"; exit 1; }

import=1
for arg in "$@"; do
  case "$arg" in
    --no-import) import=0 ;;
    *) die "usage: $0 [--no-import]" ;;
  esac
done

named=$(grep -v '^#' "$repo/test/e2e/upgrade/previous-release" | tr -d '[:space:]')
[ -n "$named" ] || die "test/e2e/upgrade/previous-release names no commit"
commit=$(git -C "$repo" rev-parse --verify --quiet "$named^{commit}") ||
  die "commit $named is not in this clone's history (a shallow clone? git fetch --unshallow)"
tag="prev-${commit:0:12}"
dir="$root/previous/$commit"

mkdir -p "$root/previous"
exec 9>"$root/previous/.lock"
flock 9

# retag TARBALL NAME: the docker-archive's manifest names the image NAME instead of its :dev tag.
retag() {
  local tarball=$1 name=$2 work
  work=$(mktemp -d)
  tar -C "$work" -xf "$tarball" manifest.json
  sed -E "s#\"RepoTags\":\[\"[^\"]*\"\]#\"RepoTags\":[\"$name\"]#" "$work/manifest.json" >"$work/manifest.new"
  grep -q "\"$name\"" "$work/manifest.new" || die "could not retag $tarball"
  mv "$work/manifest.new" "$work/manifest.json"
  tar --delete -f "$tarball" manifest.json
  tar -C "$work" -rf "$tarball" manifest.json
  rm -rf "$work"
}

if [ ! -f "$dir/.built" ]; then
  start=$SECONDS
  log "building $commit into $dir"
  rm -rf "$dir"
  mkdir -p "$dir/src" "$dir/cache"
  git -C "$repo" archive "$commit" | tar -C "$dir/src" -xf -
  (cd "$dir/src" && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build) >&2
  # Its own images.sh, with its own cache: the tarballs it writes are the previous release's.
  HYPERSPOOL_CACHE="$dir/cache" bash "$dir/src/hack/images.sh" --no-import runner operator >/dev/null
  retag "$dir/cache/images/runner.tar" "hyperspool/runner:$tag"
  retag "$dir/cache/images/operator.tar" "hyperspool/operator:$tag"
  touch "$dir/.built"
  log "built in $((SECONDS - start))s"
fi

if [ $import -eq 1 ]; then
  if [ -S "$sock" ]; then
    for image in runner operator; do
      ctr --address "$sock" -n k8s.io images import "$dir/cache/images/$image.tar" >&2
    done
  else
    log "no local cluster runs in $node_dir: not importing"
  fi
fi

echo "$dir/src"
echo "$tag"
