package main

import (
	"fmt"
	"strings"
)

// oneLine escapes the line breaks and other control characters of a name a message quotes, as
// JSON writes them, so a refusal stays one line (src/common/one-line.ts is the agent's).
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
