package spooltest

import (
	"encoding/json"
	"fmt"
	"time"
)

// Case is one test case, with the keys of a NAME.test.yaml case (spool test checks them). A field
// left zero is not sent: a zero Expect.Time or Expect.Runs is not checked, and a nil Expect
// expects the run to succeed.
type Case struct {
	Name  string `json:"name,omitempty"`
	Input any    `json:"input,omitempty"`
	// On makes the workflow a handler started by each event of this type the case delivers.
	On        string     `json:"on,omitempty"`
	Schedule  *Schedule  `json:"schedule,omitempty"`
	Signals   []Signal   `json:"signals,omitempty"`
	Events    []Event    `json:"events,omitempty"`
	Approvals []Approval `json:"approvals,omitempty"`
	Stubs     Stubs      `json:"stubs"`
	Expect    *Expect    `json:"expect,omitempty"`
}

// Schedule starts the workflow Ticks times, Every apart.
type Schedule struct {
	Every time.Duration
	Ticks int
}

// Signal is sent to the run At virtual time after the start; a Payload that is not a string is
// sent as JSON.
type Signal struct {
	At      time.Duration
	Name    string
	Payload any
}

// Event is emitted At virtual time after the start.
type Event struct {
	At      time.Duration
	Type    string
	Key     string
	Payload any
}

// Approval answers the gate of Job At virtual time after the start: "approve" (the default) or "reject".
type Approval struct {
	At     time.Duration
	Job    string
	Answer string
	By     string
	Values any
}

// Stubs are the results given instead of running a step or sending an http node's request.
type Stubs struct {
	Steps map[string]StepStub `json:"steps,omitempty"`
	HTTP  map[string]HTTPStub `json:"http,omitempty"`
}

// StepStub is a command step's Stdout and Exit code, or with Value set a step function's value
// (json.RawMessage("null") for null).
type StepStub struct {
	Stdout string
	Exit   int
	Value  any
}

// HTTPStub is an http node's response.
type HTTPStub struct {
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`
}

// Expect is what the case checks; a field left zero is not checked.
type Expect struct {
	// Outcome is succeeded, failed, cancelled or waiting.
	Outcome string            `json:"outcome,omitempty"`
	Error   string            `json:"error,omitempty"`
	Outputs map[string]string `json:"outputs,omitempty"`
	// Steps is the steps reached, in order: nil is not checked, an empty slice expects none.
	Steps []string `json:"-"`
	// State is cells: KEY of the run, ENTITY/KEY of an entity.
	State map[string]string `json:"state,omitempty"`
	// Time is the virtual time from the start until the last run ended.
	Time time.Duration `json:"-"`
	Runs int           `json:"runs,omitempty"`
	Log  string        `json:"log,omitempty"`
}

// durationText is a duration as the CLI reads it, in whole milliseconds.
func durationText(d time.Duration) string {
	return fmt.Sprintf("%dms", d.Milliseconds())
}

func (s Schedule) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"every": durationText(s.Every), "ticks": s.Ticks})
}

func (s Signal) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		At      string `json:"at"`
		Name    string `json:"name"`
		Payload any    `json:"payload,omitempty"`
	}{durationText(s.At), s.Name, s.Payload})
}

func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		At      string `json:"at"`
		Type    string `json:"type"`
		Key     string `json:"key,omitempty"`
		Payload any    `json:"payload,omitempty"`
	}{durationText(e.At), e.Type, e.Key, e.Payload})
}

func (a Approval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		At     string `json:"at"`
		Job    string `json:"job"`
		Answer string `json:"answer,omitempty"`
		By     string `json:"by,omitempty"`
		Values any    `json:"values,omitempty"`
	}{durationText(a.At), a.Job, a.Answer, a.By, a.Values})
}

func (s StepStub) MarshalJSON() ([]byte, error) {
	if s.Value != nil {
		return json.Marshal(map[string]any{"value": s.Value})
	}
	return json.Marshal(map[string]any{"stdout": s.Stdout, "exit": s.Exit})
}

func (e Expect) MarshalJSON() ([]byte, error) {
	type plain Expect // without this method, so Marshal does not call it again
	wire := struct {
		plain
		Steps *[]string `json:"steps,omitempty"`
		Time  string    `json:"time,omitempty"`
	}{plain: plain(e)}
	if e.Steps != nil {
		wire.Steps = &e.Steps
	}
	if e.Time != 0 {
		wire.Time = durationText(e.Time)
	}
	return json.Marshal(wire)
}
