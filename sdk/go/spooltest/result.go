package spooltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Result is one case's verdict, as spool test --json gives it. The run's fields are zero when the
// case could not run at all (its failure says why).
type Result struct {
	Workflow string `json:"workflow"`
	TestFile string `json:"testFile"`
	Case     string `json:"case"`
	Passed   bool   `json:"passed"`
	// Failures holds one line per unmet expectation.
	Failures []string `json:"failures"`
	RealMs   int64    `json:"realMs"`
	RunID    string   `json:"runId"`
	// Outcome is succeeded, failed, cancelled or waiting.
	Outcome  string             `json:"outcome"`
	Error    string             `json:"error"`
	Awaiting string             `json:"awaiting"`
	Outputs  map[string]string  `json:"outputs"`
	Steps    []string           `json:"steps"`
	State    map[string]*string `json:"state"`
	Runs     int                `json:"runs"`
	// VirtualMs is the virtual time from the start until the last run ended.
	VirtualMs int64          `json:"virtualMs"`
	Journal   []JournalEntry `json:"journal"`
	Log       string         `json:"log"`
}

// JournalEntry is one call or result of the run's journal.
type JournalEntry struct {
	Position int             `json:"position"`
	Kind     string          `json:"kind"`
	Verb     string          `json:"verb"`
	Name     string          `json:"name"`
	Data     json.RawMessage `json:"data"`
}

// VirtualTime is the virtual time from the start until the last run ended.
func (r Result) VirtualTime() time.Duration {
	return time.Duration(r.VirtualMs) * time.Millisecond
}

// Report is what a person reads: the verdict, each failure, how the run ended, its journal and log.
func (r Result) Report() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s %s › %s\n", verdict, r.Workflow, r.Case)
	for _, failure := range r.Failures {
		fmt.Fprintf(&b, "  %s\n", failure)
	}
	if r.RunID == "" {
		return b.String()
	}
	ended := r.Outcome
	if r.Outcome == "waiting" {
		ended += " for " + r.Awaiting
	}
	if r.Error != "" {
		ended += ": " + r.Error
	}
	fmt.Fprintf(&b, "  the run %s %s\n  its journal:\n", r.RunID, ended)
	for _, e := range r.Journal {
		var data bytes.Buffer
		if json.Compact(&data, e.Data) != nil {
			data.Write(e.Data)
		}
		fmt.Fprintf(&b, "    %3d %-6s %-12s %s %s\n", e.Position+1, e.Kind, e.Verb, e.Name, data.String())
	}
	if log := strings.TrimRight(r.Log, "\n"); strings.TrimSpace(log) != "" {
		lines := strings.Split(log, "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		b.WriteString("  its log:\n")
		for _, line := range lines {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	return b.String()
}

// AssertPassed fails the test with the case's report when the case failed.
func (r Result) AssertPassed(t TB) {
	t.Helper()
	if !r.Passed {
		t.Fatal(r.Report())
	}
}
