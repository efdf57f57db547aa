package nodecompat

import "testing"

func TestWellFormed(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain é 😀", "plain é 😀"},
		{"\xff", "\uFFFD"},
		{"\xe2\x82A", "\uFFFDA"},               // a truncated sequence is one replacement
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // a surrogate's bytes are three
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
	}
	for _, tc := range tests {
		if got := WellFormed([]byte(tc.in)); got != tc.want {
			t.Errorf("WellFormed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecoderHoldsASplitSequence(t *testing.T) {
	var d Decoder
	smile := []byte("😀")
	if got := d.Write(append([]byte("a"), smile[:2]...)); got != "a" {
		t.Errorf("first piece %q", got)
	}
	if got := d.Write(append(smile[2:], 'b')); got != "😀b" {
		t.Errorf("second piece %q", got)
	}
	d.Write([]byte{0xe2, 0x82})
	if got := d.End(); got != "\uFFFD" {
		t.Errorf("end %q", got)
	}
}

func TestSlice16(t *testing.T) {
	if got := Slice16("ab😀c", 3); got != "ab\uFFFD" {
		t.Errorf("a pair cut in half: %q", got)
	}
	if got := Len16("ab😀c"); got != 5 {
		t.Errorf("Len16 %d", got)
	}
}
