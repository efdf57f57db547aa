package hyperspool

import (
	"encoding/json"

	"hyperspool.dev/go/internal/nodecompat"
)

// appendJSON writes a JSON value as the Node client would after parsing it: the same bytes, so
// the agent cannot tell the clients apart.
func appendJSON(b []byte, raw json.RawMessage) ([]byte, error) {
	text, err := nodecompat.Restringify(raw)
	if err != nil {
		return nil, err
	}
	return append(b, text...), nil
}
