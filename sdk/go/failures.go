package hyperspool

import (
	"errors"
	"strconv"
	"strings"
)

// StepFailed is a step or an activity whose command exited non-zero: it ran, and its failure is
// recorded, so every replay returns the same StepFailed. Branch on it with errors.As; its
// ExitCode and Stdout are what the unchecked forms of the other SDKs return.
type StepFailed struct {
	// Name is the step's or activity's name; "*" for ActivityWaitAll.
	Name     string
	ExitCode int
	Stdout   string
	// Detail is the agent's own line about the failure, if it sent one: for ActivityWaitAll,
	// which activities failed.
	Detail string
}

func (e *StepFailed) Error() string {
	msg := "step '" + e.Name + "' exited with " + strconv.Itoa(e.ExitCode)
	if e.Name == "*" {
		msg = "activity_wait_all: an activity failed (exit " + strconv.Itoa(e.ExitCode) + ")"
	}
	if e.Detail != "" {
		msg += ": " + strings.TrimPrefix(e.Detail, "spool: ")
	}
	return msg
}

// ScriptError is a call the agent refused, or one the SDK refused before sending it: a bug in the
// script (a reused activity name, a second lock, a bad argument, a value JSON cannot hold, a
// result over the limit, a replay that diverged). Replaying will not fix it; let it end the run.
//
// One refusal is not a bug but never reaches the script: when a call must wait, the SDK blocks
// until the agent ends the process, so no ScriptError stands in for a wait that has not returned.
type ScriptError struct {
	// Kind is ErrorKindUsage, ErrorKindDeterminism, ErrorKindLimit or ErrorKindInternal.
	Kind    string
	Message string
	// ExitCode is what the spool verb would exit with for the same refusal.
	ExitCode int
}

func (e *ScriptError) Error() string { return e.Message }

func usageError(message string) *ScriptError {
	return &ScriptError{Kind: ErrorKindUsage, Message: message, ExitCode: ExitUsage}
}

func internalError(message string) *ScriptError {
	return &ScriptError{Kind: ErrorKindInternal, Message: message, ExitCode: ExitFailure}
}

// ExitCode is what a main that stops on err should exit with: 69 for an *AgentUnavailable (the
// run replays in another pass), the code a *ScriptError or *StepFailed carries, else 1.
func ExitCode(err error) int {
	var unavailable *AgentUnavailable
	var script *ScriptError
	var failed *StepFailed
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &unavailable):
		return ExitUnavailable
	case errors.As(err, &script) && script.ExitCode != 0:
		return script.ExitCode
	case errors.As(err, &failed) && failed.ExitCode != 0:
		return failed.ExitCode
	}
	return ExitFailure
}
