package activities

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// filing is one read to file as evidence.
type filing struct {
	tool    string
	args    any
	session string
	// callSuffix separates several bodies filed by one call.
	callSuffix string
	// callID, when set, replaces the activity id in the key: the body is
	// filed once whatever call files it (downloads).
	callID           string
	ext, contentType string
	body             []byte
	// file, when set, is the body: size bytes hashing to sha256, streamed.
	// verbatim files body as its bytes: a binary download is kept as the
	// site sent it, its key and digest those of the file on disk (a text
	// download is not verbatim: it is filed redacted, fileDownload).
	verbatim               bool
	file                   io.ReadSeeker
	size                   int64
	sha256                 string
	requestedURL, finalURL string
	title, extractor       string
	httpStatus             int
	// cut, when set, says the body is the first part of what was read.
	cut string
}

// file files a body and its receipt under keys derived from the workflow,
// session and activity ids, so a retried activity writes the same objects.
// It is the one way into the evidence store, through the worker's
// evidence.Filer, which redacts a text body and every receipt field: a
// caller hands over what it read as it read it.
func (a *Activities) file(ctx context.Context, f filing) (contract.ClaimCheck, error) {
	if a.o.Evidence == nil {
		return contract.ClaimCheck{}, errNoEvidence
	}
	wfID, runID, callID := "local", "", "call"
	receiptTime := a.o.Now()
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		wfID, runID, callID = info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID
		// The scheduled time is the same on every attempt, so a retry
		// writes identical receipt bytes.
		receiptTime = info.ScheduledTime
	}
	if f.callID != "" {
		callID = f.callID
	}
	if f.callSuffix != "" {
		callID += "-" + f.callSuffix
	}
	args, _ := json.Marshal(f.args)
	var mark *contract.RecordingMark
	a.mu.Lock()
	if s := a.sessions[f.session]; s != nil {
		mark = s.recordingMark()
	}
	a.mu.Unlock()
	cc, err := a.o.Evidence.File(ctx, evidence.Filing{
		WorkflowID:  wfID,
		SessionTag:  f.session,
		CallID:      callID,
		Tool:        f.tool,
		Ext:         f.ext,
		ContentType: f.contentType,
		Body:        f.body,
		File:        f.file,
		Size:        f.size,
		FileSHA256:  f.sha256,
		Verbatim:    f.verbatim,
		Receipt: contract.Receipt{
			Args:         args,
			Status:       "ok",
			RequestedURL: f.requestedURL,
			FinalURL:     f.finalURL,
			Title:        f.title,
			HTTPStatus:   f.httpStatus,
			Extractor:    f.extractor,
			Cut:          f.cut,
			RunID:        runID,
			ActivityID:   callID,
			Time:         receiptTime,
			Recording:    mark,
		},
	})
	return cc, err
}

var errNoEvidence = errors.New("no evidence store is configured")

func evidenceFailure(err error) *contract.Failure {
	return contract.Fail(contract.CodeBrowserUnavailable, "the read could not be filed as evidence, so it is not returned; it will be retried").WithDetail(err.Error())
}

// GetEvidence fetches a filed body by key, verified against its hash. It is
// for orchestrator workflows that need the bytes (for example to show a
// screenshot to a model); the body rides in this activity's result only,
// so keep it small or call it from a child workflow.
func (a *Activities) GetEvidence(ctx context.Context, req contract.GetEvidenceRequest) (*contract.GetEvidenceResult, error) {
	if a.o.Evidence == nil {
		return nil, contract.Fail(contract.CodeRefused, "no evidence store is configured on this worker")
	}
	defer a.heartbeat(ctx, nil)()
	body, rec, err := evidence.GetVerifiedMax(ctx, a.o.Evidence.Store, req.Key, contract.MaxEvidenceResult)
	if err != nil {
		var tl *evidence.TooLargeError
		if errors.As(err, &tl) {
			return nil, contract.Fail(contract.CodeRefused, "the body is %d bytes, over the %d a result may carry; fetch it with `durable-browser evidence get` instead", tl.Size, contract.MaxEvidenceResult)
		}
		if errors.Is(err, evidence.ErrNotFound) {
			return nil, contract.Fail(contract.CodeRefused, "no evidence at %s; use the key from a result's evidence.key", req.Key)
		}
		return nil, contract.Fail(contract.CodeCommandFailed, "evidence at %s could not be read or did not verify", req.Key).WithDetail(err.Error())
	}
	if len(body) > contract.MaxEvidenceResult {
		return nil, contract.Fail(contract.CodeRefused, "the body is %d bytes, over the %d a result may carry; fetch it with `durable-browser evidence get` instead", len(body), contract.MaxEvidenceResult)
	}
	return &contract.GetEvidenceResult{OK: true, Body: body, Receipt: rec}, nil
}
