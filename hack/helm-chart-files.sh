#!/usr/bin/env bash
# Copies what the Helm chart (deploy/helm/hyperspool) takes verbatim from config/ into its files/:
# the CRDs, the Prometheus alerts and the Argo CD health checks. Helm reads only files inside a
# chart, so these are copies; test/operator/helm-chart.test.ts fails while one differs from its
# source, and says to run this.
#
#   bash hack/helm-chart-files.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
files=deploy/helm/hyperspool/files

rm -rf "$files/crds" "$files/argocd"
mkdir -p "$files/crds" "$files/argocd"
cp crds/*.yaml "$files/crds/"
cp config/prometheus/rules.yaml "$files/prometheus-rules.yaml"
for script in config/argocd/resource_customizations/hyperspool.dev/*/health.lua; do
  kind=$(basename "$(dirname "$script")")
  cp "$script" "$files/argocd/$kind.lua"
done
