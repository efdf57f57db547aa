#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, whose pods really run, from pinned sources only,
# inside a network namespace of its own: nothing here changes the host's networking besides one
# veth interface (and its /30 address) that `down` removes again.
#
#   hack/local-cluster.sh up       start (or finish starting) it; prints `export KUBECONFIG=...`
#   hack/local-cluster.sh down     stop it and remove every process, mount, netns, cgroup and file it made
#   hack/local-cluster.sh status   what runs, where
#   hack/local-cluster.sh restart NAME...
#                                  kill these of the node's processes (kube-apiserver, kubelet, ...)
#                                  as a crash would, and start them again as a supervisor would
#
# Needs root (network namespace, cgroups, mounts) and Debian's containerd, runc,
# containernetworking-plugins, iproute2 and iptables (installed with apt-get when missing).
#
# What runs (all inside the network namespace $HYPERSPOOL_NODE_NETNS, default hyperspool-node):
#   etcd                      127.0.0.1:2379 (of the namespace)
#   kube-apiserver            :6443, reached from the host at https://$NODE_IP:6443
#   kube-controller-manager   with service account tokens, root CA publishing, CSR signing
#   kube-scheduler
#   containerd 1.6 + runc     cgroupfs driver, CRI with the bridge CNI (pods in $POD_CIDR, masqueraded
#                             to $NODE_IP when they leave the namespace)
#   kubelet                   node `hyperspool-node`, cgroups under /hyperspool, cgroup v1 allowed
#   kube-proxy                iptables mode: Service IPs route (to pods, and `kubernetes` to the
#                             apiserver), every Service connection masqueraded (see write_configs)
#   coredns                   the cluster DNS on $NODE_IP:53: Service and pod names under
#                             cluster.local, which pods get as their nameserver
# The Kubernetes binaries come from hack/build-k8s.sh (pinned, from the Go module proxy); nothing is
# pulled from a registry: `up` imports the static pause image that hack/images.sh builds, and
# workload images are imported the same way (`hack/images.sh runner`); pods use
# imagePullPolicy: IfNotPresent (or Never).
#
# Networking: the host side of the veth is $HOST_IP (default 10.244.255.1), the node side $NODE_IP
# (10.244.255.2). Pods reach Services by name (hyperspool-operator.hyperspool-system.svc) and by
# ClusterIP, and a server on the host at http://$HOST_IP:PORT if it listens on 0.0.0.0 or $HOST_IP.
#
# Environment:
#   HYPERSPOOL_NODE_DIR     state directory (default /tmp/hyperspool-node); `down` deletes it
#   HYPERSPOOL_NODE_NETNS   name of the network namespace (default hyperspool-node)
#   HYPERSPOOL_NODE_VETH    name of the host side of the veth (default hsnode0)
#   HYPERSPOOL_NODE_HOST_IP, HYPERSPOOL_NODE_IP   the two ends of the veth's /30
#   HYPERSPOOL_NODE_POD_CIDR                      the pods' subnet (default 10.88.0.0/16)
#   HYPERSPOOL_CACHE        where hack/build-k8s.sh and hack/images.sh cache (default ~/.cache/hyperspool)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${HYPERSPOOL_NODE_DIR:-/tmp/hyperspool-node}
netns=${HYPERSPOOL_NODE_NETNS:-hyperspool-node}
veth=${HYPERSPOOL_NODE_VETH:-hsnode0}
host_ip=${HYPERSPOOL_NODE_HOST_IP:-10.244.255.1}
node_ip=${HYPERSPOOL_NODE_IP:-10.244.255.2}
pod_cidr=${HYPERSPOOL_NODE_POD_CIDR:-10.88.0.0/16}
node_name=hyperspool-node
cgroup_root=/hyperspool
cni_network=hyperspool-node
cluster_dns=$node_ip
pki="$dir/pki"
logs="$dir/logs"
ctrd="$dir/containerd"
sock="$ctrd/containerd.sock"
kubelet_dir="$dir/kubelet"
issuer=https://kubernetes.default.svc.cluster.local
service_cidr=10.96.0.0/16
service_ip=10.96.0.1
apiserver_port=6443
pause_image=docker.io/hyperspool/pause:3.10

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=hack/lib/common.sh
source "$here/lib/common.sh"

