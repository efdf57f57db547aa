package hyperspool

import (
	"encoding/json"
	"math"
	"testing"
)

func TestRequestMarshalsAsJSONStringify(t *testing.T) {
	tests := []struct {
		request *Request
		want    string
	}{
		{NewRequest("step").With("name", "a\"b\\c\n\t\b\f\r\x01\x1f<>&\u2028\x7f"),
			"{\"verb\":\"step\",\"name\":\"a\\\"b\\\\c\\n\\t\\b\\f\\r\\u0001\\u001f<>&\u2028\x7f\"}"},
		{NewRequest("done").With("position", int64(3)).With("stdout", "").With("exitCode", 0),
			`{"verb":"done","position":3,"stdout":"","exitCode":0}`},
		{NewRequest("sleep").With("ms", 1e21), `{"verb":"sleep","ms":1e+21}`},
		{NewRequest("sleep").With("ms", 1e-7), `{"verb":"sleep","ms":1e-7}`},
		{NewRequest("sleep").With("ms", math.Inf(1)), `{"verb":"sleep","ms":null}`},
		{NewRequest("state.incr").With("by", math.Copysign(0, -1)), `{"verb":"state.incr","by":0}`},
		{NewRequest("state.cas").With("expected", nil), `{"verb":"state.cas","expected":null}`},
		{NewRequest("activity.run").With("requires", []string{}).With("retryOnExit", []float64(nil)),
			`{"verb":"activity.run","requires":[],"retryOnExit":null}`},
		{NewRequest("event.emit").With("payload", json.RawMessage(`{"b": 1, "2": 0.50, "1": [1E2, -0]}`)),
			`{"verb":"event.emit","payload":{"1":[100,0],"2":0.5,"b":1}}`},
		{NewRequest("annotate").With("text", "bad \xff\xfe \xe2\x82!"), "{\"verb\":\"annotate\",\"text\":\"bad \uFFFD\uFFFD \uFFFD!\"}"},
	}
	for _, tc := range tests {
		got, err := tc.request.MarshalJSON()
		if err != nil || string(got) != tc.want {
			t.Errorf("got %s (%v)\nwant %s", got, err, tc.want)
		}
	}
	if _, err := NewRequest("x").With("payload", json.RawMessage(`{`)).MarshalJSON(); err == nil {
		t.Error("invalid JSON in a RawMessage field is refused")
	}
}

func TestAnswerCode(t *testing.T) {
	var a Answer
	if err := json.Unmarshal([]byte(`{"status":"ok","stdout":"x"}`), &a); err != nil || a.Code() != 0 {
		t.Errorf("no exitCode means 0: %v %v", a.Code(), err)
	}
	if err := json.Unmarshal([]byte(`{"status":"error","kind":"usage","message":"m","exitCode":2}`), &a); err != nil || a.Code() != 2 || a.Kind != ErrorKindUsage {
		t.Errorf("exitCode 2: %+v %v", a, err)
	}
}
