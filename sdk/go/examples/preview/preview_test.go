package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The example against the real engine: a .sh workflow that execs the built example, submitted
// to spool dev. The deploy runs once, the run waits holding no process, the event wakes it, and
// the teardown receives the value the deploy recorded.
//
// It needs node and the built CLI (npm run build in the repository root). Without them it skips,
// saying why, except under CI, which builds them first: there it fails.
func TestPreviewUnderSpoolDev(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	if why := missingPrerequisite(root); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s", why)
		}
		t.Skipf("skipped: the preview example against spool dev needs node and the built CLI: %s", why)
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "preview")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "preview.sh"), []byte("exec '"+binary+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spool := startDev(t, root, dir)

	run := strings.TrimSpace(spool.run("submit", "preview.sh", "--input", `{"host":"pr-42"}`))
	waiting := spool.awaitStatus(run, "waiting")
	if waiting["awaiting"] != "event pr.closed" || waiting["passes"] != 1.0 {
		t.Fatalf("waiting: %v", waiting)
	}
	deployed, ok := spool.resultValue(run, "deploy").(map[string]any)
	if !ok || deployed["url"] != "https://pr-42.preview" {
		t.Fatalf("deploy recorded %v", deployed)
	}
	for start := time.Now(); processesRunning(binary) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the waiting run still has a process")
		}
	}

	spool.run("event", "emit", "pr.closed", "--payload", `{"pr":42}`)
	done := spool.awaitStatus(run, "succeeded")
	if done["passes"] != 2.0 {
		t.Errorf("passes: %v", done)
	}
	want := fmt.Sprintf("torn down https://pr-42.preview deployed at %.0f", deployed["deployed_at"])
	if got := spool.resultValue(run, "teardown"); got != want {
		t.Errorf("teardown recorded %q, want %q: it did not get the recorded deploy", got, want)
	}
	logs := spool.run("logs", run)
	if strings.Count(logs, "deploying pr-42") != 1 || strings.Count(logs, "tearing down https://pr-42.preview") != 1 {
		t.Errorf("the deploy and the teardown should each run once:\n%s", logs)
	}
	if !strings.Contains(logs, `pr.closed: {"pr":42}`) {
		t.Errorf("the event's payload is not in the log:\n%s", logs)
	}
}

func missingPrerequisite(root string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed"
	}
	if _, err := os.Stat(filepath.Join(root, "bin/spool")); err != nil {
		return "the CLI is not built (run `npm run build` in " + root + ")"
	}
	if info, err := os.Stat(filepath.Join(root, "dist/cli")); err != nil || !info.IsDir() {
		return "the CLI is not built (run `npm run build` in " + root + ")"
	}
	return ""
}

// devSpool runs spool commands against one spool dev server.
type devSpool struct {
	t    *testing.T
	root string
	dir  string
	url  string
	log  string
}

// startDev starts spool dev in the background; the test's cleanup ends it, by its own pid.
func startDev(t *testing.T, root, dir string) *devSpool {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	logPath := filepath.Join(dir, "dev.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(root, "bin/spool"), "dev", "--port", port, "--data-dir", filepath.Join(dir, "data"))
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logFile.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	s := &devSpool{t: t, root: root, dir: dir, url: "http://" + addr, log: logPath}
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return s
		}
		select {
		case <-exited:
			t.Fatalf("spool dev exited:\n%s", s.devLog())
		default:
		}
		if time.Since(start) > 120*time.Second {
			t.Fatalf("spool dev did not start:\n%s", s.devLog())
		}
	}
}

func (s *devSpool) devLog() string {
	text, _ := os.ReadFile(s.log)
	return string(text)
}

func (s *devSpool) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join(s.root, "bin/spool")}, args...)...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "SPOOL_SERVER="+s.url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("spool %s: %v: %s\nspool dev said:\n%s", strings.Join(args, " "), err, stderr.String(), s.devLog())
	}
	return string(out)
}

func (s *devSpool) json(args ...string) any {
	s.t.Helper()
	text := s.run(args...)
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		s.t.Fatalf("spool %s printed no JSON (%v): %s", strings.Join(args, " "), err, text)
	}
	return v
}

// awaitStatus polls the run until it reaches status, failing at once on any other final one.
func (s *devSpool) awaitStatus(run, status string) map[string]any {
	s.t.Helper()
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		shown, _ := s.json("status", run, "--json").(map[string]any)
		now, _ := shown["status"].(string)
		if now == status {
			return shown
		}
		if now == "succeeded" || now == "failed" || now == "cancelled" {
			s.t.Fatalf("the run ended %s: %v\n%s", now, shown, s.run("logs", run))
		}
		if time.Since(start) > 90*time.Second {
			s.t.Fatalf("the run is still %s, not %s: %v\n%s", now, status, shown, s.run("logs", run))
		}
	}
}

// resultValue is the one value the journal recorded for the step_fn name.
func (s *devSpool) resultValue(run, name string) any {
	s.t.Helper()
	entries, _ := s.json("journal", run, "--json").([]any)
	var values []any
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		if entry["kind"] == "result" && entry["verb"] == "step_fn" && entry["name"] == name {
			data, _ := entry["data"].(map[string]any)
			value := data["value"]
			// The engine keeps a step_fn's value as its JSON text, so a replay gets the keys
			// back in the order they were written.
			if text, ok := data["json"].(string); ok {
				if err := json.Unmarshal([]byte(text), &value); err != nil {
					s.t.Fatalf("the recorded JSON of %s: %v", name, err)
				}
			}
			values = append(values, value)
		}
	}
	if len(values) != 1 {
		s.t.Fatalf("%d recorded results of %s, want 1: %v", len(values), name, entries)
	}
	return values[0]
}

// processesRunning counts the processes whose program is binary.
func processesRunning(binary string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == binary {
			n++
		}
	}
	return n
}
