package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	hyperspool "hyperspool.dev/go"

	"hyperspool.dev/go/internal/command"
)

// delegate hands a command this client does not serve (submit, runs, --help, ...) to the Node
// control CLI named by SPOOL_CONTROL_CLI, replacing this process so its exit code and signals
// are the CLI's own.
func delegate(verb string, args []string) int {
	cli := os.Getenv("SPOOL_CONTROL_CLI")
	if cli == "" {
		what := "'" + oneLine(verb) + "' is a control command"
		if verb == "" {
			what = "no verb given; the verbs other than the in-script ones are control commands"
		} else if verb == "event" {
			what = "'event' outside a script (SPOOL_SOCKET is not set) is a control command"
		}
		fmt.Fprintf(os.Stderr, "spool: %s, which this native client does not serve: "+
			"set SPOOL_CONTROL_CLI to the Node CLI (its bin/spool) to pass them on, or run that CLI itself\n", what)
		return hyperspool.ExitUsage
	}
	path, err := command.LookPath(cli, os.Getenv("PATH"))
	if err == nil && isThisProgram(path) {
		err = errors.New("it names this native client, which would hand the command back to itself")
	}
	if err == nil {
		err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	}
	fmt.Fprintf(os.Stderr, "spool: cannot start the control CLI '%s' (SPOOL_CONTROL_CLI): %s\n", cli, command.ExecMessage(err))
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

func isThisProgram(path string) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	a, errA := os.Stat(self)
	b, errB := os.Stat(path)
	return errA == nil && errB == nil && os.SameFile(a, b)
}
