#!/usr/bin/env bash
# Builds the container images of the local node (hack/local-cluster.sh) without any registry, and
# imports them into its containerd. Prints the path of each image's tarball on stdout.
#
#   hack/images.sh [--no-import] [image...]
#
# Images (default: runner):
#   pause     hyperspool/pause:3.10    images/pause/pause.c built with gcc -static: the pod sandbox
#   busybox   hyperspool/busybox:dev   Debian's busybox-static, for smoke tests (`sh -c ...`)
#   runner    hyperspool/runner:dev    what pass pods run: bash, python3 and node copied from this
#                                      host with their shared libraries, busybox for the usual
#                                      commands (test, env, sleep...), this repo's bin/, dist/ and
#                                      production node_modules in /app, `spool` on PATH, the native
#                                      client at /usr/local/lib/hyperspool/spool (and the activity
#                                      reporter beside it), the Python SDK on
#                                      PYTHONPATH and the TypeScript SDK's resolve hook in
#                                      NODE_OPTIONS, USER 1000
#   plain     hyperspool/plain:dev     a user's own image as pass pods may run it: bash and python3
#                                      with their libraries and busybox, and nothing of Hyperspool
#                                      nor node
#   operator  hyperspool/operator:dev  the same files as the runner, USER 65532 (config/manager
#                                      runs `spool operator` in it)
#   postgres  hyperspool/postgres:dev  this host's PostgreSQL server (Debian's postgresql package)
#                                      with its libraries, busybox's sh, USER postgres (999);
#                                      initdb, postgres and pg_isready on PATH: the e2e suite's
#                                      journal database (test/e2e/deploy/postgres.yaml)
#   s3        hyperspool/s3:dev        versitygw (hack/build-s3-server.sh, static) and busybox's sh,
#                                      USER 65532: the e2e suite's S3-compatible artifact storage
#                                      (test/e2e/deploy/s3.yaml)
#
# The images users run are built from the Dockerfiles in images/ instead; these are the same files
# laid out without a registry to pull base images from.
#
# Each image is packed by hand as a docker-archive tarball (one uncompressed layer, a config and a
# manifest.json: what `ctr images import` reads), with sorted entries and zero mtimes, into
# ${HYPERSPOOL_CACHE:-~/.cache/hyperspool}/images/NAME.tar. The runner is rebuilt every time
# (dist/ changes as you work; `npm run build` first), and so is the operator; the others only when
# missing.
#
# Import: into the containerd of the local cluster in ${HYPERSPOOL_NODE_DIR:-/tmp/hyperspool-node}
# when it runs (`ctr -n k8s.io images import`); --no-import only builds, --import-only imports the
# tarballs an earlier call built (the e2e suite builds while the node comes up, then imports).
#
# Concurrent calls take turns per image (a lock each), so `hack/local-cluster.sh up` importing
# the pause image does not wait for another call packing the runner.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cache=${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}/images
node_dir=${HYPERSPOOL_NODE_DIR:-/tmp/hyperspool-node}
sock="$node_dir/containerd/containerd.sock"

log() { echo "images: $*" >&2; }
die() { log "$*"; exit 1; }

import=1
build=1
images=()
for arg in "$@"; do
  case "$arg" in
    --no-import) import=0 ;;
    --import-only) build=0 ;;
    pause | busybox | runner | operator | postgres | plain | s3) images+=("$arg") ;;
    all) images+=(pause busybox runner operator postgres plain s3) ;;
    *) die "usage: $0 [--no-import | --import-only] [pause|busybox|runner|operator|postgres|plain|s3|all]..." ;;
  esac
done
[ ${#images[@]} -gt 0 ] || images=(runner)
[ $import -eq 1 ] || [ $build -eq 1 ] || die "--no-import and --import-only leave nothing to do"

mkdir -p "$cache"
# One lock per image, taken in one order (no two calls wait on each other in a cycle); the runner
# and the operator share the app's rootfs, so either takes its lock too.
for lock in app pause busybox runner operator postgres plain s3; do
  case " ${images[*]} " in
    *" $lock "*) ;;
    *" runner "* | *" operator "*) [ "$lock" = app ] || continue ;;
    *) continue ;;
  esac
  exec {fd}>"$cache/.lock.$lock"
  flock "$fd"
done

need_package() { # command-or-file package
  if [ -e "$1" ] || command -v "$1" >/dev/null 2>&1; then return 0; fi
  [ "$(id -u)" -eq 0 ] || die "$1 is missing (apt-get install $2)"
  log "installing $2 with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2; }
}

