package main

import (
	"strings"

	hyperspool "hyperspool.dev/go"
)

// parseCallNode is `spool call-node TYPE --config JSON [--name NAME]`: one graph node kind, run by
// the agent as durable calls of this run (docs/graphs.md). The config goes as the JSON it is
// given; the agent checks it against the node kind's schema.
func parseCallNode(args []string) (*scriptCall, error) {
	parsed, err := parse("call-node", args, optionSpec{"config": stringOption, "name": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	text, ok := parsed.str("config")
	if !ok {
		return nil, usageFailure("call-node", "missing --config")
	}
	config, err := jsonValue("call-node", "--config", text)
	if err != nil {
		return nil, err
	}
	// Valid JSON starts with its value after JSON's own whitespace: an object starts with '{'.
	if !strings.HasPrefix(strings.TrimLeft(text, " \t\n\r"), "{") {
		return nil, usageFailure("call-node", "--config is not a JSON object")
	}
	request := hyperspool.NewRequest("call.node").With("type", parsed.positionals[0]).With("config", config)
	if name, ok := parsed.str("name"); ok {
		request.With("name", name)
	}
	return &scriptCall{request: request}, nil
}