in_netns() { nsenter --net="/run/netns/$netns" -- "$@"; }

# ---------------------------------------------------------------------------------------------
# Processes: a session of their own inside the node's network namespace, a pid file each
# (pid_of, wait_until and tail_log are in hack/lib/common.sh).

stop_processes() { # seconds name...: SIGTERM to all at once, SIGKILL to those still there after that long
  local seconds=$1 name pid pids=() i
  shift
  for name in "$@"; do
    if pid=$(pid_of "$name"); then pids+=("$pid"); fi
  done
  [ ${#pids[@]} -eq 0 ] || kill -TERM "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do
    for ((i = 0; i < seconds * 10; i++)); do
      alive "$pid" || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.05; done
  done
  for name in "$@"; do rm -f "$dir/$name.pid"; done
}

start_process() { # name argv...: inside the node's network namespace, logging to logs/NAME.log
  local name=$1; shift
  mkdir -p "$logs"
  # The subshell, setsid and nsenter all exec, so $! ends up being the binary itself. Every
  # descriptor above stderr is closed first: `flock /tmp/hyperspool-node.lock <this script>` passes
  # its lock on fd 3, and daemons that kept it held the node's lock for as long as the node ran,
  # long after the command that took it ended (everyone else then waited forever).
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    exec setsid nsenter --net="/run/netns/$netns" -- "$@" </dev/null >>"$logs/$name.log" 2>&1
  ) &
  echo $! >"$dir/$name.pid"
}

# ---------------------------------------------------------------------------------------------
# Prerequisites

ensure_packages() {
  local missing=()
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  command -v iptables >/dev/null 2>&1 || missing+=(iptables)
  command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} with apt-get"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

find_binaries() {
  BIN=$("$here/build-k8s.sh" all)
}

kubectl_() { "$BIN/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }

# ---------------------------------------------------------------------------------------------
# The network namespace and its veth

setup_netns() {
  if [ ! -d /run/netns ]; then touch "$dir/.created-run-netns"; fi
  if [ ! -e "/run/netns/$netns" ]; then
    ip netns add "$netns"
  fi
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" type veth peer name eth0 netns "$netns"
  fi
  ip addr replace "$host_ip/30" dev "$veth"
  ip link set "$veth" up
  ip -n "$netns" link set lo up
  ip -n "$netns" addr replace "$node_ip/30" dev eth0
  ip -n "$netns" link set eth0 up
  # Components that look for "the" interface (kubelet, kube-apiserver) want a default route. The
  # host does not forward (its ip_forward is left alone), so nothing leaves the host this way.
  ip -n "$netns" route replace default via "$host_ip" dev eth0
  # Per network namespace, so this changes only the node's.
  in_netns sysctl -qw net.ipv4.ip_forward=1
}

# ---------------------------------------------------------------------------------------------
# Certificates (new_ca and issue_cert are in hack/lib/common.sh): one per component.

make_pki() {
  # A state directory made before the front proxy existed gets it now.
  [ -f "$pki/done" ] && { [ -f "$pki/front-proxy-client.crt" ] || new_front_proxy; return 0; }
  rm -rf "$pki"
  mkdir -p "$pki"
  chmod 700 "$pki"
  new_ca hyperspool-node-ca
  issue_cert apiserver "/CN=kube-apiserver" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$node_ip,IP:$service_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  local client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  issue_cert admin "/O=system:masters/CN=hyperspool-admin" "$client"
  issue_cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  issue_cert controller-manager "/CN=system:kube-controller-manager" "$client"
  issue_cert scheduler "/CN=system:kube-scheduler" "$client"
  issue_cert kubelet "/O=system:nodes/CN=system:node:$node_name" "$client"
  issue_cert kube-proxy "/CN=system:kube-proxy" "$client"
  issue_cert coredns "/CN=hyperspool:coredns" "$client"
  new_key "$pki/sa.key"
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
  new_front_proxy
  touch "$pki/done"
}

write_configs() {
  mkdir -p "$dir/kubeconfigs" "$ctrd" "$dir/cni/net.d" "$dir/cni/ipam" "$kubelet_dir/root" "$kubelet_dir/pod-logs"
  # People and the operator on the host reach the apiserver through the veth; the components
  # inside the namespace through its loopback.
  write_kubeconfig "$dir/kubeconfig" hyperspool-node admin "https://$node_ip:$apiserver_port"
  for c in controller-manager scheduler kubelet kube-proxy coredns; do
    write_kubeconfig "$dir/kubeconfigs/$c" hyperspool-node "$c" "https://127.0.0.1:$apiserver_port"
  done

  # containerd: every path under the state directory (the shims' sockets are the exception:
  # containerd 1.6 always puts them in /run/containerd/s, named by a hash of this socket's path).
  cat >"$ctrd/config.toml" <<EOF
version = 2
root = "$ctrd/root"
state = "$ctrd/state"
oom_score = 0
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$ctrd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$ctrd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
EOF

  cat >"$dir/cni/net.d/10-$cni_network.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$cni_network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$pod_cidr" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$dir/cni/ipam"
      }
    }
  ]
}
EOF

  # What the cluster DNS forwards other names to, and what pods with dnsPolicy Default get: the
  # host's nameservers, without the host's search domains.
  grep '^nameserver' /etc/resolv.conf >"$dir/resolv.conf" 2>/dev/null || true

  # kube-proxy: masqueradeAll because pods share one bridge, and this node loads no br_netfilter (a
  # host kernel module): a reply from a Service's pod to a client pod on the same bridge would be
  # switched past the DNAT's conntrack entry. Masqueraded, it comes back through the node. The
  # conntrack table is the network namespace's: leave its sizes and timeouts as they are.
  cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $dir/kubeconfigs/kube-proxy
