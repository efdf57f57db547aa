package hyperspool

import (
	"bytes"
	"encoding/json"
	"errors"
)

// appendCompact writes a JSON value without insignificant space. The agent parses it again, so
// what reaches the journal is the value the Node client would have sent.
func appendCompact(b []byte, raw json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	if buf.Len() == 0 {
		return nil, errors.New("empty JSON value")
	}
	return append(b, buf.Bytes()...), nil
}
