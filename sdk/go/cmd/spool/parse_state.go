package main

import hyperspool "hyperspool.dev/go"

// minSafeInteger is Number.MIN_SAFE_INTEGER, the least --by the Node client takes.
const minSafeInteger = -9007199254740991

func parseState(args []string) (*scriptCall, error) {
	sub, rest := first(args)
	verb := "state " + sub
	entity := optionSpec{"entity": stringOption}
	withEntity := func(request *hyperspool.Request, parsed *parsedArgs) *scriptCall {
		if name, ok := parsed.str("entity"); ok {
			request.With("entity", name)
		}
		return &scriptCall{request: request}
	}
	switch sub {
	case "get", "delete", "version":
		parsed, err := parse(verb, rest, entity, 1, 1)
		if err != nil {
			return nil, err
		}
		return withEntity(hyperspool.NewRequest("state."+sub).With("key", parsed.positionals[0]), parsed), nil
	case "set":
		parsed, err := parse(verb, rest, entity, 2, 2)
		if err != nil {
			return nil, err
		}
		return withEntity(hyperspool.NewRequest("state.set").With("key", parsed.positionals[0]).With("value", parsed.positionals[1]), parsed), nil
	case "list":
		parsed, err := parse(verb, rest, entity, 0, 1)
		if err != nil {
			return nil, err
		}
		request := hyperspool.NewRequest("state.list")
		if len(parsed.positionals) > 0 && parsed.positionals[0] != "" {
			request.With("prefix", parsed.positionals[0])
		}
		return withEntity(request, parsed), nil
	case "add":
		parsed, err := parse(verb, rest, entity, 1, 2)
		if err != nil {
			return nil, err
		}
		request := hyperspool.NewRequest("state.add").With("key", parsed.positionals[0])
		if len(parsed.positionals) > 1 {
			request.With("value", parsed.positionals[1])
		}
		return withEntity(request, parsed), nil
	case "incr":
		parsed, err := parse(verb, rest, optionSpec{"entity": stringOption, "by": stringOption, "op": stringOption}, 1, 1)
		if err != nil {
			return nil, err
		}
		by := 1.0
		if text, ok := parsed.str("by"); ok {
			if by, err = integer(verb, "--by", text, minSafeInteger); err != nil {
				return nil, err
			}
		}
		request := hyperspool.NewRequest("state.incr").With("key", parsed.positionals[0]).With("by", by)
		if op, _ := parsed.str("op"); op != "" {
			request.With("op", op)
		}
		return withEntity(request, parsed), nil
	case "cas":
		parsed, err := parse(verb, rest, optionSpec{"entity": stringOption, "op": stringOption}, 3, 3)
		if err != nil {
			return nil, err
		}
		request := hyperspool.NewRequest("state.cas").With("key", parsed.positionals[0])
		if expected := parsed.positionals[1]; expected == "" {
			request.With("expected", nil) // absent
		} else {
			request.With("expected", expected)
		}
		request.With("value", parsed.positionals[2])
		if op, _ := parsed.str("op"); op != "" {
			request.With("op", op)
		}
		return withEntity(request, parsed), nil
	}
	return nil, usageFailure("state get", "unknown state command '"+sub+"'; use get, set, add, incr, cas, delete, list or version")
}
