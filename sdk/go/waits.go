package hyperspool

import (
	"encoding/json"
	"strings"
	"time"
)

// millis is a duration as the whole milliseconds the protocol carries; a negative one is none.
func millis(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return d.Milliseconds()
}

// Sleep waits durably: the run holds no process while it sleeps, and the script runs again from
// the top when the time comes. Sent as whole milliseconds.
func Sleep(d time.Duration) error {
	answer, err := process.call(NewRequest("sleep").With("ms", millis(d)))
	if err != nil {
		return err
	}
	return expectSuccess(answer, "sleep")
}

// WaitSignal waits for the signal name and returns its payload, without the trailing newline.
func WaitSignal(name string) (string, error) {
	payload, _, err := wait("wait.signal", "name", name, nil)
	return payload, err
}

// WaitSignalTimeout is WaitSignal with a deadline: ok is false when the deadline passed first.
// It needs an agent that supports bounded waits, and fails at the call site on an older one.
func WaitSignalTimeout(name string, timeout time.Duration) (payload string, ok bool, err error) {
	return wait("wait.signal", "name", name, &timeout)
}

// WaitEvent waits for an event of eventType and returns its payload as JSON ("null" when it had
// none); decode it into a type of your own with json.Unmarshal.
func WaitEvent(eventType string) (json.RawMessage, error) {
	payload, _, err := waitEvent(eventType, nil)
	return payload, err
}

// WaitEventTimeout is WaitEvent with a deadline: ok is false when the deadline passed first.
// It needs an agent that supports bounded waits, and fails at the call site on an older one.
func WaitEventTimeout(eventType string, timeout time.Duration) (payload json.RawMessage, ok bool, err error) {
	return waitEvent(eventType, &timeout)
}

func waitEvent(eventType string, timeout *time.Duration) (json.RawMessage, bool, error) {
	text, ok, err := wait("wait.event", "type", eventType, timeout)
	if err != nil || !ok {
		return nil, ok, err
	}
	// The agent writes the payload as JSON, and nothing at all for an event without one.
	if text == "" {
		return json.RawMessage("null"), true, nil
	}
	return cellValue(text), true, nil
}

// wait sends wait.signal or wait.event, with a deadline when timeout is set; ok is false when it
// timed out.
func wait(verb, field, what string, timeout *time.Duration) (string, bool, error) {
	req := NewRequest(verb).With(field, what)
	fnName := strings.ReplaceAll(verb, ".", "_")
	if timeout != nil {
		if err := process.require(fnName+" with a timeout", verb); err != nil {
			return "", false, err
		}
		req.With("timeoutMs", millis(*timeout))
	}
	answer, err := process.call(req)
	if err != nil {
		return "", false, err
	}
	if timeout != nil && answer.Code() == ExitTimedOut {
		return "", false, nil
	}
	if err := expectSuccess(answer, fnName+" "+what); err != nil {
		return "", false, err
	}
	return text(answer), true, nil
}

// Lock takes the run's lease on group, a durable lease scoped to the project, then runs body
// (when it is not nil) and returns its error. While another run holds the group this run waits
// for it holding no process, in arrival order.
//
// The lease belongs to the run: it stays held after body returns and passes to the next waiter
// when the run ends, so a second Lock in one run is refused (a *ScriptError). body runs in this
// process and may make durable calls, the read-modify-write a lock usually exists for.
func Lock(group string, body func() error) error {
	answer, err := process.call(NewRequest("lock").With("group", group).With("command", false))
	if err != nil {
		return err
	}
	if err := expectSuccess(answer, "lock"); err != nil {
		return err
	}
	if body == nil {
		return nil
	}
	return body()
}
