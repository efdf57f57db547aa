package spooltest_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"hyperspool.dev/go/spooltest"
)

// everything fills every field a Case has, as spool test's case keys.
var everything = spooltest.Case{
	Name:      "every key",
	Input:     map[string]any{"customer": "acme"},
	Schedule:  &spooltest.Schedule{Every: 5 * time.Minute, Ticks: 2},
	Signals:   []spooltest.Signal{{At: 90 * time.Second, Name: "go", Payload: map[string]int{"n": 1}}},
	Events:    []spooltest.Event{{At: time.Hour, Type: "plan.upgraded", Key: "acme", Payload: "pro"}},
	Approvals: []spooltest.Approval{{At: 2 * time.Hour, Job: "ask", Answer: "reject", By: "ann", Values: map[string]string{"why": "no"}}},
	Stubs: spooltest.Stubs{
		Steps: map[string]spooltest.StepStub{"charge": {Stdout: "ch_1", Exit: 3}, "price": {Value: json.RawMessage("null")}},
		HTTP:  map[string]spooltest.HTTPStub{"notify": {Status: 201, Headers: map[string]string{"X-Id": "7"}, Body: map[string]bool{"ok": true}}},
	},
	Expect: &spooltest.Expect{
		Outcome: "failed", Error: "declined", Outputs: map[string]string{"plan": "pro"}, Steps: []string{"charge"},
		State: map[string]string{"tally/total": "3"}, Time: 36 * time.Hour, Runs: 2, Log: "charged",
	},
}

// The wire form: durations in milliseconds, a step stub with a value sends only the value, and
// what is left zero is not sent.
func TestACaseIsSentAsSpoolTestsKeys(t *testing.T) {
	got, err := json.Marshal(everything)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"every key","input":{"customer":"acme"},"schedule":{"every":"300000ms","ticks":2},` +
		`"signals":[{"at":"90000ms","name":"go","payload":{"n":1}}],` +
		`"events":[{"at":"3600000ms","type":"plan.upgraded","key":"acme","payload":"pro"}],` +
		`"approvals":[{"at":"7200000ms","job":"ask","answer":"reject","by":"ann","values":{"why":"no"}}],` +
		`"stubs":{"steps":{"charge":{"exit":3,"stdout":"ch_1"},"price":{"value":null}},"http":{"notify":{"status":201,"headers":{"X-Id":"7"},"body":{"ok":true}}}},` +
		`"expect":{"outcome":"failed","error":"declined","outputs":{"plan":"pro"},"state":{"tally/total":"3"},"runs":2,"log":"charged","steps":["charge"],"time":"129600000ms"}}`
	if string(got) != want {
		t.Fatalf("sent\n%s\nwant\n%s", got, want)
	}
	if empty, _ := json.Marshal(spooltest.Case{}); string(empty) != `{"stubs":{}}` {
		t.Fatalf("an empty case is sent as %s", empty)
	}
	// No steps expected is an expectation too, unlike steps not checked.
	if none, _ := json.Marshal(spooltest.Expect{Steps: []string{}}); string(none) != `{"steps":[]}` {
		t.Fatalf("an empty Steps is sent as %s", none)
	}
	if unchecked, _ := json.Marshal(spooltest.Expect{}); string(unchecked) != `{}` {
		t.Fatalf("a nil Steps is sent as %s", unchecked)
	}
}

// spool test takes every key the Case sends (it checks them all before anything runs, and
// refuses an unknown one with exit 2), and what they say reaches the run: the stub's exit code
// fails the trial's charge, and the schedule starts it twice, 5m apart.
func TestSpoolTestTakesEveryKeyACaseSends(t *testing.T) {
	result, err := spooltest.RunCase(trialWorkflow(t), everything)
	if err != nil {
		t.Fatalf("spool test refused the case: %v", err)
	}
	if result.Runs != 2 || result.VirtualTime() != 5*time.Minute || result.Error != "script exited 3" {
		t.Fatalf("the case ran otherwise:\n%s", result.Report())
	}
	if result.Passed || !slices.Contains(result.Failures, `expected the run's error to say "declined", but it was "script exited 3"`) {
		t.Fatalf("the case's failures:\n%s", result.Report())
	}
}
