package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The hand-written matchers answer as the patterns they replace (regexp only in the test).
func TestTextMatchersAgreeWithTheirPatterns(t *testing.T) {
	cases := []struct {
		name    string
		pattern *regexp.Regexp
		match   func(string) bool
		inputs  []string
	}{
		{"isWholeNumber", regexp.MustCompile(`^-?[0-9]+$`), isWholeNumber,
			[]string{"", "-", "0", "42", "-7", "--7", "7-", "1.5", " 1", "1 ", "1\n", "٣", "+3", "12a"}},
		{"isNegativeNumber", regexp.MustCompile(`^-[0-9]`), isNegativeNumber,
			[]string{"", "-", "-1", "-1x", "--1", "-x", "1", "-٣"}},
		{"hasTopLevelNodesKey", regexp.MustCompile(`(?m)^(nodes|"nodes"|'nodes')[ \t]*:`), hasTopLevelNodesKey,
			[]string{"", "nodes:", "nodes :\n", "nodes\t: []", "name: x\nnodes:\n  a: {}", "  nodes:", "nodesx:", `"nodes": 1`,
				"'nodes' :", "nodes", "x: 1\r\nnodes:\r\n", "nodes\n:", "a\n\nnodes   :"}},
	}
	for _, c := range cases {
		for _, input := range c.inputs {
			if got, want := c.match(input), c.pattern.MatchString(input); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, input, got, want)
			}
		}
	}
}

// Every call the client makes pays for the packages it links and their init: the parsers must not
// bring regexp back, nor anything net/http (an activity attempt's reporter, a binary of its own, is
// what needs it), which doubled the binary and added a third to its start-up (issue 32).
func TestTheClientDoesNotLinkHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	heavy := map[string]bool{"regexp": true, "net/http": true, "crypto/tls": true}
	for _, dep := range strings.Fields(string(out)) {
		if heavy[dep] {
			t.Errorf("cmd/spool links %s", dep)
		}
	}
}
