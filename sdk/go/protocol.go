package hyperspool

import (
	"encoding/json"
	"fmt"

	"hyperspool.dev/go/internal/nodecompat"
)

// Exit codes of the in-script verbs (DESIGN.md §3).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitTaken       = 3   // state add on a taken key, a cas that found another value
	ExitUnavailable = 69  // no agent, or it went away: the run replays elsewhere
	ExitTimedOut    = 124 // a wait that timed out
)

// Statuses of an Answer.
const (
	StatusOK        = "ok"
	StatusExecute   = "execute"
	StatusSuspended = "suspended"
	StatusError     = "error"
)

// A Request is one line a script sends its agent. Its fields keep the order they were added in,
// so it is written exactly as the Node client writes the same request; a field that is absent
// there is simply never added here.
type Request struct {
	fields []field
}

type field struct {
	name  string
	value any
}

// NewRequest starts a request for verb ("step", "state.get", ...).
func NewRequest(verb string) *Request {
	return &Request{fields: []field{{"verb", verb}}}
}

// With adds a field. Values may be string, bool, int, int64, float64, []string, []float64,
// json.RawMessage (valid JSON, rewritten as JSON.stringify would write its value), or nil for JSON null.
func (r *Request) With(name string, value any) *Request {
	r.fields = append(r.fields, field{name, value})
	return r
}

// Verb is the request's verb.
func (r *Request) Verb() string {
	v, _ := r.Get("verb")
	s, _ := v.(string)
	return s
}

// Get returns the value of a field and whether the request has it.
func (r *Request) Get(name string) (any, bool) {
	for _, f := range r.fields {
		if f.name == name {
			return f.value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the request as JSON.stringify would.
func (r *Request) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range r.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = nodecompat.AppendString(b, f.name)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, f.value); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
	}
	return append(b, '}'), nil
}

func appendValue(b []byte, value any) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return nodecompat.AppendString(b, v), nil
	case bool:
		if v {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case int:
		return nodecompat.AppendNumber(b, float64(v)), nil
	case int64:
		return nodecompat.AppendNumber(b, float64(v)), nil
	case float64:
		return nodecompat.AppendNumber(b, v), nil
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = nodecompat.AppendString(b, s)
		}
		return append(b, ']'), nil
	case []float64:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = nodecompat.AppendNumber(b, f)
		}
		return append(b, ']'), nil
	case json.RawMessage:
		return appendJSON(b, v)
	}
	return nil, fmt.Errorf("cannot encode a %T", value)
}

// An Answer is the agent's reply to one request (docs/protocol.md, "Answers").
type Answer struct {
	Status string `json:"status"`
	// Stdout is printed to stdout (StdoutBase64 instead, for output that is not plain text: NUL,
	// bytes that are not UTF-8); Stderr, when set, is printed as a line to stderr.
	Stdout       string `json:"stdout,omitempty"`
	StdoutBase64 string `json:"stdoutBase64,omitempty"`
	Stderr       string `json:"stderr,omitempty"`
	// ExitCode is nil when the agent sent none, which means 0.
	ExitCode *int `json:"exitCode,omitempty"`
	// Replayed marks an answer from the journal, already printed into the run's log once.
	Replayed bool `json:"replayed,omitempty"`
	// Position and IdempotencyKey come with "execute": the done request names the position.
	Position       int64  `json:"position,omitempty"`
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// Traceparent (W3C), with "execute" when tracing is on, names the step's span; a command gets it as TRACEPARENT.
	Traceparent string `json:"traceparent,omitempty"`
	// Message says why a call suspended or failed; Kind is the error's kind (ErrorKind*).
	Message string `json:"message,omitempty"`
	Kind    string `json:"kind,omitempty"`
	// Value is the recorded JSON result of a step_fn.
	Value json.RawMessage `json:"value,omitempty"`
}

// Kinds of an error answer.
const (
	ErrorKindUsage       = "usage"
	ErrorKindDeterminism = "determinism"
	ErrorKindLimit       = "limit"
	ErrorKindInternal    = "internal"
)

// Code is the exit code the answer asks for: its exitCode, or 0 when it has none.
func (a *Answer) Code() int {
	if a.ExitCode == nil {
		return ExitOK
	}
	return *a.ExitCode
}
