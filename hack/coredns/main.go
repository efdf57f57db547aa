// The cluster DNS of hack/local-cluster.sh: CoreDNS built with only the plugins a one-node test
// cluster needs (Service and pod names from the API server, every other name forwarded to the
// host's resolver), so the build pulls in no cloud SDKs. Each plugin registers itself in its
// package's init; CoreDNS orders them by its own directive list, not by these imports.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