# pack ROOTFS NAME CONFIG-JSON OUT: a docker-archive tarball of ROOTFS as one layer. CONFIG-JSON is
# the image's runtime config ({"Entrypoint": ..., "User": ...}).
# The last layer packed, kept (a hard link, this process's own) for a second image of the same
# rootfs: the runner and the operator are one rootfs of ~300 MB with two configs, so the second
# skips a tar and a sha256 of it.
packed_rootfs= packed_sha= packed_layer="$cache/.packed-layer.$$.tar"
trap 'rm -f "$packed_layer"' EXIT
pack() {
  local rootfs=$1 name=$2 config=$3 out=$4 work layer_sha config_sha
  work=$(mktemp -d "$cache/.pack.XXXXXX")
  if [ "$rootfs" = "$packed_rootfs" ]; then
    layer_sha=$packed_sha
    mkdir "$work/$layer_sha"
    ln "$packed_layer" "$work/$layer_sha/layer.tar"
  else
    tar --sort=name --mtime=@0 --numeric-owner -C "$rootfs" -cf "$work/layer.tar" .
    layer_sha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
    mkdir "$work/$layer_sha"
    mv "$work/layer.tar" "$work/$layer_sha/layer.tar"
    ln -f "$work/$layer_sha/layer.tar" "$packed_layer"
    packed_rootfs=$rootfs packed_sha=$layer_sha
  fi
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$config" "$layer_sha" >"$work/config.json"
  config_sha=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mv "$work/config.json" "$work/$config_sha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config_sha" "$name" "$layer_sha" >"$work/manifest.json"
  tar --sort=name --mtime=@0 --numeric-owner -C "$work" -cf "$out.tmp" manifest.json "$config_sha.json" "$layer_sha"
  mv -f "$out.tmp" "$out"
  rm -rf "$work"
}

new_rootfs() { # dir: an empty merged-/usr tree, as Debian's
  rm -rf "$1"
  mkdir -p "$1"/usr/bin "$1"/usr/lib "$1"/usr/lib64 "$1"/usr/sbin "$1"/etc "$1"/dev "$1"/proc "$1"/sys "$1"/root
  ln -s usr/bin "$1/bin"
  ln -s usr/lib "$1/lib"
  ln -s usr/lib64 "$1/lib64"
  ln -s usr/sbin "$1/sbin"
  install -d -m 1777 "$1/tmp"
}

add_busybox() { # rootfs: busybox and a symlink for each of its applets that the rootfs lacks
  need_package /bin/busybox busybox-static
  /bin/busybox --list-full >/dev/null 2>&1 || die "/bin/busybox is not busybox-static's"
  cp /bin/busybox "$1/usr/bin/busybox"
  local applet target
  for applet in $(/bin/busybox --list); do
    target="$1/usr/bin/$applet"
    [ -e "$target" ] || [ -L "$target" ] || ln -s busybox "$target"
  done
}

