package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	hyperspool "hyperspool.dev/go"
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
	if !utf8.Valid(script) {
		return nil, usageFailure(verb, notUTF8(file, script))
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
		With("script", string(script)).
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
