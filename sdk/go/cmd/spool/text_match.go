package main

import "strings"

// Hand-written matchers for the few patterns the parsers need. Not regexp: its package and each
// MustCompile at init are paid by every call the client makes, and these patterns are one line each.

// isWholeNumber is ^-?[0-9]+$: an optional minus and ASCII digits, nothing else.
func isWholeNumber(text string) bool {
	digits := strings.TrimPrefix(text, "-")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// isNegativeNumber is ^-[0-9]: a minus followed by a digit (a value, not a flag).
func isNegativeNumber(text string) bool {
	return len(text) >= 2 && text[0] == '-' && text[1] >= '0' && text[1] <= '9'
}

// hasTopLevelNodesKey is (?m)^(nodes|"nodes"|'nodes')[ \t]*: — a line that starts with a nodes key.
func hasTopLevelNodesKey(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		for _, key := range [...]string{"nodes", `"nodes"`, "'nodes'"} {
			if rest, ok := strings.CutPrefix(line, key); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ":") {
				return true
			}
		}
	}
	return false
}
