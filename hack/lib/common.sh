# shellcheck shell=bash disable=SC2154  # dir, logs and pki are the sourcing script's
# Shared by hack/control-plane.sh and hack/local-cluster.sh (sourced, not run). They set `dir`
# (their state directory), `logs`, `pki` and a `log` function before calling these.

# ---------------------------------------------------------------------------------------------
# Processes: each has a pid file in $dir. A pid is only trusted while /proc says it still runs the
# same binary, so a stale pid file can never kill an unrelated process.

pid_of() { # name -> pid, if that process still runs
  local file="$dir/$1.pid" pid exe
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  case "$1" in
    watchdog) [[ "$(basename "$exe")" == bash ]] ;;
    *) [[ "$(basename "${exe% (deleted)}")" == "$1" ]] ;;
  esac && echo "$pid"
}

alive() { # pid: it runs and is not a zombie. The servers' parent exits once they are started, so
  # a killed one stays a zombie until init reaps it (1-2 s here), and kill -0 still finds it.
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

tail_log() { tail -n 30 "$logs/$1.log" >&2 2>/dev/null || true; }

wait_until() { # name seconds command...: until the command succeeds; fails early if NAME exits
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    # kill -0 rather than pid_of: right after the start the pid may still be setsid, not the binary.
    if ! kill -0 "$(cat "$dir/$name.pid" 2>/dev/null || echo 0)" 2>/dev/null; then
      log "$name exited; the end of $logs/$name.log:"
      tail_log "$name"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "$name not ready after ${seconds}s; the end of $logs/$name.log:"
      tail_log "$name"
      return 1
    fi
    sleep 0.2
  done
}

# ---------------------------------------------------------------------------------------------
# Certificates (openssl, ECDSA P-256: fast to generate, and accepted everywhere here), in $pki.

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

new_ca() { # common-name [file]: FILE.key and FILE.crt (ca unless given), which sign certificates
  local file=${2:-ca}
  new_key "$pki/$file.key"
  openssl req -x509 -new -key "$pki/$file.key" -subj "/CN=$1" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$pki/$file.crt"
}

issue_cert() { # name subject extensions [ca]: signed by $pki/CA (ca unless given)
  local name=$1 subject=$2 extensions=$3 ca=${4:-ca}
  new_key "$pki/$name.key"
  openssl req -new -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr"
  # A random positive serial: certificates of different clusters must never look like the same one.
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/$ca.crt" -CAkey "$pki/$ca.key" \
    -set_serial "0x$(openssl rand -hex 15)" -days 3650 -sha256 \
    -extfile <(printf '[ext]\n%s\n' "$extensions") -extensions ext -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr"
}

# The front proxy, as kubeadm sets it up: a CA of its own and the client certificate kube-apiserver
# presents to aggregated API servers (the operator's api.hyperspool.dev), which believe the user it
# names in X-Remote-User and X-Remote-Group only on a connection with this certificate.
new_front_proxy() {
  new_ca front-proxy-ca front-proxy-ca
  issue_cert front-proxy-client "/CN=front-proxy-client" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth" front-proxy-ca
}

# kube-apiserver's flags for the front proxy (kubeadm's): it passes people's identity on to
# aggregated APIs, and publishes the CA and header names in kube-system's
# extension-apiserver-authentication ConfigMap for them. Aggregator routing goes to the endpoints'
# addresses, as no kube-proxy serves the control plane's own network.
front_proxy_flags() {
  printf '%s\n' \
    --requestheader-client-ca-file="$pki/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$pki/front-proxy-client.crt" \
    --proxy-client-key-file="$pki/front-proxy-client.key" \
    --enable-aggregator-routing=true
}

write_kubeconfig() { # file cluster-name cert server: a kubeconfig for the client certificate $pki/CERT
  local b64="base64 -w0"
  cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: $2
  cluster:
    server: $4
    certificate-authority-data: $($b64 <"$pki/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $($b64 <"$pki/$3.crt")
    client-key-data: $($b64 <"$pki/$3.key")
contexts:
- name: $2
  context:
    cluster: $2
    user: $3
current-context: $2
KUBECONFIG
  chmod 600 "$1"
}
