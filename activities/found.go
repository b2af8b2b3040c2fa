package activities

import (
	"context"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
)

// finder is what a provider that can look a tag up without adopting its
// browser offers (local.Provider and cdp.Provider do).
type finder interface {
	Find(ctx context.Context, tag string) (*providers.Session, error)
}

// refuseFound is the failure for a create that found its tag's browser made
// with other options. The found browser is left as it is: it is the tag's,
// and whoever made it may still be using it.
func refuseFound(tag string, diff []string) *contract.Failure {
	return contract.Fail(contract.CodeRefused,
		"session %s already has a browser, made with other options: %s. Release that session first (browser_release, or close it), or open this one under another session id",
		tag, strings.Join(diff, "; "))
}

// checkFound refuses a found browser whose options differ from want. A
// browser whose provider kept no options (made before they were kept) is
// taken as it is.
func checkFound(tag string, want contract.SessionOptions, made *contract.SessionOptions) *contract.Failure {
	if made == nil {
		return nil
	}
	if diff := contract.OptionsDiffer(want, *made, nil, "browser"); len(diff) > 0 {
		return refuseFound(tag, diff)
	}
	return nil
}
