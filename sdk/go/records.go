package hyperspool

import (
	"fmt"
	"path/filepath"
	"strings"
)

// An EmitOption sets something about an emitted event besides its payload.
type EmitOption func(*emitOptions)

type emitOptions struct {
	subject string
}

// Subject keys an emitted event for handlers and waits (an order id, a customer).
func Subject(subject string) EmitOption {
	return func(o *emitOptions) { o.subject = subject }
}

// Emit emits an event of eventType and returns its id. It is recorded: a replay does not emit it
// again. payload is any value encoding/json can write; nil sends none.
func Emit(eventType string, payload any, opts ...EmitOption) (string, error) {
	var o emitOptions
	for _, opt := range opts {
		opt(&o)
	}
	req := NewRequest("event.emit").With("type", eventType)
	if o.subject != "" {
		req.With("subject", o.subject)
	}
	if payload != nil {
		raw, err := encodeJSON(payload)
		if err != nil {
			return "", usageError(fmt.Sprintf("emit %s: the payload cannot be written as JSON: %v", eventType, err))
		}
		req.With("payload", raw)
	}
	answer, err := process.call(req)
	if err != nil {
		return "", err
	}
	if err := expectSuccess(answer, "emit"); err != nil {
		return "", err
	}
	return text(answer), nil
}

// A SpawnOption sets something about a child run besides its text.
type SpawnOption func(*spawnOptions)

type spawnOptions struct {
	input    any
	workflow string
}

// Input is the child run's input, which it reads from $SPOOL_INPUT_FILE.
func Input(value any) SpawnOption {
	return func(o *spawnOptions) { o.input = value }
}

// WorkflowName names the child's file; for a script its extension picks the interpreter (.sh,
// .bash, .py, .mjs, .js, .cjs). The default is child.sh or child.yaml.
func WorkflowName(name string) SpawnOption {
	return func(o *spawnOptions) { o.workflow = name }
}

// Spawn starts a child run and returns its run id without waiting for it. kind is "script"
// (the script runs with bash, unless WorkflowName picks another interpreter) or "pipeline" (a YAML
// document; a graph document runs as a graph).
func Spawn(kind, script string, opts ...SpawnOption) (string, error) {
	var o spawnOptions
	for _, opt := range opts {
		opt(&o)
	}
	var interpreter string
	switch kind {
	case "script":
		if o.workflow == "" {
			o.workflow = "child.sh"
		}
		interpreter, _ = InterpreterFor(filepath.Ext(o.workflow))
		if interpreter == "" {
			return "", usageError("spawn cannot tell how to run " + o.workflow + ": its extension picks the interpreter (.sh, .bash, .py, .mjs, .js, .cjs)")
		}
	case "pipeline":
		if o.workflow == "" {
			o.workflow = "child.yaml"
		}
		interpreter = "pipeline"
	default:
		return "", usageError("spawn takes 'script' or 'pipeline', not '" + kind + "'")
	}
	req := NewRequest("spawn").With("workflow", o.workflow).With("script", script).With("interpreter", interpreter)
	if o.input != nil {
		raw, err := encodeJSON(o.input)
		if err != nil {
			return "", usageError(fmt.Sprintf("spawn: the input cannot be written as JSON: %v", err))
		}
		req.With("input", raw)
	}
	answer, err := process.call(req)
	if err != nil {
		return "", err
	}
	if err := expectSuccess(answer, "spawn"); err != nil {
		return "", err
	}
	return text(answer), nil
}

// interpreters is the interpreter each script extension picks, as the agent picks it
// (src/agent/interpreters.ts); scripts in bash run with errexit and nounset.
var interpreters = map[string]string{
	".sh":   "bash -eu",
	".bash": "bash -eu",
	".py":   "python3",
	".mjs":  "node",
	".js":   "node",
	".cjs":  "node",
}

// InterpreterFor is the interpreter command line a script's extension (".sh", ".py"...) picks,
// and whether there is one: the SDK's Spawn and the native client's spawn and call agree with
// the agent through it.
func InterpreterFor(extension string) (string, bool) {
	interpreter, ok := interpreters[strings.ToLower(extension)]
	return interpreter, ok
}

// OutputSet sets the run's output key: a string as it is, any other value as its JSON.
func OutputSet(key string, value any) error {
	stored, err := storedText("output_set", value)
	if err != nil {
		return err
	}
	answer, err := process.call(NewRequest("output.set").With("key", key).With("value", stored))
	if err != nil {
		return err
	}
	return expectSuccess(answer, "output_set")
}

// Annotate adds a note to the run's timeline.
func Annotate(note string) error {
	answer, err := process.call(NewRequest("annotate").With("text", note))
	if err != nil {
		return err
	}
	return expectSuccess(answer, "annotate")
}
