package main

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	hyperspool "hyperspool.dev/go"
)

// nodeCase is what the Node client made of one argument vector (testdata/node-oracle.mjs).
type nodeCase struct {
	Args    []string `json:"args"`
	Request string   `json:"request"`
	Command []string `json:"command"`
	Error   string   `json:"error"`
	// Artifact is where an artifact's bytes come from or go (a put's source, a get's dest).
	Artifact *artifactEnd `json:"artifact"`
}

// TestParseMatchesNode checks every vector in testdata/parse-cases.json: the same request, byte
// for byte, and the same command, or the same refusal word for word.
func TestParseMatchesNode(t *testing.T) {
	text, err := os.ReadFile("testdata/parse-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []nodeCase
	if err := json.Unmarshal(text, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		call, err := parseScriptCall(tc.Args)
		if tc.Error != "" {
			var usage *hyperspool.UsageError
			if !errors.As(err, &usage) || usage.Message != tc.Error {
				t.Errorf("%q:\n got error %v\nwant error %s", tc.Args, err, tc.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: unexpected error %v", tc.Args, err)
			continue
		}
		got, err := call.request.MarshalJSON()
		if err != nil || string(got) != tc.Request {
			t.Errorf("%q:\n got %s (%v)\nwant %s", tc.Args, got, err, tc.Request)
		}
		if !reflect.DeepEqual(call.command, tc.Command) {
			t.Errorf("%q: command %q, want %q", tc.Args, call.command, tc.Command)
		}
		if !reflect.DeepEqual(call.artifact, tc.Artifact) {
			t.Errorf("%q: artifact %+v, want %+v", tc.Args, call.artifact, tc.Artifact)
		}
	}
}

func TestParse(t *testing.T) {
	const stepUsage = " (usage: spool step NAME [--label TEXT] -- COMMAND [ARG...])"
	tests := []struct {
		args    []string
		request string
		command []string
		err     string
	}{
		{args: []string{"step", "book", "--label", "Book it", "--", "echo", "hi"},
			request: `{"verb":"step","name":"book","label":"Book it"}`, command: []string{"echo", "hi"}},
		{args: []string{"step", "a", "--lable", "x", "--", "true"}, err: "spool step: Unknown option '--lable'" + stepUsage},
		{args: []string{"step", "a", "--label", "--", "x"}, err: "spool step: Option '--label <value>' argument missing" + stepUsage},
		{args: []string{"step", "a", "--label", "-x", "--", "x"}, err: "spool step: Option '--label' argument is ambiguous." + stepUsage},
		{args: []string{"step", "a", "echo"}, err: "spool step: missing '--' before the command" + stepUsage},
		{args: []string{"step", "a", "--"}, err: "spool step: no command after '--'" + stepUsage},
		{args: []string{"sleep", "1h30m"}, request: `{"verb":"sleep","ms":5400000}`},
		{args: []string{"sleep", "soon"}, err: "spool sleep: bad duration 'soon'; use a form like 500ms, 30s, 5m, 2h, 14d or 1h30m (usage: spool sleep DURATION)"},
		{args: []string{"wait", "event", "paid", "--timeout", "30s"}, request: `{"verb":"wait.event","type":"paid","timeoutMs":30000}`},
		{args: []string{"wait", "x"}, err: "spool wait: unknown wait 'x'; use 'wait signal NAME' or 'wait event TYPE'"},
		{args: []string{"lock", "db"}, request: `{"verb":"lock","group":"db","command":false}`},
		{args: []string{"lock", "db", "--", "migrate"}, request: `{"verb":"lock","group":"db","command":true}`, command: []string{"migrate"}},
		{args: []string{"activity", "submit", "p", "--retry-on-exit", "2,3", "--", "x"},
			request: `{"verb":"activity.submit","name":"p","argv":["x"],"requires":[],"attempts":1,"backoffMs":1000,"retryOnExit":[2,3]}`},
		{args: []string{"activity", "wait", "--all", "p"}, err: "spool activity wait: give a NAME or --all, not both (usage: spool activity wait NAME | --all)"},
		{args: []string{"state", "cas", "k", "", "v"}, request: `{"verb":"state.cas","key":"k","expected":null,"value":"v"}`},
		{args: []string{"state", "incr", "k", "--by=-2", "--op", "o"}, request: `{"verb":"state.incr","key":"k","by":-2,"op":"o"}`},
		{args: []string{"state", "incr", "k", "--by", "x"}, err: "spool state incr: --by takes a whole number of at least -9007199254740991, not 'x' (usage: spool state incr KEY [--by N] [--op NAME] [--entity NAME])"},
		{args: []string{"event", "emit", "t", "--payload", `{"b":1, "a":[1.50]}`}, request: `{"verb":"event.emit","type":"t","payload":{"b":1,"a":[1.5]}}`},
		{args: []string{"spawn", "testdata/child.txt"}, err: "cannot tell how to run testdata/child.txt: its extension picks the interpreter (.sh, .bash, .py, .mjs, .js, .cjs)"},
		{args: []string{"output", "set", "k", "v"}, request: `{"verb":"output.set","key":"k","value":"v"}`},
		{args: []string{"annotate", "a <b> & \u2028"}, request: "{\"verb\":\"annotate\",\"text\":\"a <b> & \u2028\"}"},
	}
	for _, tc := range tests {
		call, err := parseScriptCall(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %s", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got, _ := call.request.MarshalJSON(); string(got) != tc.request {
			t.Errorf("%q: request %s, want %s", tc.args, got, tc.request)
		}
		if !reflect.DeepEqual(call.command, tc.command) {
			t.Errorf("%q: command %q, want %q", tc.args, call.command, tc.command)
		}
	}
}
