package main

import (
	"sort"
	"strings"
)

const inScriptHelpHeader = "Usage inside a workflow script: each call is a checkpoint in the run's journal, and a replay answers it from there\n" +
	"(control commands such as spool runs or spool submit are for outside a script)"

// helpWords ask for help: inside a script they get the in-script verbs, not the control CLI's.
var helpWords = map[string]bool{"--help": true, "-h": true, "help": true}

// inScriptHelp is the Node client's text (src/cli/script/parse.ts inScriptHelp) from the same
// usage table: one line per usage, sorted, skipping a group's summary line for its verbs'.
func inScriptHelp() string {
	keys := []string{}
	for key := range usage {
		group := false
		for other := range usage {
			group = group || strings.HasPrefix(other, key+" ")
		}
		if !group {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	var text strings.Builder
	text.WriteString(inScriptHelpHeader + "\n\n")
	for _, key := range keys {
		text.WriteString("  " + usage[key] + "\n")
	}
	return text.String()
}
