// Package capture takes screenshots of a page and reads its content, over
// rod. Regions that cannot give a useful image are refused before anything
// is captured, with a reason that names the fix.
package capture

import "errors"

// ErrRefused matches every *RefusedError with errors.Is.
var ErrRefused = errors.New("capture refused")

// RefusalKind says why a call was refused, for callers and tests to branch on.
type RefusalKind string

// Refusal kinds.
const (
	// RefusedInvalid: options that cannot be honoured (bad type, quality,
	// selector syntax, more than one region).
	RefusedInvalid RefusalKind = "invalid"
	// RefusedNoMatch: the selector matched no element.
	RefusedNoMatch RefusalKind = "no_match"
	// RefusedManyMatches: the selector matched more than one element.
	RefusedManyMatches RefusalKind = "many_matches"
	// RefusedEmpty: the region has no area (a hidden or empty element).
	RefusedEmpty RefusalKind = "empty"
	// RefusedOffScreen: the region lies outside the page.
	RefusedOffScreen RefusalKind = "off_screen"
	// RefusedOverBudget: no image within the byte budget could be made.
	RefusedOverBudget RefusalKind = "over_budget"
	// RefusedDetached: the element is no longer in the page.
	RefusedDetached RefusalKind = "detached"
)

// RefusedError is a call refused before capture (or, for over_budget, after
// every smaller encoding was tried). Reason names the fix.
type RefusedError struct {
	Kind   RefusalKind
	Reason string
}

func (e *RefusedError) Error() string { return "capture refused (" + string(e.Kind) + "): " + e.Reason }

// Is makes errors.Is(err, ErrRefused) true for every refusal.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(kind RefusalKind, reason string) error {
	return &RefusedError{Kind: kind, Reason: reason}
}
