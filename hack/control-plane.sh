#!/usr/bin/env bash
# A local Kubernetes control plane (etcd + kube-apiserver, no nodes, no controllers) on loopback,
# from the pinned binaries of hack/build-k8s.sh. For people, and for test/support/kube.ts, which
# runs it with a state directory of its own per test file.
#
#   hack/control-plane.sh up                 start (or restart) it; prints `export KUBECONFIG=...`
#   hack/control-plane.sh down [--purge]     stop it; --purge also deletes its state (data, certificates)
#   hack/control-plane.sh status             what runs, where
#   hack/control-plane.sh restart-apiserver  stop kube-apiserver and start it again (same port, same etcd)
#
# Environment:
#   HYPERSPOOL_PLANE_DIR   state directory (default ${HYPERSPOOL_CACHE:-~/.cache/hyperspool}/control-plane)
#   ETCD_CLIENT_PORT, ETCD_PEER_PORT, APISERVER_PORT
#                          ports for a first `up` (default: free ones picked at random); kept in
#                          the state directory, so later `up`s reuse them and the kubeconfig stays valid
#   HYPERSPOOL_PLANE_OWNER_PID
#                          if set, a watchdog runs `down --purge` as soon as that process is gone
#                          (the test harness passes its own pid: a killed test run leaves nothing behind)
#   KUBE_APISERVER_EXTRA_ARGS
#                          more kube-apiserver flags, split on spaces (e.g. to enable admission plugins
#                          again once kube-controller-manager runs)
#
# What is different from a real cluster, because no kube-controller-manager runs:
#   - The ServiceAccount admission plugin is disabled. It rejects every Pod whose namespace has no
#     `default` ServiceAccount, and only the controller manager creates those. So Pods get no
#     automatic serviceAccountName nor token volume; a test that wants one creates the
#     ServiceAccount itself and names it (TokenRequest works: it needs only the signing key).
#   - A deleted namespace stays Terminating forever (the namespace controller finalizes it), and
#     owner references are not garbage-collected: tests use fresh namespaces instead of deleting.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
dir=${HYPERSPOOL_PLANE_DIR:-${HYPERSPOOL_CACHE:-$HOME/.cache/hyperspool}/control-plane}
pki="$dir/pki"
logs="$dir/logs"

log() { echo "control-plane: $*" >&2; }
# shellcheck source=hack/lib/common.sh
source "$here/lib/common.sh"
die() { log "$*"; exit 1; }

# The service account issuer, and the audiences kube-apiserver accepts in tokens sent to it:
# `hyperspool` so that a TokenRequest for that audience is also good for calling the API.
issuer=https://kubernetes.default.svc.cluster.local
service_cidr=10.96.0.0/16
service_ip=10.96.0.1

# ---------------------------------------------------------------------------------------------
# Processes: each one runs in a session of its own (setsid: a Ctrl-C in the terminal that ran `up`
# does not reach it) and has a pid file. A pid is only trusted while /proc says it still runs the
# same binary, so a stale pid file can never kill an unrelated process.

