package nodecompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
)

// Restringify is JSON.stringify(JSON.parse(text)): the value of a JSON text written as Node
// writes it, with numbers in their shortest form and an object's keys in JavaScript's order
// (integer keys ascending first, then the others as they first appeared; a repeated key keeps
// its first place and its last value). The error says the text is not JSON.
func Restringify(text []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	value, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected text after the JSON value")
	}
	return appendValue(nil, value), nil
}

type object struct {
	keys   []string
	values map[string]any
}

func readValue(dec *json.Decoder) (any, error) {
	token, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		switch t {
		case '[':
			var items []any
			for dec.More() {
				item, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				items = append(items, item)
			}
			_, err := dec.Token()
			return items, err
		case '{':
			obj := &object{values: map[string]any{}}
			for dec.More() {
				keyToken, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := keyToken.(string)
				item, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				if _, seen := obj.values[key]; !seen {
					obj.keys = append(obj.keys, key)
				}
				obj.values[key] = item
			}
			_, err := dec.Token()
			return obj, err
		}
		return nil, errors.New("unexpected " + t.String())
	case json.Number:
		f, _ := strconv.ParseFloat(string(t), 64) // ±Inf past the range, as Number() gives
		return f, nil
	}
	return token, nil // string, bool or nil
}

func appendValue(b []byte, value any) []byte {
	switch v := value.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendString(b, v)
	case float64:
		return AppendNumber(b, v)
	case []any:
		b = append(b, '[')
		for i, item := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, item)
		}
		return append(b, ']')
	case *object:
		b = append(b, '{')
		for i, key := range orderKeys(v.keys) {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, key)
			b = append(b, ':')
			b = appendValue(b, v.values[key])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// orderKeys puts array-index keys ("0", "7", up to 2^32-2) first in numeric order, as every
// JavaScript object orders its own properties.
func orderKeys(keys []string) []string {
	var indexes, others []string
	for _, key := range keys {
		if _, ok := arrayIndex(key); ok {
			indexes = append(indexes, key)
		} else {
			others = append(others, key)
		}
	}
	sort.Slice(indexes, func(i, j int) bool {
		a, _ := arrayIndex(indexes[i])
		b, _ := arrayIndex(indexes[j])
		return a < b
	})
	return append(indexes, others...)
}

func arrayIndex(key string) (uint64, bool) {
	if key == "" || len(key) > 10 || (key[0] == '0' && key != "0") {
		return 0, false
	}
	n, err := strconv.ParseUint(key, 10, 64)
	return n, err == nil && n <= 4294967294
}
