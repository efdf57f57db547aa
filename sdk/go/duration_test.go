package hyperspool

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseDurationMillis(t *testing.T) {
	const hint = "; use a form like 500ms, 30s, 5m, 2h, 14d or 1h30m"
	tests := []struct {
		text string
		ms   float64
		err  string
	}{
		{text: "500ms", ms: 500},
		{text: "30s", ms: 30_000},
		{text: "5m", ms: 300_000},
		{text: "2h", ms: 7_200_000},
		{text: "14d", ms: 1_209_600_000},
		{text: "1h30m", ms: 5_400_000},
		{text: "1m5s", ms: 65_000},
		{text: "1.5h", ms: 5_400_000},
		{text: "0.5ms", ms: 1}, // Math.round: halves go up
		{text: "0.4ms", ms: 0},
		{text: " 2s\n", ms: 2000},
		{text: "\u00a05s\ufeff", ms: 5000},
		{text: "1s1s", ms: 2000},
		{text: "", err: "empty duration; use a form like 30s, 5m, 2h, 14d or 1h30m"},
		{text: "   ", err: "empty duration; use a form like 30s, 5m, 2h, 14d or 1h30m"},
		{text: "5", err: "bad duration '5'" + hint},
		{text: "1.", err: "bad duration '1.'" + hint},
		{text: ".5s", err: "bad duration '.5s'" + hint},
		{text: "-1s", err: "a duration cannot be negative: '-1s'"},
		{text: "36525d", ms: 36525 * 86_400_000},
		{text: "36526d", err: "duration '36526d' is too long; the longest is 36525d (100 years)"},
		{text: "5x", err: "bad duration '5x'" + hint},
		{text: "1ms2", err: "bad duration '1ms2'" + hint},
		{text: "1e3s", err: "bad duration '1e3s'" + hint},
		{text: "1h 30m", err: "bad duration '1h 30m'" + hint},
		{text: " 5y ", err: "bad duration ' 5y '" + hint},
	}
	for _, tc := range tests {
		ms, err := ParseDurationMillis(tc.text)
		if tc.err != "" {
			var usage *UsageError
			if !errors.As(err, &usage) || usage.Message != tc.err {
				t.Errorf("ParseDurationMillis(%q) error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || ms != tc.ms {
			t.Errorf("ParseDurationMillis(%q) = %v, %v; want %v", tc.text, ms, err, tc.ms)
		}
	}
}

func TestParseDuration(t *testing.T) {
	if d, err := ParseDuration("1h30m"); err != nil || d != 90*time.Minute {
		t.Errorf("ParseDuration(1h30m) = %v, %v", d, err)
	}
	var usage *UsageError
	if _, err := ParseDuration("999999999d"); !errors.As(err, &usage) {
		t.Errorf("a duration past time.Duration: error %v, want a UsageError", err)
	}
	// Past 100 years, as the engine refuses them, even past float64 (Infinity in JavaScript).
	for _, text := range []string{"99999999999999999999999d", strings.Repeat("9", 400) + "s"} {
		if _, err := ParseDurationMillis(text); !errors.As(err, &usage) {
			t.Errorf("ParseDurationMillis(%.20q...): error %v, want a UsageError", text, err)
		}
	}
}
