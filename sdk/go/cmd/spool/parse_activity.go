package main

import (
	"strings"

	hyperspool "hyperspool.dev/go"
	"hyperspool.dev/go/internal/nodecompat"
)

func parseActivity(args []string) (*scriptCall, error) {
	sub, rest := first(args)
	switch sub {
	case "submit", "run":
		return activitySpec("activity "+sub, "activity."+sub, rest)
	case "wait":
		parsed, err := parse("activity wait", rest, optionSpec{"all": boolOption}, 0, 1)
		if err != nil {
			return nil, err
		}
		if parsed.bools["all"] {
			if len(parsed.positionals) > 0 {
				return nil, usageFailure("activity wait", "give a NAME or --all, not both")
			}
			return &scriptCall{request: hyperspool.NewRequest("activity.wait").With("all", true)}, nil
		}
		if len(parsed.positionals) == 0 {
			return nil, usageFailure("activity wait", "missing NAME")
		}
		return &scriptCall{request: hyperspool.NewRequest("activity.wait").With("name", parsed.positionals[0])}, nil
	// The seed's names (activity_collect, activity_wait_all) as commands too.
	case "collect":
		parsed, err := parse("activity collect", rest, optionSpec{}, 1, 1)
		if err != nil {
			return nil, err
		}
		return &scriptCall{request: hyperspool.NewRequest("activity.wait").With("name", parsed.positionals[0])}, nil
	case "wait-all":
		if _, err := parse("activity wait-all", rest, optionSpec{}, 0, 0); err != nil {
			return nil, err
		}
		return &scriptCall{request: hyperspool.NewRequest("activity.wait").With("all", true)}, nil
	}
	return nil, usageFailure("activity", "unknown activity command '"+sub+"'; use submit, run, wait, collect or wait-all")
}

var activityOptions = optionSpec{
	"requires":      multiStringOption,
	"attempts":      stringOption,
	"backoff":       stringOption,
	"retry-on-exit": stringOption,
}

func activitySpec(verb, requestVerb string, args []string) (*scriptCall, error) {
	own, command := splitCommand(args)
	// The command first, so `NAME echo hi` says the `--` is missing rather than that `echo` is unexpected.
	argv, err := requireCommand(verb, command)
	if err != nil {
		return nil, err
	}
	parsed, err := parse(verb, own, activityOptions, 1, 1)
	if err != nil {
		return nil, err
	}
	var retryOnExit []float64 // nil: JSON null, retry on any failure
	if text, ok := parsed.str("retry-on-exit"); ok {
		retryOnExit = []float64{}
		for _, code := range strings.Split(text, ",") {
			n, err := integer(verb, "--retry-on-exit", nodecompat.TrimSpace(code), 1)
			if err != nil {
				return nil, err
			}
			retryOnExit = append(retryOnExit, n)
		}
	}
	requires := []string{}
	for _, capability := range parsed.multi["requires"] {
		requires = append(requires, splitNonEmpty(capability, ",")...)
	}
	attempts := 1.0
	if text, ok := parsed.str("attempts"); ok {
		if attempts, err = integer(verb, "--attempts", text, 1); err != nil {
			return nil, err
		}
	}
	backoffMs := 1000.0
	if text, ok := parsed.str("backoff"); ok {
		if backoffMs, err = duration(verb, text); err != nil {
			return nil, err
		}
	}
	request := hyperspool.NewRequest(requestVerb).
		With("name", parsed.positionals[0]).
		With("argv", argv).
		With("requires", requires).
		With("attempts", attempts).
		With("backoffMs", backoffMs).
		With("retryOnExit", retryOnExit)
	// No command for the client to run: an activity runs on a worker, not in the script.
	return &scriptCall{request: request}, nil
}
