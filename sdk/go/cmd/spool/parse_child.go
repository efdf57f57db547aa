package main

import (
	"encoding/json"
	"os"
	"strings"

	hyperspool "hyperspool.dev/go"
	"hyperspool.dev/go/internal/nodecompat"
)

const supportedExtensions = ".sh, .bash, .py, .mjs, .js, .cjs"

// parseChild reads the child's script now: the run records the script it started, not a path
// that may change before a later pass.
func parseChild(verb string, args []string) (*scriptCall, error) {
	parsed, err := parse(verb, args, optionSpec{"input": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	file := parsed.positionals[0]
	script, err := os.ReadFile(file)
	if err != nil {
		return nil, usageFailure(verb, "cannot read "+file)
	}
	var input json.RawMessage
	if text, ok := parsed.str("input"); ok {
		if input, err = jsonValue(verb, "--input", text); err != nil {
			return nil, err
		}
	}
	interpreter, ok := hyperspool.InterpreterFor(extname(file))
	if !ok {
		return nil, &hyperspool.UsageError{Message: "cannot tell how to run " + file + ": its extension picks the interpreter (" + supportedExtensions + ")"}
	}
	request := hyperspool.NewRequest(verb).
		With("workflow", file).
		With("script", nodecompat.WellFormed(script)).
		With("interpreter", interpreter)
	if input != nil {
		request.With("input", input)
	}
	return &scriptCall{request: request}, nil
}

// extname is Node's path.extname: from the last dot of the last path element, except a dot
// that starts the name (".profile" has none), trailing slashes ignored.
func extname(path string) string {
	path = strings.TrimRight(path, "/")
	base := path[strings.LastIndexByte(path, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || base == ".." {
		return ""
	}
	return base[dot:]
}
