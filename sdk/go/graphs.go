package hyperspool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unicode/utf8"
)

// A NodeOption sets something about a node run by CallNode besides its kind and config.
type NodeOption func(*nodeOptions)

type nodeOptions struct {
	name string
}

// NodeName names the node (its node.id, and the name a failure carries); the default is its type.
func NodeName(name string) NodeOption {
	return func(o *nodeOptions) { o.name = name }
}

// CallNode runs one graph node kind ("http", "script", "call", "approval", "wait", "sleep";
// docs/graphs.md) as durable calls of this run and returns its output as JSON, as `spool
// call-node` does: an http node's is {status, headers, body}. Any value in config may be
// {"$expr": "..."} over input and node; node.idempotency_key is this call's, the same on every
// replay. A replay answers from the journal and sends nothing. A failed node is a *StepFailed
// named for the node; a config the kind does not take, a *ScriptError (usage), recording nothing.
func CallNode(nodeType string, config map[string]any, opts ...NodeOption) (json.RawMessage, error) {
	var o nodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	label := nodeType
	if o.name != "" {
		label = o.name
	}
	raw, err := encodeJSON(config)
	if err != nil {
		return nil, usageError(fmt.Sprintf("call_node '%s': the config cannot be written as JSON: %v", label, err))
	}
	req := NewRequest("call.node").With("type", nodeType).With("config", raw)
	if o.name != "" {
		req.With("name", o.name)
	}
	answer, err := process.call(req)
	if err != nil {
		return nil, err
	}
	if err := checkExit(answer, label); err != nil {
		return nil, err
	}
	if output := text(answer); output != "" {
		return json.RawMessage(output), nil
	}
	return json.RawMessage("null"), nil
}

// CallGraph runs the graph document at path (a .json or .yaml file whose top level has nodes) as a
// child run, waits for it holding no process, and returns its outputs, as `spool call-graph` does:
// each as JSON, an output whose text is not JSON as that text (a JSON string). The file is read
// now and the run records the graph it started, so a replayed call needs no file (a new pod has
// none of the files the last pass made); a new one whose file cannot be read is refused. input is
// any value encoding/json can write; nil sends none. A failed graph is a *StepFailed named path.
func CallGraph(path string, input any) (map[string]json.RawMessage, error) {
	req := NewRequest("call").With("workflow", path)
	script, unreadable := readGraph(path)
	req.With("script", script).With("interpreter", "graph")
	if input != nil {
		raw, err := encodeJSON(input)
		if err != nil {
			return nil, usageError(fmt.Sprintf("call_graph '%s': the input cannot be written as JSON: %v", path, err))
		}
		req.With("input", raw)
	}
	if unreadable != "" {
		req.With("unreadable", unreadable)
	}
	answer, err := process.call(req)
	if err != nil {
		return nil, err
	}
	if err := checkExit(answer, path); err != nil {
		return nil, err
	}
	outputs := make(map[string]json.RawMessage)
	if output := text(answer); output != "" {
		var texts map[string]string
		if err := json.Unmarshal([]byte(output), &texts); err != nil {
			return nil, internalError("call_graph: the agent's outputs are not a JSON object of texts: " + err.Error())
		}
		for key, value := range texts {
			outputs[key] = cellValue(value)
		}
	}
	return outputs, nil
}

// readGraph is the file's text, or why it cannot be sent: the agent refuses a new call with that
// reason and answers a recorded one without the file.
func readGraph(path string) (script, unreadable string) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "call_graph: cannot read " + path + ": no such file"
	case err != nil:
		return "", "call_graph: cannot read " + path + ": " + err.Error()
	case !utf8.Valid(data):
		return "", "call_graph: cannot read " + path + ": it is not UTF-8 text"
	}
	return string(data), ""
}
