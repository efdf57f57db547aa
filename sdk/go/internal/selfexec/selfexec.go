// Package selfexec runs a command's test binary as the command itself, for tests of a main
// package: its TestMain turns into the command when the role's variable is set, and the tests
// start the binary with it and read what it printed and how it exited.
package selfexec

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Result is what the command printed and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Command is the test binary as the command: args, role=1, env, and none of the tests' own
// SPOOL_* settings, so a test sees only what it sets.
func Command(t *testing.T, role string, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPOOL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, role+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// Run runs cmd to its end: its stderr, and its stdout unless the test set one, are kept.
func Run(t *testing.T, cmd *exec.Cmd) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	cmd.Stderr = &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return Result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}
