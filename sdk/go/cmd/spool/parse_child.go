package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	hyperspool "hyperspool.dev/go"
)

const supportedExtensions = ".sh, .bash, .py, .mjs, .js, .cjs"

// parseChild reads the child's script now: the run records the script it started, not a path
// that may change before a later pass. A file that cannot be read still goes to the agent with the
// reason: a replayed call needs no file (a new pod has none of the files the last pass made), and
// a new one is refused there, taking no position.
func parseChild(verb string, args []string) (*scriptCall, error) {
	parsed, err := parse(verb, args, optionSpec{"input": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	file := parsed.positionals[0]
	var input json.RawMessage
	if text, ok := parsed.str("input"); ok {
		if input, err = jsonValue(verb, "--input", text); err != nil {
			return nil, err
		}
	}
	interpreter, ok := childInterpreter(file)
	script, unreadable, missing := readChild(verb, file)
	// A name whose extension picks nothing is still sent when there is no such file: on a cluster
	// it may be a Workflow's name (docs/graphs.md); a file that exists is refused here.
	if !ok && !missing {
		return nil, &hyperspool.UsageError{Message: "cannot tell how to run " + file + ": its extension picks the interpreter (" + supportedExtensions + ")"}
	}
	// A graph called by name must be one: a script or a pipeline is refused here, not run.
	if verb == "call-graph" && unreadable == "" && !(interpreter == "pipeline" && isGraph(script)) {
		return nil, usageFailure(verb, file+" is not a graph (a .json, .yaml or .yml document whose top level has nodes)")
	}
	requestVerb := verb
	if verb == "call-graph" {
		requestVerb = "call"
	}
	request := hyperspool.NewRequest(requestVerb).
		With("workflow", file).
		With("script", script)
	if ok {
		request.With("interpreter", interpreter)
	}
	if input != nil {
		request.With("input", input)
	}
	if unreadable != "" {
		request.With("unreadable", unreadable)
	}
	return &scriptCall{request: request}, nil
}

// childInterpreter is what runs the file: a document (.yaml, .yml, .json) runs in the agent, which
// tells a pipeline from a graph by its content; a script by the interpreter its extension picks, as
// the Node client's interpreterOf decides.
func childInterpreter(file string) (string, bool) {
	switch strings.ToLower(extname(file)) {
	case ".yaml", ".yml", ".json":
		return "pipeline", true
	}
	return hyperspool.InterpreterFor(extname(file))
}

// isGraph is documentKind's answer: a JSON object with a `nodes` key, or YAML with one at the top.
func isGraph(text string) bool {
	var data any
	if json.Unmarshal([]byte(text), &data) == nil {
		object, ok := data.(map[string]any)
		_, has := object["nodes"]
		return ok && has
	}
	return hasTopLevelNodesKey(text) // a top-level `nodes:` key, as common/workflow-file.ts's documentKind looks for one
}

// readChild is the file's text, or why it cannot be run as one, worded as the Node client words it;
// missing says there is no such file at all (a Workflow's name, perhaps), not that it cannot be read.
func readChild(verb, file string) (script, unreadable string, missing bool) {
	bytes, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "spool " + verb + ": cannot read " + file + ": no such file", true
	case err != nil && strings.Contains(err.Error(), "is a directory"):
		return "", "spool " + verb + ": cannot read " + file + ": it is a directory", false
	case err != nil:
		return "", "spool " + verb + ": cannot read " + file, false
	case !utf8.Valid(bytes):
		return "", "spool " + verb + ": " + notUTF8(file, bytes), false
	}
	return string(bytes), "", false
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

// notUTF8 refuses a file that is not UTF-8, naming the line of its first bad byte, as the Node
// client does: the engine keeps a script as text, and rewriting the bytes would run another script.
func notUTF8(file string, bytes []byte) string {
	line := 1
	for len(bytes) > 0 {
		r, size := utf8.DecodeRune(bytes)
		if r == utf8.RuneError && size <= 1 {
			break
		}
		if r == '\n' {
			line++
		}
		bytes = bytes[size:]
	}
	return file + " is not UTF-8 text (line " + strconv.Itoa(line) + "); Hyperspool runs a script as the text it keeps, so save the file as UTF-8"
}
