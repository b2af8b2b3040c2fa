package evidence

import (
	"context"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// Filer is a worker's one way into its evidence store, and evidence holds no
// secret: File redacts a text body and the receipt's fields before filing,
// so a caller hands over what it read as it read it. Reads and other writes
// (the recorder's chunks) use Store itself.
type Filer struct {
	Store Store
	// Redactor hides the worker's secrets; nil hides credential shapes only.
	Redactor *redact.Redactor
}

// File files f (see the function File) once redacted: a text body, and the
// receipt's Args, RequestedURL, FinalURL (scrubbed as page URLs) and Title.
// A PDF, an image, a Verbatim body or a streamed File is filed as its bytes:
// redacting inside them would corrupt them, and their digest must match
// what was read.
func (fl *Filer) File(ctx context.Context, f Filing) (contract.ClaimCheck, error) {
	if f.File == nil && !f.Verbatim && textual(f.ContentType) {
		f.Body = fl.Redactor.Bytes(f.Body)
	}
	r := &f.Receipt
	r.Args = fl.Redactor.JSON(r.Args)
	r.RequestedURL = fl.Redactor.URL(r.RequestedURL)
	r.FinalURL = fl.Redactor.URL(r.FinalURL)
	r.Title = fl.Redactor.String(r.Title)
	return File(ctx, fl.Store, f)
}

// textual says a body of this content type is text that may be redacted
// in place: anything but a PDF or an image.
func textual(contentType string) bool {
	ct := strings.ToLower(contentType)
	return !strings.Contains(ct, "pdf") && !strings.HasPrefix(ct, "image/")
}
