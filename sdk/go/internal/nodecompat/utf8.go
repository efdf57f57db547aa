package nodecompat

import (
	"strings"
	"unicode/utf8"
)

const replacement = "\uFFFD"

// sequenceLength says how many bytes the sequence starting at lead needs, or 0 for a byte that
// cannot start one.
func sequenceLength(lead byte) int {
	switch {
	case lead < 0x80:
		return 1
	case lead >= 0xC2 && lead <= 0xDF:
		return 2
	case lead >= 0xE0 && lead <= 0xEF:
		return 3
	case lead >= 0xF0 && lead <= 0xF4:
		return 4
	}
	return 0
}

// continuationRange is the range the i-th byte after lead must fall in; the second byte is
// narrowed so that overlong forms, surrogates and code points past U+10FFFF are refused early.
func continuationRange(lead byte, i int) (lo, hi byte) {
	if i == 1 {
		switch lead {
		case 0xE0:
			return 0xA0, 0xBF
		case 0xED:
			return 0x80, 0x9F
		case 0xF0:
			return 0x90, 0xBF
		case 0xF4:
			return 0x80, 0x8F
		}
	}
	return 0x80, 0xBF
}

// validPrefix returns how many bytes at the start of b form a valid (possibly incomplete)
// sequence, and whether it is complete.
func validPrefix(b []byte) (n int, complete bool) {
	need := sequenceLength(b[0])
	if need == 0 {
		return 0, false
	}
	for i := 1; i < need; i++ {
		if i >= len(b) {
			return i, false
		}
		lo, hi := continuationRange(b[0], i)
		if b[i] < lo || b[i] > hi {
			return i, false
		}
	}
	return need, true
}

// WellFormed decodes b as Node's Buffer.toString('utf8') does: each maximal invalid subpart
// becomes one U+FFFD (the WHATWG rule), where Go's own conversions replace byte by byte.
func WellFormed(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b) + 8)
	for len(b) > 0 {
		n, complete := validPrefix(b)
		switch {
		case complete:
			out.Write(b[:n])
			b = b[n:]
		case n == 0:
			out.WriteString(replacement)
			b = b[1:]
		default:
			out.WriteString(replacement)
			b = b[n:]
		}
	}
	return out.String()
}

// WellFormedString is WellFormed for text that is usually valid already.
func WellFormedString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return WellFormed([]byte(s))
}

// Decoder decodes a stream in pieces as Node's StringDecoder does: a sequence split between two
// pieces is held back until its end arrives rather than replaced.
type Decoder struct {
	held []byte
}

// Write returns the text of everything up to the last complete sequence of held+b.
func (d *Decoder) Write(b []byte) string {
	data := append(d.held, b...)
	d.held = nil
	cut := len(data)
	// An incomplete sequence can only be the last 1 to 3 bytes.
	for back := 1; back <= 3 && back <= len(data); back++ {
		start := len(data) - back
		if sequenceLength(data[start]) > 1 {
			if n, complete := validPrefix(data[start:]); !complete && n == back {
				cut = start
			}
			break
		}
		if data[start] < 0x80 || data[start] >= 0xC0 {
			break
		}
	}
	if cut < len(data) {
		d.held = append([]byte(nil), data[cut:]...)
	}
	return WellFormed(data[:cut])
}

// End returns what is left: an unfinished sequence is one U+FFFD.
func (d *Decoder) End() string {
	if len(d.held) == 0 {
		return ""
	}
	d.held = nil
	return replacement
}
