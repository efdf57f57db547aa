// Package hyperspool speaks the spool socket protocol (docs/protocol.md): the requests a script
// sends the agent of its pass, the answers it gets, and the durations the verbs take.
//
// It is the layer under the native in-script client (cmd/spool) and the Go SDK. Everything it
// sends is byte for byte what the Node client sends, so the agent cannot tell the clients apart.
package hyperspool
