// Package hyperspool is the Go SDK of Hyperspool: durable workflows as ordinary Go programs. It
// also holds the spool socket protocol (docs/protocol.md) that the native in-script client
// (cmd/spool) is built on.
//
// A program started by spool run, spool submit or a cluster run talks to its agent over the unix
// socket in $SPOOL_SOCKET. Every function here is one durable call: the first pass runs it and
// the journal records its result; after a crash or a wait the program runs again from the top
// and each call gives back what was recorded, without running again.
//
//	env, err := hyperspool.StepFn("deploy", func() (PreviewEnv, error) {
//		return deploy(host)
//	})
//	if err != nil {
//		return err
//	}
//	if _, err := hyperspool.WaitEvent("pr.closed"); err != nil {
//		return err
//	}
//	_, err = hyperspool.StepFn("teardown", func() (any, error) {
//		return nil, teardown(env)
//	})
//
// # Durable functions
//
// [StepFn] runs a function once and records its value as JSON, and JSON only: what it returns,
// on the first pass as on every replay, is the value decoded from that JSON into its type
// parameter. A value JSON cannot hold is refused before anything is recorded, and so is an
// integer a double cannot hold exactly (past 2^53): return a 64-bit id as a string. A function
// that returns an error records nothing, and its error comes back as it was; the next pass runs
// the function again. Keep step bodies safe to retry.
//
// # Failures
//
// Errors are of three kinds, all for errors.As:
//
//   - [*StepFailed]: a command exited non-zero. Its ExitCode and Stdout are the step's result;
//     branch on it.
//   - [*ScriptError]: the agent refused the call (a reused activity name, a second lock, a result
//     over the limit, a diverged replay), or the SDK did. A bug in the script: let it end the run.
//   - [*AgentUnavailable]: no agent, or it went away mid-call. The run replays elsewhere: return
//     it (a main exits with [ExitCode], 69), never retry the call.
//
// When a call has to wait (a sleep, a wait, a held lock, an unfinished activity) the agent ends
// the program's process group. The call then neither returns nor errs: it writes "spool: script
// suspended awaiting …" to stderr and blocks until the process is ended (after 60 s it exits
// with 75), so no error handling can carry the program past a wait that has not returned.
//
// # JSON values and state
//
// Values going out (a state cell, an output, an event's payload, a child's input) are any value
// encoding/json can write; a string is stored as it is. Values coming back (an event's payload,
// a state cell) are [encoding/json.RawMessage]: decode them into a type of your own with
// json.Unmarshal. A cell holding text that is not JSON comes back as that text, as a JSON string.
// State calls take [Entity] for the project's cross-run scope; without it a cell is the run's own.
//
// # The connection
//
// One connection per process, opened at the first call. Only the connect is retried
// (SPOOL_CONNECT_ATTEMPTS, default 5; SPOOL_CONNECT_BACKOFF_MS, default 50, doubling): a request
// once written is never written again. Calls may come from several goroutines; they are
// answered in the order they reach the agent, and that order is their identity in the journal,
// so make them from one goroutine unless the order does not matter.
package hyperspool