stop_process() { # name [--kill]: SIGTERM, then SIGKILL if it has not exited within 10s; --kill: SIGKILL at once
  local pid i
  pid=$(pid_of "$1") || { rm -f "$dir/$1.pid"; return 0; }
  if [ "${2:-}" != --kill ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      alive "$pid" || break
      sleep 0.1
    done
  fi
  kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.05; done
  rm -f "$dir/$1.pid"
}

start_process() { # name argv...: in the background, logging to logs/NAME.log
  local name=$1; shift
  mkdir -p "$logs"
  # 9>&-: the lock taken by up/down/restart must not outlive them in the daemons they start.
  setsid "$@" </dev/null >>"$logs/$name.log" 2>&1 9>&- &
  echo $! >"$dir/$name.pid"
}

# ---------------------------------------------------------------------------------------------
# Ports and configuration

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() { # a port nothing listens on yet, and not one of the arguments
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    [[ " $* " == *" $port "* ]] && continue
    port_in_use "$port" || { echo "$port"; return; }
  done
}

load_config() {
  [ -f "$dir/plane.env" ] || return 1
  # shellcheck source=/dev/null
  . "$dir/plane.env"
}

write_config() {
  local etcd_client=${ETCD_CLIENT_PORT:-} etcd_peer=${ETCD_PEER_PORT:-} apiserver=${APISERVER_PORT:-}
  [ -n "$etcd_client" ] || etcd_client=$(pick_port)
  [ -n "$etcd_peer" ] || etcd_peer=$(pick_port "$etcd_client")
  [ -n "$apiserver" ] || apiserver=$(pick_port "$etcd_client" "$etcd_peer")
  cat >"$dir/plane.env" <<EOF
ETCD_CLIENT_PORT=$etcd_client
ETCD_PEER_PORT=$etcd_peer
APISERVER_PORT=$apiserver
EOF
}

# ---------------------------------------------------------------------------------------------
# Certificates (openssl, ECDSA P-256: fast to generate, and accepted everywhere here):
#   ca              signs everything below; clients trust it for the serving certificate
#   apiserver       serving certificate for 127.0.0.1/localhost and the in-cluster names
#   admin           client certificate in group system:masters (cluster-admin, bypasses RBAC)
#   kubelet-client  what kube-apiserver presents to kubelets (logs/exec, once a node runs)
#   sa.key/sa.pub   signs and verifies service account tokens (TokenRequest, TokenReview)
#   front-proxy-ca, front-proxy-client  what kube-apiserver presents to aggregated API servers
#                   (the operator's api.hyperspool.dev), as kubeadm makes them (hack/lib/common.sh)

make_pki() {
  # A state directory made before the front proxy existed gets it now.
  [ -f "$pki/done" ] && { [ -f "$pki/front-proxy-client.crt" ] || new_front_proxy; return 0; }
  command -v openssl >/dev/null 2>&1 || die "openssl is missing (apt-get install openssl)"
  rm -rf "$pki"
  mkdir -p "$pki"
  chmod 700 "$pki"
  new_ca hyperspool-test-ca
  issue_cert apiserver "/CN=kube-apiserver" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$service_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  local client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  issue_cert admin "/O=system:masters/CN=hyperspool-admin" "$client"
  issue_cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  new_key "$pki/sa.key"
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
  new_front_proxy
  touch "$pki/done"
}

# ---------------------------------------------------------------------------------------------
# etcd and kube-apiserver

etcd_healthy() { curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health" | grep -q '"health":"true"'; }

apiserver_ready() {
  [ "$(curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://127.0.0.1:$APISERVER_PORT/readyz")" = ok ]
}

start_etcd() {
  pid_of etcd >/dev/null && return 0
  # --unsafe-no-fsync: this data is worth nothing after the plane is gone, and fsyncs make every
  # write in the tests wait for the disk.
  start_process etcd "$BIN/etcd" \
    --name=hyperspool \
    --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="hyperspool=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync \
    --log-level=warn
  wait_until etcd 60 etcd_healthy
}

start_apiserver() {
  pid_of kube-apiserver >/dev/null && return 0
  local extra=()
  # shellcheck disable=SC2206 # split on spaces on purpose
  [ -z "${KUBE_APISERVER_EXTRA_ARGS:-}" ] || extra=($KUBE_APISERVER_EXTRA_ARGS)
  local front_proxy=()
  mapfile -t front_proxy < <(front_proxy_flags)
  start_process kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$pki/apiserver.crt" \
    --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    "${front_proxy[@]}" \
    --kubelet-client-certificate="$pki/kubelet-client.crt" \
    --kubelet-client-key="$pki/kubelet-client.key" \
    --service-account-issuer="$issuer" \
    --service-account-key-file="$pki/sa.pub" \
    --service-account-signing-key-file="$pki/sa.key" \
    --api-audiences="$issuer,hyperspool" \
    --service-cluster-ip-range="$service_cidr" \
    --authorization-mode=Node,RBAC \
    --disable-admission-plugins=ServiceAccount \
    --allow-privileged=true \
    --profiling=false \
    "${extra[@]}"
  wait_until kube-apiserver 120 apiserver_ready
}

find_binaries() {
  BIN=$("$here/build-k8s.sh" kube-apiserver etcd)
  command -v curl >/dev/null 2>&1 || die "curl is missing (apt-get install curl)"
}

start_watchdog() {
  local owner=${HYPERSPOOL_PLANE_OWNER_PID:-}
  [ -n "$owner" ] || return 0
  pid_of watchdog >/dev/null && return 0
  # Polls once a second; exec keeps its pid, so `down` knows not to kill the watchdog running it.
  start_process watchdog bash -c \
    'while kill -0 "$1" 2>/dev/null && [ -f "$2/plane.env" ]; do sleep 1; done; [ -f "$2/plane.env" ] && exec bash "$3" down --purge' \
    watchdog "$owner" "$dir" "$self"
}

cmd_up() {
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
  find_binaries
  load_config || write_config
  load_config
  make_pki
  write_kubeconfig "$dir/kubeconfig" hyperspool admin "https://127.0.0.1:$APISERVER_PORT"
  start_watchdog
  log "starting etcd on 127.0.0.1:$ETCD_CLIENT_PORT and kube-apiserver on https://127.0.0.1:$APISERVER_PORT (logs in $logs)"
  start_etcd
  start_apiserver
  echo "export KUBECONFIG=$dir/kubeconfig"
}

cmd_down() {
  [ -d "$dir" ] || return 0
  # Only ever delete a directory that this script set up (HYPERSPOOL_PLANE_DIR could be anything).
  [ -f "$dir/plane.env" ] || die "$dir holds no control plane"
  exec 9>"$dir/.lock"
  flock 9
  # The watchdog first (unless it is what runs this), so that it does not start a second `down`.
  local watchdog
  # Purged, nothing of the servers is kept, so nothing is worth a graceful stop: kube-apiserver
  # took about 4 s to drain, for each test file that starts a plane.
  local how=
  [ "${1:-}" = --purge ] && how=--kill
  if watchdog=$(pid_of watchdog) && [ "$watchdog" != $$ ]; then stop_process watchdog $how; fi
  stop_process kube-apiserver $how
  stop_process etcd $how
  rm -f "$dir/watchdog.pid"
  if [ "${1:-}" = --purge ]; then
    rm -rf "$dir"
  fi
}

cmd_restart_apiserver() {
  load_config || die "no control plane in $dir (run: $0 up)"
  exec 9>"$dir/.lock"
  flock 9
  find_binaries
  stop_process kube-apiserver
  start_apiserver
}

cmd_status() {
  load_config || { echo "no control plane in $dir"; return 1; }
  local name pid ok=0
  for name in etcd kube-apiserver watchdog; do
    if pid=$(pid_of "$name"); then echo "$name: running (pid $pid)"; else
      echo "$name: stopped"
      [ "$name" = watchdog ] || ok=1
    fi
  done
  echo "etcd: http://127.0.0.1:$ETCD_CLIENT_PORT"
  echo "kube-apiserver: https://127.0.0.1:$APISERVER_PORT"
  echo "logs: $logs"
  echo "export KUBECONFIG=$dir/kubeconfig"
  return $ok
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down "${2:-}" ;;
  status) cmd_status ;;
  restart-apiserver) cmd_restart_apiserver ;;
  *) die "usage: $0 up | down [--purge] | status | restart-apiserver" ;;
esac
