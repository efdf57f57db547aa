package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	hyperspool "hyperspool.dev/go"
)

// suspensionFallback is how long a suspended call waits to be killed before it gives up (75,
// EX_TEMPFAIL): the agent ends the script's process group at once, so this only ever fires when
// something went wrong.
const (
	suspensionFallback = 60 * time.Second
	exitSuspendedLong  = 75
)

// runScriptVerb makes one durable call and returns the exit code the script sees.
func runScriptVerb(args []string) int {
	call, err := parseScriptCall(args)
	if err != nil {
		// The message may quote an argument, which may hold a line break: still one line.
		fmt.Fprintln(os.Stderr, oneLine(err.Error()))
		return hyperspool.ExitUsage
	}
	// A put's file is looked at (its size, or why it cannot be read) but not opened: a replayed put
	// needs no file, and a new one the agent refuses with that reason, taking no position.
	if call.artifact != nil && call.artifact.Source != nil {
		size, problem := sourceSize(*call.artifact.Source)
		switch {
		case problem != "":
			call.request.With("unreadable", "spool artifact put: "+problem)
		case size >= 0:
			call.request.With("size", size)
		}
	}
	socket := os.Getenv("SPOOL_SOCKET")
	if socket == "" {
		fmt.Fprintf(os.Stderr, "spool %s: no agent to talk to (SPOOL_SOCKET is not set); in-script verbs run inside a script "+
			"started by 'spool run', 'spool submit' or a cluster run\n", args[0])
		return hyperspool.ExitUnavailable
	}
	conn, err := hyperspool.Dial(socket, hyperspool.DialOptionsFromEnv())
	if err != nil {
		return reportFailure(err)
	}
	defer conn.Close()
	code, err := exchange(conn, call)
	if err != nil {
		return reportFailure(err)
	}
	return code
}

func exchange(conn *hyperspool.Conn, call *scriptCall) (int, error) {
	answer, err := conn.Call(call.request)
	if err != nil {
		return 0, err
	}
	if call.artifact != nil {
		return artifactExchange(conn, call, answer)
	}
	if answer.Status == hyperspool.StatusExecute && call.command != nil {
		result := runCommand(call.command, answer.IdempotencyKey, answer.Traceparent)
		done := hyperspool.WithOutput(hyperspool.NewRequest("done").With("position", answer.Position), "stdout", result.Stdout).
			With("exitCode", result.ExitCode)
		if result.ExitCode != 0 && result.StderrTail != "" {
			done = done.With("stderrTail", result.StderrTail)
		}
		if answer, err = conn.Call(done); err != nil {
			return 0, err
		}
		if answer.Status == hyperspool.StatusOK {
			return finish(answer, true), nil
		}
	}
	if answer.Status == hyperspool.StatusSuspended {
		awaitSuspension()
	}
	return finish(answer, false), nil
}

// awaitSuspension never returns: the agent is ending this script's process group, and going on
// would run the script past a wait that has not returned.
func awaitSuspension() {
	time.Sleep(suspensionFallback)
	os.Exit(exitSuspendedLong)
}

// finish prints an answer and returns its exit code. executed says the step's command ran here
// and printed its stdout already.
func finish(answer *hyperspool.Answer, executed bool) int {
	switch answer.Status {
	case hyperspool.StatusOK:
		stdout := answer.Output()
		if executed {
			stdout = nil
		}
		if len(stdout) > 0 && !(answer.Replayed && writesToRunLog(1)) {
			os.Stdout.Write(stdout)
		}
		if answer.Stderr != "" && !(answer.Replayed && writesToRunLog(2)) {
			os.Stderr.WriteString(answer.Stderr + "\n")
		}
		return answer.Code()
	case hyperspool.StatusError:
		os.Stderr.WriteString(answer.Message + "\n")
		return answer.Code()
	}
	fmt.Fprintf(os.Stderr, "spool: unexpected answer from the agent: %s\n", answer.Status)
	return hyperspool.ExitFailure
}

func reportFailure(err error) int {
	fmt.Fprintf(os.Stderr, "spool: %v\n", err)
	var unavailable *hyperspool.AgentUnavailable
	if errors.As(err, &unavailable) {
		return hyperspool.ExitUnavailable
	}
	return hyperspool.ExitFailure
}
