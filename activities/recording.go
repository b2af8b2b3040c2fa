package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/recorder"
)

// startRecording starts the session's recorder (SessionOptions.record) on
// the page the driver made active. A recording that cannot start leaves the
// session usable and says so in the log; nothing is recorded then.
func (a *Activities) startRecording(ctx context.Context, s *liveSession, workflowID string) {
	log := a.logger(ctx, s.ref.Tag)
	if a.o.Evidence == nil || s.sess == nil || s.sess.CDPURL == "" {
		log.Warn().Msg("recording asked for, but this session has no DevTools address or no evidence store: not recorded")
		return
	}
	target := activeTarget(s.browser)
	if target == "" {
		target = s.sess.TargetID
	}
	rec, err := recorder.Start(ctx, recorder.Options{CDPURL: s.sess.CDPURL, TargetID: target, Store: a.o.Evidence.Store,
		WorkflowID: workflowID, SessionTag: s.ref.Tag, Logger: a.logger(ctx, s.ref.Tag)})
	if err != nil {
		log.Error().Err(err).Msg("starting the recorder: this session is not recorded")
		return
	}
	s.rec.Store(rec)
	log.Info().Str("recording", rec.ID()).Msg("recording the session")
}

// stopRecording files the rest of s's recording, which ended for reason.
func (s *liveSession) stopRecording(reason string) {
	if rec := s.rec.Swap(nil); rec != nil {
		_ = rec.Close(reason)
	}
}

// followActiveTab moves s's recording to the tab the driver made active.
func (s *liveSession) followActiveTab(ctx context.Context) {
	if rec := s.rec.Load(); rec != nil {
		rec.Follow(activeTarget(s.browser))
	}
}

// recordingMark is where now falls in s's recording, for a receipt.
func (s *liveSession) recordingMark() *contract.RecordingMark {
	rec := s.rec.Load()
	if rec == nil {
		return nil
	}
	m := rec.Offset()
	return &contract.RecordingMark{Recording: m.Recording, OffsetMS: m.OffsetMS}
}

// holdSecretFrames keeps the recording's frames out while actions type a
// {{secret:NAME}}, and until the page no longer shows its value.
func (s *liveSession) holdSecretFrames(actions []driver.Action) (release func()) {
	rec := s.rec.Load()
	if rec == nil {
		return func() {}
	}
	var values []string
	for _, act := range actions {
		for _, sec := range act.Secrets {
			values = append(values, sec.Value)
		}
	}
	if len(values) == 0 {
		return func() {}
	}
	return rec.HoldSecrets(values)
}

// activeTarget is the target id of the tab the driver works on.
func activeTarget(b Browser) string {
	target, _ := b.ActiveTarget()
	return target
}

// workflowIDOf is the workflow a call belongs to, which places its
// evidence ("local" outside an activity, as for filing).
func workflowIDOf(ctx context.Context) string {
	if activity.IsActivity(ctx) {
		return activity.GetInfo(ctx).WorkflowExecution.ID
	}
	return "local"
}