copy_with_libs() { # rootfs file...: each file at its own path, and every shared library it loads
  local rootfs=$1 file lib; shift
  for file in "$@"; do
    mkdir -p "$rootfs$(dirname "$file")"
    cp -L "$file" "$rootfs$file"
  done
  for lib in $(ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(0x/ { print $1 }' | sort -u); do
    [ -e "$rootfs$lib" ] && continue
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
}

build_pause() {
  local out="$cache/pause.tar"
  [ -f "$out" ] && [ "$out" -nt "$repo/images/pause/pause.c" ] && { built=$out; return; }
  need_package gcc gcc
  local rootfs="$cache/.pause-rootfs"
  rm -rf "$rootfs"
  mkdir -p "$rootfs"
  gcc -static -O2 -s -o "$rootfs/pause" "$repo/images/pause/pause.c"
  pack "$rootfs" hyperspool/pause:3.10 '{"Entrypoint":["/pause"],"User":"65535:65535"}' "$out"
  rm -rf "$rootfs"
  built=$out
}

build_busybox() {
  local out="$cache/busybox.tar"
  [ -f "$out" ] && { built=$out; return; }
  local rootfs="$cache/.busybox-rootfs"
  new_rootfs "$rootfs"
  add_busybox "$rootfs"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  pack "$rootfs" hyperspool/busybox:dev '{"Cmd":["sh"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}' "$out"
  rm -rf "$rootfs"
  built=$out
}

app_rootfs= # built once per invocation, for the runner and the operator both

copy_python() { # rootfs: Debian's python3 (not one from a version manager earlier on PATH) and its standard library
  local rootfs=$1 python pyver
  need_package /usr/bin/python3 python3-minimal
  python=$(readlink -f /usr/bin/python3)
  pyver=$(basename "$python")
  copy_with_libs "$rootfs" "$python"
  ln -s "$pyver" "$rootfs/usr/bin/python3"
  ln -s python3 "$rootfs/usr/bin/python"
  tar -C / --exclude="usr/lib/$pyver/test" --exclude="usr/lib/$pyver/idlelib" --exclude="usr/lib/$pyver/tkinter" \
    --exclude="usr/lib/$pyver/ensurepip" --exclude="usr/lib/$pyver/lib2to3" --exclude='__pycache__' \
    -cf - "usr/lib/$pyver" | tar -C "$rootfs" -xf -
  mapfile -t modules < <(find "$rootfs/usr/lib/$pyver/lib-dynload" -name '*.so' | sed "s|^$rootfs||")
  [ ${#modules[@]} -eq 0 ] || copy_with_libs "$rootfs" "${modules[@]}"
}

build_app_rootfs() { # the runner's and operator's files, in $cache/.app-rootfs
  [ -n "$app_rootfs" ] && return 0
  local rootfs="$cache/.app-rootfs" node
  node=$(command -v node) || die "node is missing"
  node=$(readlink -f "$node")
  [ -f "$repo/dist/cli/main.js" ] || die "dist/ is not built (npm run build)"
  [ -x "$repo/dist/native/linux-x64/spool" ] || die "the native client is not built (npm run build:native; needs Go)"

  new_rootfs "$rootfs"
  # bash, python3 and node from this host, with their libraries (and those of Python's C modules).
  copy_with_libs "$rootfs" /usr/bin/bash "$node"
  [ "$node" = /usr/bin/node ] || ln -s "$node" "$rootfs/usr/bin/node"
  copy_python "$rootfs"
  # Everything else (test for the agent's startup probe, env for bin/spool's shebang, sleep, cat...).
  add_busybox "$rootfs"

  # The app: bin/, dist/, package.json and the production dependencies only.
  mkdir -p "$rootfs/app"
  cp -a "$repo/bin" "$repo/dist" "$repo/package.json" "$repo/package-lock.json" "$rootfs/app/"
  cp -a "$repo/node_modules" "$rootfs/app/node_modules"
  (cd "$rootfs/app" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  rm -f "$rootfs/app/package-lock.json"
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/hyperspool" "$rootfs/app/sdk/python"
  ln -s /app/bin/spool "$rootfs/usr/local/bin/spool"
  # The static client the agent copies into each pass's pod (src/operator/passes/job-builder.ts),
  # and the reporter an activity attempt's pod copies (src/operator/activities/activity-job.ts).
  ln -s /app/dist/native/linux-x64/spool "$rootfs/usr/local/lib/hyperspool/spool"
  ln -s /app/dist/native/linux-x64/spool-activity-attempt "$rootfs/usr/local/lib/hyperspool/spool-activity-attempt"
  # The managed environment: `from hyperspool import script` with nothing installed.
  cp -a "$repo/sdk/python/src" "$rootfs/app/sdk/python/src"

  printf 'root:x:0:0:root:/root:/bin/sh\nspool:x:1000:1000:spool:/home/spool:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nspool:x:1000:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  chown -R 0:0 "$rootfs"
  install -d -o 1000 -g 1000 -m 755 "$rootfs/home/spool"
  app_rootfs=$rootfs
  trap 'rm -rf "$cache/.app-rootfs" "$packed_layer"' EXIT
}

build_runner() {
  local out="$cache/runner.tar"
  build_app_rootfs
  pack "$app_rootfs" hyperspool/runner:dev \
    '{"User":"1000","WorkingDir":"/home/spool","Env":["PATH=/usr/local/bin:/usr/bin:/bin","HOME=/home/spool","NODE_ENV=production","PYTHONPATH=/app/sdk/python/src","NODE_OPTIONS=--import=file:///app/dist/agent/sdks/register-sdk-resolve.js"],"Cmd":["spool","--help"]}' "$out"
  built=$out
}

build_operator() {
  local out="$cache/operator.tar"
  build_app_rootfs
  pack "$app_rootfs" hyperspool/operator:dev \
    '{"User":"65532","WorkingDir":"/tmp","Env":["PATH=/usr/local/bin:/usr/bin:/bin","HOME=/tmp","NODE_ENV=production"],"Cmd":["spool","operator"]}' "$out"
  built=$out
}

build_plain() {
  local out="$cache/plain.tar" rootfs="$cache/.plain-rootfs"
  [ -f "$out" ] && { built=$out; return; }
  new_rootfs "$rootfs"
  copy_with_libs "$rootfs" /usr/bin/bash
  copy_python "$rootfs"
  add_busybox "$rootfs"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\n' >"$rootfs/etc/group"
  chown -R 0:0 "$rootfs"
  # Like most images people bring: root by default (the pod runs it as 1000), no Hyperspool.
  pack "$rootfs" hyperspool/plain:dev '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["bash"]}' "$out"
  rm -rf "$rootfs"
  built=$out
}

build_postgres() {
  local out="$cache/postgres.tar" rootfs="$cache/.postgres-rootfs" bindir version
  [ -f "$out" ] && { built=$out; return; }
  bindir=$(compgen -G '/usr/lib/postgresql/*/bin/postgres' | sort -V | tail -n1 | xargs -r dirname)
  if [ -z "$bindir" ]; then
    need_package /usr/share/postgresql-common postgresql
    bindir=$(compgen -G '/usr/lib/postgresql/*/bin/postgres' | sort -V | tail -n1 | xargs dirname)
  fi
  version=$(basename "$(dirname "$bindir")")
  new_rootfs "$rootfs"
  # The server, its extensions (plpgsql...) and the shared files initdb reads (postgres.bki, the
  # timezone data and sample configurations).
  copy_with_libs "$rootfs" "$bindir"/{postgres,initdb,pg_ctl,pg_isready}
  mapfile -t modules < <(find "/usr/lib/postgresql/$version/lib" -name '*.so')
  copy_with_libs "$rootfs" "${modules[@]}"
  tar -C / -cf - "usr/share/postgresql/$version" usr/share/zoneinfo 2>/dev/null | tar -C "$rootfs" -xf -
  add_busybox "$rootfs"
  printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\npostgres:x:999:\n' >"$rootfs/etc/group"
  chown -R 0:0 "$rootfs"
  install -d -o 999 -g 999 -m 755 "$rootfs/var/lib/postgresql" "$rootfs/var/run/postgresql"
  pack "$rootfs" hyperspool/postgres:dev \
    "{\"User\":\"999\",\"Env\":[\"PATH=/usr/lib/postgresql/$version/bin:/usr/bin:/bin\",\"PGDATA=/var/lib/postgresql/data\"],\"Cmd\":[\"postgres\"]}" "$out"
  rm -rf "$rootfs"
  built=$out
}

build_s3() {
  local out="$cache/s3.tar" rootfs="$cache/.s3-rootfs" binary
  binary=$(bash "$here/build-s3-server.sh")
  [ -f "$out" ] && [ "$out" -nt "$binary" ] && { built=$out; return; }
  new_rootfs "$rootfs"
  cp "$binary" "$rootfs/usr/bin/versitygw"
  add_busybox "$rootfs"
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/data:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
  chown -R 0:0 "$rootfs"
  install -d -o 65532 -g 65532 -m 755 "$rootfs/data"
  pack "$rootfs" hyperspool/s3:dev '{"User":"65532","Env":["PATH=/usr/bin:/bin"],"Cmd":["versitygw","--help"]}' "$out"
  rm -rf "$rootfs"
  built=$out
}

import_image() { # tarball
  [ -S "$sock" ] || { log "no local cluster runs in $node_dir: not importing $1"; return 0; }
  ctr --address "$sock" -n k8s.io images import "$1" >&2
}

for image in "${images[@]}"; do
  start=$SECONDS
  if [ $build -eq 1 ]; then
    "build_$image" # sets $built: not in a subshell, so the runner and operator share one rootfs
    tarball=$built
    log "$image: $tarball ($(du -h "$tarball" | cut -f1), $((SECONDS - start))s)"
  else
    tarball="$cache/$image.tar"
    [ -f "$tarball" ] || die "$image: $tarball is not built yet (run $0 --no-import $image first)"
    [ -S "$sock" ] || die "no local cluster runs in $node_dir: nothing to import $image into"
  fi
  if [ $import -eq 1 ]; then
    start=$SECONDS
    import_image "$tarball"
    log "$image: imported in $((SECONDS - start))s"
  fi
  echo "$tarball"
done
