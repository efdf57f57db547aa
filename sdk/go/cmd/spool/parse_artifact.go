package main

import (
	"strings"

	hyperspool "hyperspool.dev/go"
)

// artifactEnd is a put's Source or a get's Dest, as the Node client's ScriptCall.artifact has it.
type artifactEnd struct {
	Source  *string `json:"source,omitempty"`
	Dest    *string `json:"dest,omitempty"`
	Extract *string `json:"extract,omitempty"`
}

// checkoutArtifact is the artifact that holds a run's checkout bundle (CHECKOUT_ARTIFACT).
const checkoutArtifact = "spool/checkout.tar"

// parseCheckout is `spool checkout [DEST]`: the run's bundle, unpacked into DEST (default ".").
func parseCheckout(args []string) (*scriptCall, error) {
	parsed, err := parse("checkout", args, nil, 0, 1)
	if err != nil {
		return nil, err
	}
	dest := "."
	if len(parsed.positionals) > 0 {
		dest = parsed.positionals[0]
	}
	request := hyperspool.NewRequest("artifact.get").With("name", checkoutArtifact).With("part", 0)
	return &scriptCall{request: request, artifact: &artifactEnd{Extract: &dest}}, nil
}

// lastPart is the last part of an artifact's name: where `artifact get NAME` writes when given
// no DEST.
func lastPart(name string) string {
	last := ""
	for _, part := range strings.Split(name, "/") {
		if part != "" && part != "." && part != ".." {
			last = part
		}
	}
	return last
}

func parseArtifact(args []string) (*scriptCall, error) {
	sub, rest := first(args)
	switch sub {
	case "put":
		parsed, err := parse("artifact put", rest, optionSpec{"type": stringOption}, 2, 2)
		if err != nil {
			return nil, err
		}
		request := hyperspool.NewRequest("artifact.put").With("name", parsed.positionals[0])
		if contentType, _ := parsed.str("type"); contentType != "" {
			request.With("contentType", contentType)
		}
		source := parsed.positionals[1]
		return &scriptCall{request: request, artifact: &artifactEnd{Source: &source}}, nil
	case "get":
		parsed, err := parse("artifact get", rest, optionSpec{"run": stringOption}, 1, 2)
		if err != nil {
			return nil, err
		}
		name := parsed.positionals[0]
		dest := lastPart(name)
		if len(parsed.positionals) > 1 {
			dest = parsed.positionals[1]
		}
		if dest == "" {
			return nil, usageFailure("artifact get", "'"+name+"' names no file to write to; give a DEST")
		}
		request := hyperspool.NewRequest("artifact.get").With("name", name).With("part", 0)
		if run, _ := parsed.str("run"); run != "" {
			request.With("run", run)
		}
		return &scriptCall{request: request, artifact: &artifactEnd{Dest: &dest}}, nil
	case "list":
		parsed, err := parse("artifact list", rest, optionSpec{"run": stringOption, "json": boolOption}, 0, 0)
		if err != nil {
			return nil, err
		}
		request := hyperspool.NewRequest("artifact.list")
		if run, _ := parsed.str("run"); run != "" {
			request.With("run", run)
		}
		if parsed.bools["json"] {
			request.With("json", true)
		}
		return &scriptCall{request: request}, nil
	}
	return nil, usageFailure("artifact", "unknown artifact command '"+sub+"'; use put, get or list")
}
