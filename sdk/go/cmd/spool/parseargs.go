package main

import (
	"strings"
	"unicode/utf8"

	"hyperspool.dev/go/internal/nodecompat"
)

// The Node client parses each verb's arguments with util.parseArgs (strict, positionals
// allowed) and passes its first error line on. parseArgs below follows that parser's rules as
// Node 20 has them, so both clients refuse the same input with the same words.

type optionKind int

const (
	stringOption optionKind = iota
	boolOption
	multiStringOption
)

type optionSpec map[string]optionKind

type parsedArgs struct {
	strings     map[string]string
	multi       map[string][]string
	bools       map[string]bool
	positionals []string
}

func (p *parsedArgs) str(name string) (string, bool) {
	v, ok := p.strings[name]
	return v, ok
}

type argToken struct {
	positional bool
	name       string // option name, without dashes
	rawName    string // as written: --name or -n
	value      string
	hasValue   bool
	inline     bool // --name=value
}

// tokenize splits args as parseArgs does: `--` ends the options; -x and -xyz are short options
// (none is defined, so each is unknown); --name=value carries its value; a --name of a string
// option takes the next argument, whatever it looks like.
func tokenize(args []string, spec optionSpec) []argToken {
	var tokens []argToken
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			for _, rest := range args[i+1:] {
				tokens = append(tokens, argToken{positional: true, value: rest})
			}
			return tokens
		case len(arg) >= 2 && arg[0] == '-' && arg[1] != '-':
			// A short option, or a group of them; parseArgs stops at the first, which is unknown.
			short := nodecompat.FirstUnit(arg[1:])
			tokens = append(tokens, argToken{name: short, rawName: "-" + short})
		case strings.HasPrefix(arg, "--") && hasEqualsAfterFirst(arg):
			eq := strings.IndexByte(arg, '=')
			name := arg[2:eq]
			tokens = append(tokens, argToken{name: name, rawName: "--" + name, value: arg[eq+1:], hasValue: true, inline: true})
		case strings.HasPrefix(arg, "--"):
			name := arg[2:]
			token := argToken{name: name, rawName: arg}
			if kind, known := spec[name]; known && kind != boolOption && i+1 < len(args) {
				i++
				token.value, token.hasValue = args[i], true
			}
			tokens = append(tokens, token)
		default:
			tokens = append(tokens, argToken{positional: true, value: arg})
		}
	}
	return tokens
}

// hasEqualsAfterFirst is arg.includes('=', 3): an '=' after the option name's first character.
func hasEqualsAfterFirst(arg string) bool {
	name := arg[2:]
	if name == "" {
		return false
	}
	_, size := utf8.DecodeRuneInString(name)
	return strings.IndexByte(name[size:], '=') >= 0
}

// parseArgs returns the options and positionals of args, or the message parseArgs would throw
// (its first line, without the hint about positionals that start with a dash).
func parseArgs(args []string, spec optionSpec) (*parsedArgs, string) {
	parsed := &parsedArgs{strings: map[string]string{}, multi: map[string][]string{}, bools: map[string]bool{}}
	for _, token := range tokenize(args, spec) {
		if token.positional {
			parsed.positionals = append(parsed.positionals, token.value)
			continue
		}
		kind, known := spec[token.name]
		if !known {
			return nil, "Unknown option '" + token.rawName + "'"
		}
		if kind != boolOption && !token.hasValue {
			return nil, "Option '--" + token.name + " <value>' argument missing"
		}
		if kind == boolOption && token.hasValue {
			return nil, "Option '--" + token.name + "' does not take an argument"
		}
		// No option is a digit: a negative number is a value (--by -3), as the Node client takes it.
		if !token.inline && nodecompat.Len16(token.value) > 1 && token.value[0] == '-' && !isNegativeNumber(token.value) {
			return nil, "Option '" + token.rawName + "' argument is ambiguous."
		}
		switch kind {
		case boolOption:
			parsed.bools[token.name] = true
		case multiStringOption:
			parsed.multi[token.name] = append(parsed.multi[token.name], token.value)
		default:
			parsed.strings[token.name] = token.value
		}
	}
	return parsed, ""
}
