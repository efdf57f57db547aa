// Package spooltest tests a workflow from go test through spool test (docs/testing-workflows.md,
// docs/sdks.md): its cases run on an in-memory store with a virtual clock, so a 14-day sleep takes
// no real time.
//
//	func TestUpgrade(t *testing.T) {
//		spooltest.Check(t, "trial.sh", spooltest.Case{
//			Signals: []spooltest.Signal{{At: 15 * 24 * time.Hour, Name: "upgrade", Payload: "pro"}},
//			Stubs:   spooltest.Stubs{Steps: map[string]spooltest.StepStub{"charge": {Stdout: "rcpt-1"}}},
//			Expect:  &spooltest.Expect{Outputs: map[string]string{"plan": "pro"}},
//		})
//	}
//
// The CLI is $SPOOL_CLI, else spool on the PATH; a Runner names another, or runs each pass in a
// fresh directory.
package spooltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Error is spool test refusing the case or the workflow (ExitCode 2, Message its one line), or
// failing to run.
type Error struct {
	ExitCode int
	Message  string
}

func (e *Error) Error() string { return e.Message }

// Runner runs spool test; the package's functions use the zero Runner.
type Runner struct {
	// CLI is the spool CLI; empty: $SPOOL_CLI, else spool on the PATH.
	CLI string
	// FreshDir runs each pass in a new, empty working directory, as each pass on a cluster is a new pod.
	FreshDir bool
}

// RunCase runs one case built here against the workflow file.
func RunCase(workflow string, c Case) (Result, error) { return Runner{}.RunCase(workflow, c) }

// RunCases runs these cases, or with none the workflow's own test file (trial.sh →
// trial.test.yaml; none there: one case that passes when the run succeeds).
func RunCases(workflow string, cases ...Case) ([]Result, error) {
	return Runner{}.RunCases(workflow, cases...)
}

// Check runs the case and fails the test unless it passed: with the CLI's line when it refused
// the case, else with the case's report.
func Check(t TB, workflow string, c Case) Result {
	t.Helper()
	return Runner{}.Check(t, workflow, c)
}

// RunCase is the package's RunCase with this Runner.
func (r Runner) RunCase(workflow string, c Case) (Result, error) {
	text, err := json.Marshal(c)
	if err != nil {
		return Result{}, err
	}
	results, err := r.spoolTest(workflow, "--case", string(text))
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}

// RunCases is the package's RunCases with this Runner.
func (r Runner) RunCases(workflow string, cases ...Case) ([]Result, error) {
	if len(cases) == 0 {
		return r.spoolTest(workflow)
	}
	text, err := json.Marshal(cases)
	if err != nil {
		return nil, err
	}
	return r.spoolTest(workflow, "--case", string(text))
}

// Check is the package's Check with this Runner.
func (r Runner) Check(t TB, workflow string, c Case) Result {
	t.Helper()
	result, err := r.RunCase(workflow, c)
	if err != nil {
		t.Fatal(err)
	}
	result.AssertPassed(t)
	return result
}

func (r Runner) spoolTest(workflow string, extra ...string) ([]Result, error) {
	cli := r.CLI
	if cli == "" {
		cli = os.Getenv("SPOOL_CLI")
	}
	if cli == "" {
		cli = "spool"
	}
	if r.FreshDir {
		extra = append(extra, "--fresh-dir")
	}
	cmd := exec.Command(cli, append([]string{"test", workflow, "--json"}, extra...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		return nil, &Error{ExitCode: -1, Message: fmt.Sprintf("cannot run the spool CLI (set SPOOL_CLI to its path or put spool on the PATH): %v", err)}
	}
	said := strings.TrimSpace(stderr.String())
	if code == 2 {
		return nil, &Error{ExitCode: 2, Message: said}
	}
	if code != 0 && code != 1 {
		return nil, &Error{ExitCode: code, Message: fmt.Sprintf("spool test exited %d: %s", code, said)}
	}
	var results []Result
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil || len(results) == 0 {
		return nil, &Error{ExitCode: code, Message: fmt.Sprintf("spool test --json printed what is not its report (%v): %.200s", err, stdout.String())}
	}
	return results, nil
}
