package main

import (
	"fmt"
	"os"
	"strings"
)

type passOptions struct {
	socket  string // the spool socket the script is given
	control string // the agent's control socket
	workdir string // where the script and its input are written
}

// passOptionNames in the order the Node CLI declares them, which is the order it checks them.
var passOptionNames = []struct{ name, arg string }{
	{"socket", "<path>"},
	{"control", "<path>"},
	{"workdir", "<dir>"},
}

const passUsage = "usage: spool pass --socket <path> --control <path> [--workdir <dir>]"

// parsePassArgs reads the options of `spool pass` as the Node CLI's commander does, with the
// same messages: a missing value first, then a missing required option, then an unknown
// option, then extra arguments.
func parsePassArgs(args []string) (*passOptions, string) {
	values := map[string]string{"workdir": "/spool/work"}
	given := map[string]bool{}
	var unknown string
	var operands []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			operands = append(operands, arg)
			continue
		}
		name, value, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		spec := passOption(name)
		if !strings.HasPrefix(arg, "--") || spec == "" {
			unknown = arg
			break // commander leaves everything from an unknown option on unparsed
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, "option '--" + name + " " + spec + "' argument missing"
			}
			i++
			value = args[i]
		}
		values[name], given[name] = value, true
	}
	for _, required := range passOptionNames[:2] {
		if !given[required.name] {
			return nil, "required option '--" + required.name + " " + required.arg + "' not specified"
		}
	}
	if unknown != "" {
		return nil, "unknown option '" + unknown + "'"
	}
	if len(operands) > 0 {
		return nil, fmt.Sprintf("too many arguments for 'pass'. Expected 0 arguments but got %d.", len(operands))
	}
	return &passOptions{socket: values["socket"], control: values["control"], workdir: values["workdir"]}, ""
}

func passOption(name string) string {
	for _, option := range passOptionNames {
		if option.name == name {
			return option.arg
		}
	}
	return ""
}

// runPassCommand is `spool pass`: the script container's entry point on a cluster.
func runPassCommand(args []string) int {
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--help" || arg == "-h" {
			if os.Getenv("SPOOL_CONTROL_CLI") != "" {
				return delegate("pass", append([]string{"pass"}, args...))
			}
			fmt.Println(passUsage)
			return 0
		}
	}
	options, problem := parsePassArgs(args)
	if problem != "" {
		fmt.Fprintf(os.Stderr, "spool: %s\n", problem)
		return 2
	}
	code, err := runPodPass(options)
	if err != nil {
		fmt.Fprintf(os.Stderr, "spool: %v\n", err)
		return 1
	}
	return code
}
