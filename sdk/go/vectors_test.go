package hyperspool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A vector of sdk/testdata/vectors (the format is in sdk/testdata/README.md).
type vector struct {
	Name      string          `json:"name"`
	Call      vectorCall      `json:"call"`
	Exchanges []exchange      `json:"exchanges"`
	Outcome   json.RawMessage `json:"outcome"`
}

// vectorCall holds the fields of every call; each call reads its own.
type vectorCall struct {
	Fn             string          `json:"fn"`
	Name           string          `json:"name"`
	Argv           []string        `json:"argv"`
	Check          *bool           `json:"check"`
	Returns        json.RawMessage `json:"returns"`
	Throws         *string         `json:"throws"`
	ReturnsNonJSON bool            `json:"returnsNonJson"`
	Seconds        float64         `json:"seconds"`
	TimeoutSeconds *float64        `json:"timeoutSeconds"`
	Type           string          `json:"type"`
	Group          string          `json:"group"`
	Requires       []string        `json:"requires"`
	Retries        int             `json:"retries"`
	RetryBackoff   *float64        `json:"retryBackoffSeconds"`
	RetryOnExit    []int           `json:"retryOnExit"`
	Payload        json.RawMessage `json:"payload"`
	Subject        string          `json:"subject"`
	Kind           string          `json:"kind"`
	Text           string          `json:"text"`
	Input          json.RawMessage `json:"input"`
	Key            string          `json:"key"`
	Value          json.RawMessage `json:"value"`
	Entity         string          `json:"entity"`
	Prefix         string          `json:"prefix"`
}

type vectorOutcome struct {
	Returns       json.RawMessage `json:"returns"`
	Raises        string          `json:"raises"`
	Kind          string          `json:"kind"`
	Message       string          `json:"message"`
	ExitCode      *int            `json:"exitCode"`
	Stdout        *string         `json:"stdout"`
	Suspends      bool            `json:"suspends"`
	FunctionCalls *int            `json:"functionCalls"`
	BodyRuns      *bool           `json:"bodyRuns"`
}

// What running a vector's call did.
type result struct {
	value         any
	err           error
	suspended     string // the suspension's message
	functionCalls int
	bodyRuns      bool
	functionError error // the error the step_fn function returned, if any
}

// suspension is what the test's suspend seam panics with instead of blocking.
type suspension struct{ message string }

