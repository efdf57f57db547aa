package hyperspool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// refusal is an error answer as the script sees it.
func refusal(a *Answer) *ScriptError {
	e := &ScriptError{Kind: a.Kind, Message: a.Message, ExitCode: ExitFailure}
	if e.Kind == "" {
		e.Kind = ErrorKindInternal
	}
	if e.Message == "" {
		e.Message = "the agent refused the call"
	}
	if a.ExitCode != nil {
		e.ExitCode = *a.ExitCode
	}
	return e
}

// expectSuccess is for answers that can only succeed; anything else is the agent misbehaving.
func expectSuccess(a *Answer, what string) error {
	if a.Status == StatusOK && a.Code() == ExitOK {
		return nil
	}
	detail := a.Stderr
	if detail == "" {
		detail = a.Message
	}
	return internalError(fmt.Sprintf("%s: unexpected answer from the agent (%s, exit %d) %s", what, a.Status, a.Code(), detail))
}

// checkExit turns a recorded non-zero exit into the failure it records.
func checkExit(a *Answer, name string) error {
	if a.Code() == ExitOK {
		return nil
	}
	return &StepFailed{Name: name, ExitCode: a.Code(), Stdout: a.Stdout, Detail: a.Stderr}
}

// text is a text answer without the one newline the agent ends it with: "yes", not "yes\n".
func text(a *Answer) string {
	return strings.TrimSuffix(a.Stdout, "\n")
}

// cellValue is a state cell's (or an event payload's) text as JSON: the text itself when it
// parses as JSON, else the text as a JSON string, so `spool state set n 5` from bash reads as
// the number 5 and `spool state set who ada` as "ada".
func cellValue(text string) json.RawMessage {
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	quoted, _ := encodeJSON(text)
	return quoted
}

// storedText is how a value is kept in a state cell or an output: its JSON, except that a JSON
// string is kept as its text, so a value stored from Go reads the same from bash.
func storedText(what string, value any) (string, error) {
	if s, ok := value.(string); ok {
		return s, nil
	}
	raw, err := encodeJSON(value)
	if err != nil {
		return "", usageError(fmt.Sprintf("%s: the value cannot be written as JSON: %v", what, err))
	}
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	return string(raw), nil
}

// encodeJSON is json.Marshal without the HTML escaping, which the other clients do not do.
func encodeJSON(value any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
