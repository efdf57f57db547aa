// Command spool is the native in-script client of Hyperspool: the durable verbs a script calls
// (spool step, spool sleep, ...), spoken to the agent of its pass over $SPOOL_SOCKET, and the
// pod's pass runner (spool pass). It starts in well under a millisecond where the Node client
// takes ~100 ms a call. Every other command is handed to the Node control CLI. An activity
// attempt's reporter is a binary of its own (cmd/spool-activity-attempt): it needs an HTTP
// client, which would double this one's size and start-up.
package main

import (
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// inScriptVerbs are the verbs served here; `event` only inside a script, where it is recorded
// (a person's `spool event emit` goes to a server).
var inScriptVerbs = map[string]bool{
	"step": true, "sleep": true, "wait": true, "state": true, "lock": true, "activity": true,
	"spawn": true, "call": true, "call-node": true, "call-graph": true, "output": true, "annotate": true, "artifact": true, "checkout": true,
}

func run(args []string) int {
	verb := ""
	if len(args) > 0 {
		verb = args[0]
	}
	_, inScript := os.LookupEnv("SPOOL_SOCKET")
	switch {
	case inScript && helpWords[verb]:
		fmt.Print(inScriptHelp())
		return 0
	case inScriptVerbs[verb] || (verb == "event" && inScript):
		return runScriptVerb(args)
	case verb == "pass":
		return runPassCommand(args[1:])
	case verb == "launcher" && os.Getenv(launcherEnv) == "1":
		return runLauncher()
	}
	return delegate(verb, args)
}
