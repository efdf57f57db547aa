package nodecompat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Len16 is s.length in JavaScript: the number of UTF-16 code units.
func Len16(s string) int {
	n := 0
	for _, r := range s {
		n += units(r)
	}
	return n
}

func units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Slice16 is s.slice(0, n) in JavaScript, as Node would print it: a pair cut in half leaves a
// lone surrogate, which becomes U+FFFD on output.
func Slice16(s string, n int) string {
	var out strings.Builder
	for _, r := range s {
		if n <= 0 {
			break
		}
		if units(r) > n {
			out.WriteString(replacement)
			break
		}
		out.WriteRune(r)
		n -= units(r)
	}
	return out.String()
}

// FirstUnit is s.charAt(1) in JavaScript for an argument that starts with a one-byte character:
// the character after it, or U+FFFD when that character needs a surrogate pair.
func FirstUnit(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if r >= 0x10000 || r == utf8.RuneError {
		return replacement
	}
	return string(r)
}

// TrimSpace is String.prototype.trim: it removes white space and line terminators, which
// include U+FEFF and the Unicode space separators.
func TrimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || unicode.Is(unicode.Zs, r) || (r >= '\t' && r <= '\r') || r == '\u2028' || r == '\u2029'
	})
}
