package hyperspool

import (
	"encoding/json"
	"strings"
)

// A StateOption picks the scope of a state cell.
type StateOption func(*stateScope)

type stateScope struct {
	entity string
}

// Entity puts a state call in the project's cross-run scope under name, state that outlives any
// one run. Without it (or with ""), a cell is private to this run.
func Entity(name string) StateOption {
	return func(s *stateScope) { s.entity = name }
}

func stateRequest(verb string, opts []StateOption, fields ...field) *Request {
	var scope stateScope
	for _, opt := range opts {
		opt(&scope)
	}
	req := NewRequest(verb)
	for _, f := range fields {
		req.With(f.name, f.value)
	}
	if scope.entity != "" {
		req.With("entity", scope.entity)
	}
	return req
}

// StateGet reads the cell key. Its value comes back as JSON: the cell's text when it parses as
// JSON, else that text as a JSON string (so a cell set from bash with `spool state set n 5` is
// the number 5). ok is false when the cell is absent (or empty: the agent answers both alike).
func StateGet(key string, opts ...StateOption) (value json.RawMessage, ok bool, err error) {
	answer, err := process.call(stateRequest("state.get", opts, field{"key", key}))
	if err != nil {
		return nil, false, err
	}
	if err := expectSuccess(answer, "state_get"); err != nil {
		return nil, false, err
	}
	cell := text(answer)
	if cell == "" {
		return nil, false, nil
	}
	return cellValue(cell), true, nil
}

// StateSet sets the cell key to value: a string as it is, any other value as its JSON.
func StateSet(key string, value any, opts ...StateOption) error {
	stored, err := storedText("state_set", value)
	if err != nil {
		return err
	}
	answer, err := process.call(stateRequest("state.set", opts, field{"key", key}, field{"value", stored}))
	if err != nil {
		return err
	}
	return expectSuccess(answer, "state_set")
}

// StateAdd sets the cell key only if it is absent, and reports whether this call did. value may
// be nil (a cell that only marks the key taken). It is recorded, so a replay gives the same answer.
func StateAdd(key string, value any, opts ...StateOption) (added bool, err error) {
	fields := []field{{"key", key}}
	if value != nil {
		stored, err := storedText("state_add", value)
		if err != nil {
			return false, err
		}
		fields = append(fields, field{"value", stored})
	}
	if err := process.require("state_add", "state.add"); err != nil {
		return false, err
	}
	answer, err := process.call(stateRequest("state.add", opts, fields...))
	if err != nil {
		return false, err
	}
	if answer.Code() == ExitTaken {
		return false, nil
	}
	return true, expectSuccess(answer, "state_add")
}

// StateDelete removes the cell key.
func StateDelete(key string, opts ...StateOption) error {
	answer, err := process.call(stateRequest("state.delete", opts, field{"key", key}))
	if err != nil {
		return err
	}
	return expectSuccess(answer, "state_delete")
}

// StateList returns the cells whose keys start with prefix ("" for all), each value as StateGet
// gives it.
func StateList(prefix string, opts ...StateOption) (map[string]json.RawMessage, error) {
	var fields []field
	if prefix != "" {
		fields = append(fields, field{"prefix", prefix})
	}
	answer, err := process.call(stateRequest("state.list", opts, fields...))
	if err != nil {
		return nil, err
	}
	if err := expectSuccess(answer, "state_list"); err != nil {
		return nil, err
	}
	cells := make(map[string]json.RawMessage)
	for _, line := range strings.Split(answer.Stdout, "\n") {
		if line == "" {
			continue
		}
		key, value, _ := strings.Cut(line, "\t")
		cells[key] = cellValue(value)
	}
	return cells, nil
}