mode: iptables
clusterCIDR: $pod_cidr
hostnameOverride: $node_name
bindAddress: $node_ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables:
  masqueradeAll: true
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

  cat >"$dir/Corefile" <<EOF
.:53 {
    bind $cluster_dns
    errors
    health 127.0.0.1:10054
    ready 127.0.0.1:10181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $dir/kubeconfigs/coredns
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . $dir/resolv.conf
    cache 30
    loadbalance
}
EOF

  cat >"$kubelet_dir/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $pki/ca.crt
authorization:
  mode: Webhook
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: unix://$sock
imageServiceEndpoint: unix://$sock
cgroupDriver: cgroupfs
cgroupRoot: $cgroup_root
failCgroupV1: false
failSwapOn: false
podLogsDir: $kubelet_dir/pod-logs
resolvConf: $dir/resolv.conf
clusterDNS: [$cluster_dns]
clusterDomain: cluster.local
staticPodPath: ""
serializeImagePulls: false
# A test node on a shared disk: evict only when it is really full; never collect images (the
# imported ones cannot be pulled back).
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
}

# ---------------------------------------------------------------------------------------------
# Cgroups: the kubelet's root, in every v1 hierarchy (it must exist before the kubelet starts)

cgroup_hierarchies() { # [--with-unified]: the v1 hierarchies (and the v2 one of a hybrid host, where runc makes cgroups too)
  local d
  for d in /sys/fs/cgroup/*/; do
    d=${d%/}
    [ -f "$d/cgroup.procs" ] || continue
    [ "$(basename "$d")" = unified ] && [ "${1:-}" != --with-unified ] && continue
    echo "$d"
  done
}

setup_cgroups() {
  local h
  for h in $(cgroup_hierarchies); do mkdir -p "$h$cgroup_root"; done
}

# ---------------------------------------------------------------------------------------------
# The components

etcd_healthy() { in_netns curl -fsS "http://127.0.0.1:2379/health" | grep -q '"health":"true"'; }

apiserver_ready() {
  [ "$(curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://$node_ip:$apiserver_port/readyz")" = ok ]
}

start_etcd() {
  pid_of etcd >/dev/null && return 0
  start_process etcd "$BIN/etcd" \
    --name=hyperspool-node \
    --data-dir="$dir/etcd" \
    --listen-client-urls=http://127.0.0.1:2379 \
    --advertise-client-urls=http://127.0.0.1:2379 \
    --listen-peer-urls=http://127.0.0.1:2380 \
    --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=hyperspool-node=http://127.0.0.1:2380 \
    --unsafe-no-fsync \
    --log-level=warn
  wait_until etcd 60 etcd_healthy
}

start_apiserver() {
  pid_of kube-apiserver >/dev/null && return 0
  local front_proxy=()
  mapfile -t front_proxy < <(front_proxy_flags)
  start_process kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 \
    --advertise-address="$node_ip" \
    --secure-port="$apiserver_port" \
    --tls-cert-file="$pki/apiserver.crt" \
    --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    "${front_proxy[@]}" \
    --kubelet-client-certificate="$pki/kubelet-client.crt" \
    --kubelet-client-key="$pki/kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer="$issuer" \
    --service-account-key-file="$pki/sa.pub" \
    --service-account-signing-key-file="$pki/sa.key" \
    --api-audiences="$issuer,hyperspool" \
    --service-cluster-ip-range="$service_cidr" \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true \
    --profiling=false
  wait_until kube-apiserver 120 apiserver_ready
}

start_controller_manager() {
  pid_of kube-controller-manager >/dev/null && return 0
  start_process kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$dir/kubeconfigs/controller-manager" \
    --authentication-kubeconfig="$dir/kubeconfigs/controller-manager" \
    --authorization-kubeconfig="$dir/kubeconfigs/controller-manager" \
    --bind-address=127.0.0.1 \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" \
    --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" \
    --cluster-signing-key-file="$pki/ca.key" \
    --controllers='*' \
    --profiling=false
}

start_scheduler() {
  pid_of kube-scheduler >/dev/null && return 0
  start_process kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$dir/kubeconfigs/scheduler" \
    --authentication-kubeconfig="$dir/kubeconfigs/scheduler" \
    --authorization-kubeconfig="$dir/kubeconfigs/scheduler" \
    --bind-address=127.0.0.1 \
    --leader-elect=false \
    --profiling=false
}

containerd_ready() { ctr --address "$sock" version; }

start_containerd() {
  pid_of containerd >/dev/null && return 0
  # The shims' sockets land in /run/containerd/s whatever the configuration: note whether that
  # directory is ours to remove again.
  [ -d /run/containerd ] || touch "$dir/.created-run-containerd"
  [ -d /var/lib/cni ] || touch "$dir/.created-var-lib-cni"
  start_process containerd containerd --config "$ctrd/config.toml"
  wait_until containerd 60 containerd_ready
}

import_pause() {
  ctr --address "$sock" -n k8s.io images ls -q | grep -qx "$pause_image" && return 0
  local tarball
  tarball=$("$here/images.sh" --no-import pause)
  ctr --address "$sock" -n k8s.io images import "$tarball" >/dev/null
}

start_kubelet() {
  pid_of kubelet >/dev/null && return 0
  [ -d /var/log/containers ] || touch "$dir/.created-var-log-containers"
  start_process kubelet "$BIN/kubelet" \
    --config="$kubelet_dir/config.yaml" \
    --kubeconfig="$dir/kubeconfigs/kubelet" \
    --root-dir="$kubelet_dir/root" \
    --cert-dir="$kubelet_dir/pki" \
    --hostname-override="$node_name" \
    --node-ip="$node_ip" \
    --v=1
}

# What CoreDNS reads; bound to the user its certificate names.
coredns_rbac() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: hyperspool:coredns
rules:
  - apiGroups: [""]
    resources: [services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: hyperspool:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: hyperspool:coredns
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: hyperspool:coredns
EOF
}

coredns_ready() { in_netns curl -fsS http://127.0.0.1:10181/ready >/dev/null; }

start_coredns() {
  pid_of coredns >/dev/null && return 0
  wait_until kube-apiserver 60 coredns_rbac
  start_process coredns "$BIN/coredns" -conf "$dir/Corefile"
  wait_until coredns 60 coredns_ready
}

kube_proxy_ready() { in_netns curl -fsS http://127.0.0.1:10256/healthz >/dev/null; }

start_kube_proxy() {
  pid_of kube-proxy >/dev/null && return 0
  start_process kube-proxy "$BIN/kube-proxy" --config="$dir/kube-proxy.yaml" --v=1
}

node_ready() {
  [ "$(kubectl_ get node "$node_name" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
default_sa_exists() { kubectl_ -n default get serviceaccount default; }

cmd_up() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespace, cgroups, mounts)"
  local start=$SECONDS
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
  ensure_packages
  find_binaries
  touch "$dir/node.env"
  setup_netns
  make_pki
  write_configs
  setup_cgroups
  log "starting the node in network namespace $netns ($node_ip; logs in $logs)"
  start_etcd
  start_apiserver
  start_controller_manager
  start_scheduler
  start_containerd
  import_pause
  start_kubelet
  start_kube_proxy
  start_coredns
  wait_until kubelet 120 node_ready
  wait_until kube-proxy 60 kube_proxy_ready
  wait_until kube-controller-manager 60 default_sa_exists
  log "node $node_name Ready after $((SECONDS - start))s"
  echo "export KUBECONFIG=$dir/kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# down: processes first (kubelet, then the pods' processes, then the rest), then mounts, network
# namespaces, cgroups and files.

our_shims() { # pids of containerd shims serving our containerd (their command line names its socket)
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ "$cmd" == *containerd-shim* && "$cmd" == *"-address $sock "* ]] && basename "$p"
  done
  return 0
}

cgroup_pids() { # every process in the kubelet's cgroups
  local h=/sys/fs/cgroup/pids
  [ -d "$h$cgroup_root" ] || h=$(cgroup_hierarchies | head -n1)
  [ -d "$h$cgroup_root" ] || return 0
  find "$h$cgroup_root" -name cgroup.procs -exec cat {} + 2>/dev/null
}

sandbox_ids() { # the containers (sandboxes included) of our containerd, if it runs
  if [ -S "$sock" ] && pid_of containerd >/dev/null; then
    ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null || true
  fi
}

pod_netns_paths() { # ids...: the network namespaces of our pods, by the veths that link them to the node and by the sandboxes' specs
  local id
  if [ -e "/run/netns/$netns" ]; then
    ip -n "$netns" -d link show type veth 2>/dev/null | grep -o 'link-netns [^ ]*' | awk '{ print "/run/netns/" $2 }' || true
  fi
  for id in "$@"; do
    ctr --address "$sock" -n k8s.io containers info "$id" 2>/dev/null | grep -o '"/var/run/netns/cni-[^"]*"\|"/run/netns/cni-[^"]*"' | tr -d '"' | sed 's|^/var/run/|/run/|' || true
  done
}

started_at() { # pid: its start time in clock ticks since boot (field 22 of /proc/PID/stat), if it runs
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) } # past the command, which may hold spaces and parentheses
  echo "$stat" | awk '{ print $20 }'
}

kill_all() { # pid...: SIGKILL, and wait until they are gone
  local p i since
  local -A started=()
  [ $# -gt 0 ] || return 0
  for p in "$@"; do started[$p]=$(started_at "$p" || true); done
  kill -KILL "$@" 2>/dev/null || true
  for p in "$@"; do
    # Gone, or its pid already reused by another process (a kernel worker, once: kill -0 alone
    # then waited forever); and never more than a minute for a process stuck in the kernel.
    for ((i = 0; i < 1200; i++)); do
      since=$(started_at "$p") || break
      [ "$since" = "${started[$p]}" ] || break
      sleep 0.05
    done
  done
}

cmd_down() {
  if [ ! -d "$dir" ]; then
    [ ! -e "/run/netns/$netns" ] || log "no state in $dir, but network namespace $netns exists: not touching it (ip netns delete $netns)"
    return 0
  fi
  [ -f "$dir/node.env" ] || die "$dir holds no local cluster"
  exec 9>"$dir/.lock"
  flock 9
  local netns_paths ids p i
  ids=$(sandbox_ids)
  # shellcheck disable=SC2086 # one id a word
  netns_paths=$(pod_netns_paths $ids | sort -u)

  stop_processes 10 kubelet
  # The pods' processes: whatever is in the kubelet's cgroups, until nothing is left (a process
  # can fork while we look).
  for ((i = 0; i < 50; i++)); do
    mapfile -t pids < <(cgroup_pids)
    [ ${#pids[@]} -gt 0 ] || break
    kill_all "${pids[@]}"
  done
  mapfile -t pids < <(our_shims)
  kill_all "${pids[@]}"
  # Nothing of their state is kept, so a short grace: kube-apiserver, for one, waits up to a
  # minute for its clients' requests to drain when asked to stop.
  stop_processes 3 coredns kube-proxy containerd kube-scheduler kube-controller-manager kube-apiserver etcd

  # Mounts under the state directory (overlays, shm, volumes), deepest first.
  local mounts
  mounts=$(awk -v d="$dir/" 'substr($5, 1, length(d)) == d { print $5 }' /proc/self/mountinfo | sort -r)
  for p in $mounts; do umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || log "cannot unmount $p"; done

  # The pods' network namespaces, then the node's (its veths and bridge go with it, and so does
  # the host side of its veth).
  for p in $netns_paths; do
    [ -e "$p" ] || continue
    umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || true
    rm -f "$p"
  done
  if [ -e "/run/netns/$netns" ]; then ip netns delete "$netns"; fi
  if ip link show "$veth" >/dev/null 2>&1; then ip link delete "$veth"; fi
  if [ -f "$dir/.created-run-netns" ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
    umount /run/netns 2>/dev/null || true
    rmdir /run/netns 2>/dev/null || true
  fi

  # CNI's result cache (libcni writes it in /var/lib/cni/results whatever the configuration); CNI
  # DEL removes an entry, but a pod still running now never had one.
  rm -f /var/lib/cni/results/"$cni_network"-* 2>/dev/null || true
  for p in $ids; do rm -f "/var/lib/cni/results/cni-loopback-$p-lo"; done
  if [ -f "$dir/.created-var-lib-cni" ]; then
    rmdir /var/lib/cni/results 2>/dev/null || true
    rmdir /var/lib/cni 2>/dev/null || true
  fi

  # The kubelet's cgroups, deepest first.
  local h
  for h in $(cgroup_hierarchies --with-unified); do
    [ -d "$h$cgroup_root" ] || continue
    find "$h$cgroup_root" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ -d "$h$cgroup_root" ] && log "cannot remove cgroup $h$cgroup_root"
  done

  # The kubelet's symlinks to the pods' logs, and directories that `up` created outside.
  local link
  for link in /var/log/containers/*; do
    [ -L "$link" ] && [[ "$(readlink "$link")" == "$kubelet_dir/"* ]] && rm -f "$link"
  done
  if [ -f "$dir/.created-var-log-containers" ]; then rmdir /var/log/containers 2>/dev/null || true; fi
  # A shim killed with SIGKILL leaves its socket behind: /run/containerd/s/sha256(address/namespace/id).
  for p in $ids; do rm -f "/run/containerd/s/$(printf '%s' "$sock/k8s.io/$p" | sha256sum | cut -d' ' -f1)"; done
  if [ -f "$dir/.created-run-containerd" ]; then
    rmdir /run/containerd/s 2>/dev/null || true
    rmdir /run/containerd 2>/dev/null || true
  fi
  rm -rf "$dir"
}

cmd_status() {
  [ -f "$dir/node.env" ] || { echo "no local cluster in $dir"; return 1; }
  local name pid ok=0
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns; do
    if pid=$(pid_of "$name"); then echo "$name: running (pid $pid)"; else
      echo "$name: stopped"
      ok=1
    fi
  done
  echo "network namespace: $netns (node $node_ip, host side $veth $host_ip, pods $pod_cidr)"
  echo "kube-apiserver: https://$node_ip:$apiserver_port"
  echo "cluster DNS: $cluster_dns:53 (cluster.local)"
  echo "containerd: $sock (ctr --address $sock -n k8s.io ...)"
  echo "logs: $logs"
  echo "export KUBECONFIG=$dir/kubeconfig"
  return $ok
}

# restart: SIGKILL, no grace (what the e2e suite's fault tests want), then `up`, which starts
# only what does not run and waits until the node is Ready again.
cmd_restart() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespace, cgroups, mounts)"
  [ $# -gt 0 ] || die "usage: $0 restart NAME... (etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns)"
  [ -f "$dir/node.env" ] || die "no local cluster in $dir"
  local name
  for name in "$@"; do pid_of "$name" >/dev/null || die "$name does not run"; done
  (
    exec 9>"$dir/.lock"
    flock 9
    stop_processes 0 "$@"
  )
  log "killed $*; starting again"
  cmd_up >/dev/null
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  restart) shift; cmd_restart "$@" ;;
  *) die "usage: $0 up | down | status | restart NAME..." ;;
esac
