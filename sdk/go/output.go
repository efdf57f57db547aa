package hyperspool

import (
	"bytes"
	"encoding/base64"
	"unicode/utf8"
)

// Output is what the call printed, byte for byte: Stdout, or the bytes of StdoutBase64 (output
// that is not plain text travels as base64, since a JSON string cannot carry it).
func (a *Answer) Output() []byte {
	if a.StdoutBase64 != "" {
		if decoded, err := base64.StdEncoding.DecodeString(a.StdoutBase64); err == nil {
			return decoded
		}
	}
	return []byte(a.Stdout)
}

// IsPlainText reports whether output travels as it is: valid UTF-8 without NUL.
func IsPlainText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// WithOutput sets field to output as text, or field+"Base64" to its bytes when it is not plain
// text, so the agent records (and a replay gives back) exactly what was printed.
func WithOutput(r *Request, field string, output []byte) *Request {
	if IsPlainText(output) {
		return r.With(field, string(output))
	}
	return r.With(field+"Base64", base64.StdEncoding.EncodeToString(output))
}
