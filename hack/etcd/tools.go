//go:build tools

// Package tools only records, for `go mod tidy`, that hack/build-k8s.sh builds etcd's server
// command (package main at the module root); the `tools` build tag keeps it out of every real build.
package tools

import _ "go.etcd.io/etcd/server/v3"