func TestProtocolVectors(t *testing.T) {
	files, err := filepath.Glob("../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files found (%v)", err)
	}
	sort.Strings(files)
	realSuspend := suspend
	suspend = func(message string) { panic(suspension{message}) }
	t.Cleanup(func() { suspend = realSuspend; process.reset() })
	count := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Vectors []vector `json:"vectors"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, v := range doc.Vectors {
			count++
			t.Run(filepath.Base(file)+"/"+v.Name, func(t *testing.T) {
				agent := startFakeAgent(t, v.Exchanges)
				got := runCall(t, v.Call)
				for _, p := range agent.finish() {
					t.Error(p)
				}
				checkOutcome(t, v, got)
			})
		}
	}
	t.Logf("%d vectors", count)
}

func runCall(t *testing.T, c vectorCall) (r result) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			s, ok := p.(suspension)
			if !ok {
				panic(p)
			}
			r.suspended = s.message
		}
	}()
	r.value, r.err = dispatch(t, c, &r)
	return r
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func decode(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON in the vector: %s", raw)
	}
	return v
}

// dispatch makes the vector's call with the Go SDK and gives back what it returned, as a value
// that compares with the vector's JSON.
func dispatch(t *testing.T, c vectorCall, r *result) (any, error) {
	activityOptions := ActivityOptions{Requires: c.Requires, Retries: c.Retries, RetryOnExit: c.RetryOnExit}
	if c.RetryBackoff != nil {
		activityOptions.RetryBackoff = seconds(*c.RetryBackoff)
	}
	var entity []StateOption
	if c.Entity != "" {
		entity = append(entity, Entity(c.Entity))
	}
	switch c.Fn {
	case "step":
		stdout, err := Step(c.Name, c.Argv...)
		var failed *StepFailed
		if c.Check != nil && !*c.Check {
			// The unchecked form: the *StepFailed carries the result.
			switch {
			case err == nil:
				return map[string]any{"stdout": stdout, "exitCode": 0}, nil
			case errors.As(err, &failed):
				return map[string]any{"stdout": failed.Stdout, "exitCode": failed.ExitCode}, nil
			}
		}
		return stdout, err
	case "step_fn":
		fn := func() (any, error) {
			r.functionCalls++
			switch {
			case c.Throws != nil:
				r.functionError = errors.New(*c.Throws)
				return nil, r.functionError
			case c.ReturnsNonJSON:
				return map[string]any{"ch": make(chan int)}, nil
			}
			return decode(t, c.Returns), nil
		}
		return StepFn(c.Name, fn)
	case "sleep":
		return nil, Sleep(seconds(c.Seconds))
	case "wait_signal":
		if c.TimeoutSeconds == nil {
			return WaitSignal(c.Name)
		}
		payload, ok, err := WaitSignalTimeout(c.Name, seconds(*c.TimeoutSeconds))
		if !ok {
			return nil, err
		}
		return payload, err
	case "wait_event":
		var payload json.RawMessage
		var err error
		if c.TimeoutSeconds == nil {
			payload, err = WaitEvent(c.Type)
		} else {
			payload, _, err = WaitEventTimeout(c.Type, seconds(*c.TimeoutSeconds))
		}
		return decode(t, payload), err
	case "lock":
		return nil, Lock(c.Group, func() error { r.bodyRuns = true; return nil })
	case "activity":
		return ActivityWith(c.Name, c.Argv, activityOptions)
	case "activity_submit":
		return nil, ActivitySubmitWith(c.Name, c.Argv, activityOptions)
	case "activity_collect":
		return ActivityCollect(c.Name)
	case "activity_wait_all":
		return nil, ActivityWaitAll()
	case "emit":
		var opts []EmitOption
		if c.Subject != "" {
			opts = append(opts, Subject(c.Subject))
		}
		return Emit(c.Type, decode(t, c.Payload), opts...)
	case "spawn":
		var opts []SpawnOption
		if len(c.Input) > 0 {
			opts = append(opts, Input(decode(t, c.Input)))
		}
		return Spawn(c.Kind, c.Text, opts...)
	case "state_get":
		value, _, err := StateGet(c.Key, entity...)
		return decode(t, value), err
	case "state_set":
		return nil, StateSet(c.Key, decode(t, c.Value), entity...)
	case "state_add":
		return StateAdd(c.Key, decode(t, c.Value), entity...)
	case "state_delete":
		return nil, StateDelete(c.Key, entity...)
	case "state_list":
		cells, err := StateList(c.Prefix, entity...)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(cells))
		for k, v := range cells {
			out[k] = decode(t, v)
		}
		return out, nil
	case "output_set":
		return nil, OutputSet(c.Key, decode(t, c.Value))
	case "annotate":
		return nil, Annotate(c.Text)
	}
	t.Fatalf("a call the Go tests do not know: %q", c.Fn)
	return nil, nil
}

func checkOutcome(t *testing.T, v vector, got result) {
	t.Helper()
	var want vectorOutcome
	if err := json.Unmarshal(v.Outcome, &want); err != nil {
		t.Fatal(err)
	}
	if want.FunctionCalls != nil && got.functionCalls != *want.FunctionCalls {
		t.Errorf("the function ran %d times, want %d", got.functionCalls, *want.FunctionCalls)
	}
	if want.BodyRuns != nil && got.bodyRuns != *want.BodyRuns {
		t.Errorf("the lock body ran: %v, want %v", got.bodyRuns, *want.BodyRuns)
	}
	if want.Suspends {
		if got.suspended == "" {
			t.Errorf("want a suspension, got %v, %v", got.value, got.err)
		}
		return
	}
	if got.suspended != "" {
		t.Fatalf("suspended (%s), want %s", got.suspended, v.Outcome)
	}
	switch want.Raises {
	case "":
		if got.err != nil {
			t.Fatalf("error %v (%T), want it to return %s", got.err, got.err, want.Returns)
		}
		gotJSON, err := json.Marshal(got.value)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(gotJSON, orNull(want.Returns)) {
			t.Errorf("returned %s, want %s", gotJSON, want.Returns)
		}
	case "StepFailed":
		var failed *StepFailed
		if !errors.As(got.err, &failed) {
			t.Fatalf("got %v, %v (%T), want a *StepFailed", got.value, got.err, got.err)
		}
		if failed.ExitCode != *want.ExitCode || failed.Stdout != *want.Stdout {
			t.Errorf("StepFailed{ExitCode: %d, Stdout: %q}, want %d, %q", failed.ExitCode, failed.Stdout, *want.ExitCode, *want.Stdout)
		}
	case "ScriptError":
		var script *ScriptError
		if !errors.As(got.err, &script) {
			t.Fatalf("got %v, %v (%T), want a *ScriptError", got.value, got.err, got.err)
		}
		if script.Kind != want.Kind || !strings.Contains(script.Message, want.Message) {
			t.Errorf("ScriptError{Kind: %q, Message: %q}, want %q containing %q", script.Kind, script.Message, want.Kind, want.Message)
		}
	case "AgentUnavailable":
		var unavailable *AgentUnavailable
		if !errors.As(got.err, &unavailable) {
			t.Fatalf("got %v, %v (%T), want an *AgentUnavailable", got.value, got.err, got.err)
		}
	case "function":
		if got.functionError == nil || got.err != got.functionError || !strings.Contains(got.err.Error(), want.Message) {
			t.Errorf("got %v (%T), want the function's own error %q, as it was", got.err, got.err, want.Message)
		}
	default:
		t.Fatal(fmt.Sprintf("an outcome the Go tests do not know: %s", v.Outcome))
	}
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
