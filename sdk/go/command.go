package hyperspool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// runCommand runs a step's command as the spool step verb does: no shell, stdin and stderr
// inherited, stdout captured, SPOOL_IDEMPOTENCY_KEY set. A command that cannot be started is
// reported as a shell would (127 not found, 126 not runnable), so it is recorded as a failed
// step rather than failing the script. With tracing on, the answer's traceparent names the step's
// span: as TRACEPARENT, a command that traces joins the run's trace (docs/tracing.md).
func runCommand(argv []string, idempotencyKey, traceparent string) (stdout string, exitCode int) {
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	// exec keeps the last of duplicate keys, so these replace any inherited value.
	cmd.Env = append(os.Environ(), "SPOOL_IDEMPOTENCY_KEY="+idempotencyKey)
	if traceparent != "" {
		cmd.Env = append(cmd.Env, "TRACEPARENT="+traceparent)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &out, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		code := exit.ExitCode()
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			code = 128 + int(status.Signal())
		}
		return out.String(), code
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(os.Stderr, "spool: cannot run '%s': command not found\n", argv[0])
		return "", 127
	}
	fmt.Fprintf(os.Stderr, "spool: cannot run '%s': %v\n", argv[0], err)
	return "", 126
}
