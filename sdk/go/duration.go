package hyperspool

import (
	"math"
	"strconv"
	"strings"
	"time"

	"hyperspool.dev/go/internal/nodecompat"
)

var unitMillis = map[string]float64{
	"ms": 1,
	"s":  1000,
	"m":  60_000,
	"h":  3_600_000,
	"d":  86_400_000,
}

// MaxDurationMillis is the longest duration anything takes: 100 years, as the engine checks it.
const MaxDurationMillis = 36_525 * 86_400_000

// ParseDurationMillis reads a duration as the verbs take it: 500ms, 30s, 5m, 2h, 14d, or a
// combination such as 1h30m; a part may have a fraction (1.5h). It returns whole milliseconds
// as a float64, the number the Node client sends, which may be past what a time.Duration holds.
// The error is a *UsageError.
func ParseDurationMillis(text string) (float64, error) {
	trimmed := nodecompat.TrimSpace(text)
	if trimmed == "" {
		return 0, &UsageError{"empty duration; use a form like 30s, 5m, 2h, 14d or 1h30m"}
	}
	if trimmed[0] == '-' {
		return 0, &UsageError{"a duration cannot be negative: '" + text + "'"}
	}
	total := 0.0
	for rest := trimmed; rest != ""; {
		n, unit, size := durationPart(rest)
		if size == 0 {
			return 0, &UsageError{"bad duration '" + text + "'; use a form like 500ms, 30s, 5m, 2h, 14d or 1h30m"}
		}
		total += n * unitMillis[unit]
		rest = rest[size:]
	}
	if total > MaxDurationMillis {
		return 0, &UsageError{"duration '" + text + "' is too long; the longest is 36525d (100 years)"}
	}
	return roundHalfUp(total), nil
}

// ParseDuration is ParseDurationMillis as a time.Duration.
func ParseDuration(text string) (time.Duration, error) {
	ms, err := ParseDurationMillis(text)
	if err != nil {
		return 0, err
	}
	if ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, &UsageError{"duration '" + text + "' is too long"}
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// durationPart reads one number and unit at the start of s, returning its size in bytes (0 when
// s does not start with one). Digits are ASCII, and a fraction needs a digit after its point.
func durationPart(s string) (value float64, unit string, size int) {
	i := digits(s, 0)
	if i == 0 {
		return 0, "", 0
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		}
	}
	switch {
	case strings.HasPrefix(s[i:], "ms"):
		unit = "ms"
	case i < len(s) && strings.IndexByte("smhd", s[i]) >= 0:
		unit = s[i : i+1]
	default:
		return 0, "", 0
	}
	value, _ = strconv.ParseFloat(s[:i], 64) // ±Inf for absurd lengths, as Number() gives
	return value, unit, i + len(unit)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// roundHalfUp is Math.round: halves go up.
func roundHalfUp(x float64) float64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r
}
