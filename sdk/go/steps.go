package hyperspool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Step runs argv (no shell) once as the durable step name and returns its stdout, newline and
// all; every replay returns the recorded stdout without running it again. A non-zero exit is a
// *StepFailed carrying the exit code and stdout, on the first pass and on every replay: use
// errors.As to branch on it.
//
// The command inherits stdin and stderr and gets SPOOL_IDEMPOTENCY_KEY; one that is not
// installed exits 127. Step and StepFn share names: reaching name with either counts toward one
// sequence of reaches.
func Step(name string, argv ...string) (string, error) {
	if len(argv) == 0 {
		return "", usageError("step '" + name + "' needs a command to run")
	}
	answer, err := process.call(NewRequest("step").With("name", name))
	if err != nil {
		return "", err
	}
	// A Go string holds any bytes: what the command printed comes back as it was, on every pass.
	stdout, code := string(answer.Output()), answer.Code()
	if answer.Status == StatusExecute {
		stdout, code = runCommand(argv, answer.IdempotencyKey, answer.Traceparent)
		done := WithOutput(NewRequest("done").With("position", answer.Position), "stdout", []byte(stdout)).With("exitCode", code)
		if _, err := process.call(done); err != nil {
			return "", err
		}
	}
	if code != ExitOK {
		return "", &StepFailed{Name: name, ExitCode: code, Stdout: stdout}
	}
	return stdout, nil
}

// StepFn runs fn once as the durable step name and records its value as JSON, and JSON only;
// every replay returns the recorded value without running fn.
//
// What StepFn returns, on the first pass as on every replay, is the value decoded from the
// recorded JSON into a T: unexported fields are lost, a time.Time comes back from its text, an
// any holds float64 numbers and map[string]any objects. A value JSON cannot hold (a channel, a
// func, NaN) is refused with a *ScriptError naming the step, and so is an integer a double
// cannot hold exactly (past 2^53: the journal keeps numbers as doubles, so a replay would get it
// back rounded; return a 64-bit id as a string). Nothing is recorded then.
//
// If fn returns an error, nothing is recorded and that error is returned as it is; the next pass
// runs fn again. Keep fn safe to retry: a crash between fn and its record runs it again. fn may
// make durable calls of its own.
func StepFn[T any](name string, fn func() (T, error)) (T, error) {
	var zero T
	answer, err := process.call(NewRequest("step_fn").With("name", name))
	if err != nil {
		return zero, err
	}
	if answer.Status == StatusOK {
		recorded := answer.Value
		if len(recorded) == 0 {
			recorded = json.RawMessage("null")
		}
		var value T
		if err := json.Unmarshal(recorded, &value); err != nil {
			return zero, usageError(fmt.Sprintf("step_fn '%s': the recorded value does not fit a %T: %v", name, zero, err))
		}
		return value, nil
	}
	returned, err := fn()
	if err != nil {
		return zero, err
	}
	refused := func(why string) (T, error) {
		return zero, usageError(fmt.Sprintf("step_fn '%s' returned a value JSON cannot hold (%s); nothing was recorded", name, why))
	}
	raw, err := encodeJSON(returned)
	if err != nil {
		return refused(err.Error())
	}
	if n := inexactInteger(raw); n != "" {
		return zero, usageError(fmt.Sprintf("step_fn '%s' returned the integer %s, which the journal cannot keep exactly "+
			"(its numbers are doubles, exact to 2^53); return it as a string. Nothing was recorded", name, n))
	}
	// Decoded before it is recorded, so a type that does not round-trip fails now rather than
	// on every replay, and the first pass returns what the replays will.
	var decoded T
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return refused("it does not decode back into a " + fmt.Sprintf("%T", zero) + ": " + err.Error())
	}
	done := NewRequest("done").With("position", answer.Position).With("value", raw)
	if _, err := process.call(done); err != nil {
		return zero, err
	}
	return decoded, nil
}

// inexactInteger finds an integer in a JSON document that a double cannot hold exactly, which
// would come back from the journal as another number.
func inexactInteger(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		n, ok := tok.(json.Number)
		if !ok || !isIntegerLiteral(string(n)) {
			continue
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || strconv.FormatFloat(f, 'f', 0, 64) != string(n) {
			return string(n)
		}
	}
}

func isIntegerLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == 'e' || s[i] == 'E' {
			return false
		}
	}
	return true
}
