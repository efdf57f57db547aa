package main

import (
	"encoding/json"
	"strconv"
	"strings"

	hyperspool "hyperspool.dev/go"
	"hyperspool.dev/go/internal/nodecompat"
)

// A scriptCall is one parsed in-script call: the request, and the command to run if the agent
// answers execute.
type scriptCall struct {
	request *hyperspool.Request
	command []string
	// artifact says where an artifact's bytes come from (a put's source) or go (a get's dest);
	// "-" is stdin or stdout.
	artifact *artifactEnd
}

var usage = map[string]string{
	"step":              "spool step NAME [--label TEXT] -- COMMAND [ARG...]",
	"sleep":             "spool sleep DURATION",
	"wait signal":       "spool wait signal NAME [--timeout DURATION]",
	"wait event":        "spool wait event TYPE [--timeout DURATION]",
	"lock":              "spool lock GROUP [-- COMMAND [ARG...]]",
	"activity submit":   "spool activity submit NAME [--requires CAP] [--attempts N] [--backoff D] [--retry-on-exit CODES] -- COMMAND",
	"activity run":      "spool activity run NAME [--requires CAP] [--attempts N] [--backoff D] [--retry-on-exit CODES] -- COMMAND",
	"activity wait":     "spool activity wait NAME | --all",
	"activity collect":  "spool activity collect NAME",
	"activity wait-all": "spool activity wait-all",
	"activity":          "spool activity submit|run|wait|collect|wait-all ...",
	"state get":         "spool state get KEY [--entity NAME]",
	"state set":         "spool state set KEY VALUE [--entity NAME]",
	"state delete":      "spool state delete KEY [--entity NAME]",
	"state list":        "spool state list [PREFIX] [--entity NAME]",
	"state version":     "spool state version KEY [--entity NAME]",
	"state add":         "spool state add KEY [VALUE] [--entity NAME]",
	"state incr":        "spool state incr KEY [--by N] [--op NAME] [--entity NAME]",
	"state cas":         "spool state cas KEY EXPECTED NEW [--op NAME] [--entity NAME]   (EXPECTED '' means absent)",
	"event emit":        "spool event emit TYPE [--key SUBJECT] [--payload JSON]",
	"spawn":             "spool spawn FILE [--input JSON]",
	"call":              "spool call FILE [--input JSON]",
	"call-node":         "spool call-node TYPE --config JSON [--name NAME]",
	"call-graph":        "spool call-graph FILE [--input JSON]",
	"output set":        "spool output set KEY VALUE",
	"annotate":          "spool annotate TEXT",
	"artifact put":      "spool artifact put NAME FILE|- [--type CONTENT-TYPE]",
	"artifact get":      "spool artifact get NAME [DEST|-] [--run RUN]",
	"artifact list":     "spool artifact list [--json] [--run RUN]",
	"artifact":          "spool artifact put|get|list ...",
	"checkout":          "spool checkout [DEST]",
}

// usageFailure is a refusal worded as the Node client words it: the verb, the problem, and the
// verb's usage line when it has one.
func usageFailure(verb, problem string) error {
	message := "spool " + verb + ": " + problem
	if line, ok := usage[verb]; ok {
		message += " (usage: " + line + ")"
	}
	return &hyperspool.UsageError{Message: message}
}

// splitCommand splits at the first `--`: spool's own arguments before it, the command after it
// (nil when there is no `--`).
func splitCommand(args []string) (own, command []string) {
	for i, arg := range args {
		if arg == "--" {
			return args[:i], append([]string{}, args[i+1:]...)
		}
	}
	return args, nil
}

// parse checks args against the options a verb takes and the number of positionals it wants.
func parse(verb string, args []string, spec optionSpec, min, max int) (*parsedArgs, error) {
	parsed, problem := parseArgs(args, spec)
	if problem != "" {
		return nil, usageFailure(verb, problem)
	}
	if len(parsed.positionals) < min {
		return nil, usageFailure(verb, "missing arguments")
	}
	if len(parsed.positionals) > max {
		return nil, usageFailure(verb, "unexpected argument '"+parsed.positionals[max]+"'")
	}
	return parsed, nil
}

func requireCommand(verb string, command []string) ([]string, error) {
	if command == nil {
		return nil, usageFailure(verb, "missing '--' before the command")
	}
	if len(command) == 0 {
		return nil, usageFailure(verb, "no command after '--'")
	}
	return command, nil
}

func duration(verb, text string) (float64, error) {
	ms, err := hyperspool.ParseDurationMillis(text)
	if err != nil {
		return 0, usageFailure(verb, err.Error())
	}
	return ms, nil
}

// integer reads a whole number as Number(text) does: a float64, so a huge one behaves (and is
// sent) as it is by the Node client.
func integer(verb, flag, text string, min float64) (float64, error) {
	n, _ := strconv.ParseFloat(text, 64)
	if !isWholeNumber(text) || n < min {
		return 0, usageFailure(verb, flag+" takes a whole number of at least "+nodeNumber(min)+", not '"+text+"'")
	}
	return n, nil
}

func nodeNumber(f float64) string { return string(nodecompat.AppendNumber(nil, f)) }

// jsonValue checks an option's JSON text, which goes to the agent as it is.
func jsonValue(verb, flag, text string) (json.RawMessage, error) {
	if _, err := nodecompat.Restringify([]byte(text)); err != nil {
		shown := text
		if nodecompat.Len16(text) > 60 {
			shown = nodecompat.Slice16(text, 60) + "..."
		}
		return nil, usageFailure(verb, flag+" is not valid JSON: "+shown)
	}
	return json.RawMessage(text), nil
}

