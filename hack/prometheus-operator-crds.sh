#!/usr/bin/env bash
# Prints the directory holding the Prometheus Operator's CRDs (ServiceMonitor, PrometheusRule...),
# from its Go module on the Go module proxy at a pinned release: the same YAML its own bundle
# installs, without a registry or a Helm chart. The module lands in Go's module cache once.
#   kubectl apply --server-side -f "$(hack/prometheus-operator-crds.sh)"
# test/operator/alerts.test.ts installs them on its kube-apiserver to dry-run config/prometheus.
set -euo pipefail
version=v0.85.0
module=github.com/prometheus-operator/prometheus-operator
# Outside any module: go mod download takes module@version as it stands.
cd "$(mktemp -d)"
trap 'rmdir "$PWD" 2>/dev/null || true' EXIT
dir=$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir/example/prometheus-operator-crd" ]; then
  echo "prometheus-operator-crds: could not download $module@$version from the Go module proxy" >&2
  exit 1
fi
echo "$dir/example/prometheus-operator-crd"
