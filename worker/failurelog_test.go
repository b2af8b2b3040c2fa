package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
)

// A failure the model caused is logged at info with its code, and is benign
// to the SDK (which then logs it at debug, not as "Activity error." at
// error); one an operator must act on is a warning and stays an error to
// the SDK.
func TestFailureLogLevels(t *testing.T) {
	cases := []struct {
		code   contract.Code
		level  string
		benign bool
	}{
		{contract.CodeStaleSnapshot, "info", true},
		{contract.CodeRefused, "info", true},
		{contract.CodeTimeout, "info", true},
		{contract.CodeBrowserUnavailable, "warn", false},
		{contract.CodeEffectUnknown, "warn", false},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		err := envelope.Error(contract.Fail(c.code, "what happened"))
		logFailure(zerolog.New(&buf), activity.Info{ActivityID: "7"}, err)
		var line map[string]any
		if jerr := json.Unmarshal(buf.Bytes(), &line); jerr != nil {
			t.Fatalf("%s: log %q: %v", c.code, buf.String(), jerr)
		}
		if line["level"] != c.level || line["code"] != string(c.code) {
			t.Errorf("%s: logged %v, want level %s with the code", c.code, line, c.level)
		}
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || (app.Category() == temporal.ApplicationErrorCategoryBenign) != c.benign {
			t.Errorf("%s: category %v, want benign %v", c.code, app.Category(), c.benign)
		}
	}
}
