package spooltest_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"hyperspool.dev/go/spooltest"
)

const day = 24 * time.Hour

// trialWorkflow builds examples/trial (a stubbed step, a 14-day sleep, a week's wait for a
// signal) and writes trial.sh, which execs it, with the example's trial.test.yaml beside it. It
// points SPOOL_CLI at the repository's built CLI; without node or the build it skips, saying
// why, except under CI, which builds them first: there it fails.
func trialWorkflow(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	why := ""
	if _, err := exec.LookPath("node"); err != nil {
		why = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(root, "dist", "cli", "main.js")); err != nil {
		why = "the CLI is not built (run npm run build in " + root + ")"
	}
	if why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s", why)
		}
		t.Skipf("skipped: spooltest against spool test needs node and the built CLI: %s", why)
	}
	t.Setenv("SPOOL_CLI", filepath.Join(root, "bin", "spool"))
	dir := t.TempDir()
	binary := filepath.Join(dir, "trial")
	if out, err := exec.Command("go", "build", "-o", binary, "../examples/trial").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases, err := os.ReadFile("../examples/trial/trial.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	workflow := filepath.Join(dir, "trial.sh")
	for path, text := range map[string]string{workflow: "exec '" + binary + "'\n", filepath.Join(dir, "trial.test.yaml"): string(cases)} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return workflow
}

var upgrade = spooltest.Case{
	Name:    "upgrades in the third week",
	Signals: []spooltest.Signal{{At: 15 * day, Name: "upgrade", Payload: "pro"}},
	Stubs:   spooltest.Stubs{Steps: map[string]spooltest.StepStub{"charge": {Stdout: "rcpt-1\n"}}},
	Expect: &spooltest.Expect{
		Outputs: map[string]string{"plan": "pro", "receipt": "rcpt-1"},
		Steps:   []string{"charge"},
		Time:    15 * day,
	},
}

func TestTheWorkflowsOwnTestFilePasses(t *testing.T) {
	workflow := trialWorkflow(t)
	results, err := spooltest.RunCases(workflow)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, result := range results {
		result.AssertPassed(t)
		names = append(names, result.Case)
	}
	if !reflect.DeepEqual(names, []string{"upgrades in the third week", "stays free when no upgrade comes"}) {
		t.Fatalf("cases: %q", names)
	}
	if free := results[1]; free.VirtualTime() != 21*day || free.Outputs["plan"] != "free" || free.Outputs["receipt"] != "rcpt-2" {
		t.Fatalf("the free case took %v and set %v", free.VirtualTime(), free.Outputs)
	}
}

// failsLike records what AssertPassed reports instead of failing this test.
type failsLike struct{ said []any }

func (f *failsLike) Helper()           {}
func (f *failsLike) Fatal(args ...any) { f.said = args }

func TestACaseBuiltHerePassesAndWithOneExpectationChangedFailsSayingWhich(t *testing.T) {
	workflow := trialWorkflow(t)
	passing := spooltest.Check(t, workflow, upgrade)
	if passing.Outcome != "succeeded" || passing.VirtualTime() != 15*day {
		t.Fatalf("the passing case: %s", passing.Report())
	}
	calls := []string{}
	for _, entry := range passing.Journal {
		if entry.Kind == "call" {
			calls = append(calls, entry.Verb+" "+entry.Name)
		}
	}
	if want := []string{"step charge", "sleep ", "wait.signal upgrade", "output.set receipt", "output.set plan"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %q, want %q", calls, want)
	}

	wrong := upgrade
	wrong.Expect = &spooltest.Expect{Outputs: map[string]string{"plan": "enterprise"}, Steps: upgrade.Expect.Steps, Time: upgrade.Expect.Time}
	failing, err := spooltest.RunCase(workflow, wrong)
	if err != nil {
		t.Fatal(err)
	}
	line := `expected output plan to be "enterprise", but it was "pro"`
	if failing.Passed || !reflect.DeepEqual(failing.Failures, []string{line}) {
		t.Fatalf("the changed case passed %v with failures %q", failing.Passed, failing.Failures)
	}
	var reported failsLike
	failing.AssertPassed(&reported)
	if len(reported.said) != 1 {
		t.Fatalf("AssertPassed did not fail the test: %v", reported.said)
	}
	report, _ := reported.said[0].(string)
	if !strings.Contains(report, line) || !regexp.MustCompile(`wait\.signal +upgrade`).MatchString(report) {
		t.Fatalf("the report lacks the failure or the journal:\n%s", report)
	}
}

func TestABadCaseIsAnErrorWithTheCLIsOneLine(t *testing.T) {
	workflow := trialWorkflow(t)
	_, err := spooltest.RunCase(workflow, spooltest.Case{Expect: &spooltest.Expect{Outcome: "done"}})
	var refused *spooltest.Error
	if !errors.As(err, &refused) || refused.ExitCode != 2 {
		t.Fatalf("err = %v", err)
	}
	if want := "spool: --case: case 'case 1': expect.outcome is one of succeeded, failed, cancelled, waiting, not 'done'"; refused.Message != want {
		t.Fatalf("the error says %q, want %q", refused.Message, want)
	}
}

// TestFreshDirRunsEachPassInANewDirectory: pass 1 records its working directory; pass 2, after
// the sleep, says whether it runs in the same one.
func TestFreshDirRunsEachPassInANewDirectory(t *testing.T) {
	// The trial's directory, for its checks of node and the build and its SPOOL_CLI.
	workflow := filepath.Join(filepath.Dir(trialWorkflow(t)), "where.sh")
	script := "first=$(spool step where -- pwd)\nspool sleep 1d\nspool output set dir \"$([ \"$first\" = \"$(pwd)\" ] && echo same || echo new)\"\n"
	if err := os.WriteFile(workflow, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	spooltest.Runner{FreshDir: true}.Check(t, workflow, spooltest.Case{Expect: &spooltest.Expect{Outputs: map[string]string{"dir": "new"}}})
}