// parseScriptCall turns `spool <verb> ...` into a request, refusing bad input before anything
// reaches the agent. The error is a *hyperspool.UsageError.
func parseScriptCall(args []string) (*scriptCall, error) {
	verb, rest := "", []string(nil)
	if len(args) > 0 {
		verb, rest = args[0], args[1:]
	}
	switch verb {
	case "step":
		return parseStep(rest)
	case "sleep":
		// Before parseArgs, which would take '-1s' for an unknown option '-1'.
		if len(rest) > 0 && len(rest[0]) > 1 && rest[0][0] == '-' && rest[0][1] >= '0' && rest[0][1] <= '9' {
			return nil, usageFailure("sleep", "a duration cannot be negative: '"+rest[0]+"'")
		}
		parsed, err := parse("sleep", rest, nil, 1, 1)
		if err != nil {
			return nil, err
		}
		ms, err := duration("sleep", parsed.positionals[0])
		if err != nil {
			return nil, err
		}
		return &scriptCall{request: hyperspool.NewRequest("sleep").With("ms", ms)}, nil
	case "wait":
		return parseWait(rest)
	case "lock":
		return parseLock(rest)
	case "activity":
		return parseActivity(rest)
	case "state":
		return parseState(rest)
	case "event":
		return parseEmit(rest)
	case "spawn", "call", "call-graph":
		return parseChild(verb, rest)
	case "call-node":
		return parseCallNode(rest)
	case "output":
		return parseOutput(rest)
	case "annotate":
		parsed, err := parse("annotate", rest, nil, 1, 1)
		if err != nil {
			return nil, err
		}
		return &scriptCall{request: hyperspool.NewRequest("annotate").With("text", parsed.positionals[0])}, nil
	case "artifact":
		return parseArtifact(rest)
	case "checkout":
		return parseCheckout(rest)
	}
	return nil, &hyperspool.UsageError{Message: "spool: unknown verb '" + verb + "'"}
}

// first returns the first of args (or "") and the rest: the sub-command of a verb family.
func first(args []string) (string, []string) {
	if len(args) == 0 {
		return "", nil
	}
	return args[0], args[1:]
}

func parseStep(args []string) (*scriptCall, error) {
	own, command := splitCommand(args)
	// The command first, so `NAME echo hi` says the `--` is missing rather than that `echo` is unexpected.
	argv, err := requireCommand("step", command)
	if err != nil {
		return nil, err
	}
	parsed, err := parse("step", own, optionSpec{"label": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	request := hyperspool.NewRequest("step").With("name", parsed.positionals[0])
	if label, _ := parsed.str("label"); label != "" {
		request.With("label", label)
	}
	return &scriptCall{request: request, command: argv}, nil
}

func parseWait(args []string) (*scriptCall, error) {
	kind, rest := first(args)
	if kind != "signal" && kind != "event" {
		return nil, usageFailure("wait", "unknown wait '"+kind+"'; use 'wait signal NAME' or 'wait event TYPE'")
	}
	what := "wait " + kind
	parsed, err := parse(what, rest, optionSpec{"timeout": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	var request *hyperspool.Request
	if kind == "signal" {
		request = hyperspool.NewRequest("wait.signal").With("name", parsed.positionals[0])
	} else {
		request = hyperspool.NewRequest("wait.event").With("type", parsed.positionals[0])
	}
	if text, ok := parsed.str("timeout"); ok {
		ms, err := duration(what, text)
		if err != nil {
			return nil, err
		}
		request.With("timeoutMs", ms)
	}
	return &scriptCall{request: request}, nil
}

func parseLock(args []string) (*scriptCall, error) {
	own, command := splitCommand(args)
	parsed, err := parse("lock", own, nil, 1, 1)
	if err != nil {
		return nil, err
	}
	request := hyperspool.NewRequest("lock").With("group", parsed.positionals[0])
	if command == nil {
		return &scriptCall{request: request.With("command", false)}, nil
	}
	argv, err := requireCommand("lock", command)
	if err != nil {
		return nil, err
	}
	return &scriptCall{request: request.With("command", true), command: argv}, nil
}

func parseEmit(args []string) (*scriptCall, error) {
	sub, rest := first(args)
	if sub != "emit" {
		return nil, usageFailure("event emit", "unknown event command '"+sub+"'")
	}
	parsed, err := parse("event emit", rest, optionSpec{"key": stringOption, "payload": stringOption}, 1, 1)
	if err != nil {
		return nil, err
	}
	var payload json.RawMessage
	if text, ok := parsed.str("payload"); ok {
		if payload, err = jsonValue("event emit", "--payload", text); err != nil {
			return nil, err
		}
	}
	request := hyperspool.NewRequest("event.emit").With("type", parsed.positionals[0])
	if subject, _ := parsed.str("key"); subject != "" {
		request.With("subject", subject)
	}
	if payload != nil {
		request.With("payload", payload)
	}
	return &scriptCall{request: request}, nil
}

func parseOutput(args []string) (*scriptCall, error) {
	sub, rest := first(args)
	if sub != "set" {
		return nil, usageFailure("output set", "unknown output command '"+sub+"'")
	}
	parsed, err := parse("output set", rest, nil, 2, 2)
	if err != nil {
		return nil, err
	}
	return &scriptCall{request: hyperspool.NewRequest("output.set").With("key", parsed.positionals[0]).With("value", parsed.positionals[1])}, nil
}

// splitNonEmpty is text.split(sep).filter(Boolean).
func splitNonEmpty(text, sep string) []string {
	var parts []string
	for _, part := range strings.Split(text, sep) {
		if part != "" {
			parts = append(parts, part)
		}
	}
	return parts
}
