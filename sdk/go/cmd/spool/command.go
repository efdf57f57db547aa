package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"hyperspool.dev/go/internal/command"
)

// runCommand runs a step's command in the script's own environment: stdout captured as the
// step's result and printed as it comes (a long step shows its progress in spool logs and kubectl
// logs while it runs, and one cancelled or killed half-way leaves what it printed), stdin straight
// through, stderr through with its tail kept for a failed step. With tracing on, the answer's
// traceparent names the step's span: as TRACEPARENT, a command that traces joins the run's trace.
func runCommand(argv []string, idempotencyKey, traceparent string) command.Result {
	program := argv[0]
	env := os.Environ()
	if idempotencyKey != "" {
		env = setEnv(env, "SPOOL_IDEMPOTENCY_KEY", idempotencyKey)
	}
	if traceparent != "" {
		env = setEnv(env, "TRACEPARENT", traceparent)
	}
	path, err := command.LookPath(program, os.Getenv("PATH"))
	if err == nil {
		var result command.Result
		if result, err = command.Run(path, argv, env); err == nil {
			return result
		}
	}
	if errors.Is(err, syscall.ENOENT) {
		message := fmt.Sprintf("spool: cannot run '%s': command not found", program)
		fmt.Fprintln(os.Stderr, message)
		return command.Result{ExitCode: 127, StderrTail: command.TailOf(message)}
	}
	message := fmt.Sprintf("spool: cannot run '%s': %s", program, command.SpawnMessage(program, err))
	fmt.Fprintln(os.Stderr, message)
	return command.Result{ExitCode: 126, StderrTail: command.TailOf(message)}
}

// setEnv returns env with name set to value, replacing any earlier setting.
func setEnv(env []string, name, value string) []string {
	prefix := name + "="
	out := env[:0:0]
	for _, entry := range env {
		if !strings.HasPrefix(entry, prefix) {
			out = append(out, entry)
		}
	}
	return append(out, prefix+value)
}
