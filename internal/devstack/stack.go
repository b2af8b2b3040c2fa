package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-browser/durable-browser/internal/demosite"
)

// StackOptions configures the whole embedded dev stack.
type StackOptions struct {
	// StateDir holds the SQLite file, the S3 directory and browser profiles.
	StateDir        string
	TemporalAddress string
	UIAddress       string // empty: no UI
	S3Address       string
	DemoAddress     string
	Namespace       string
	Bucket          string
	// S3Binary is versitygw's path; empty means discover it.
	S3Binary         string
	SearchAttributes map[string]enumspb.IndexedValueType
	Logger           zerolog.Logger
}

// Stack is the running dev stack: Temporal, its UI, S3 and the demo site.
type Stack struct {
	Temporal *Temporal
	UI       *UI
	S3       *S3
	Demo     *demosite.Server
	log      zerolog.Logger
}

// StartStack starts every part, checking all ports first so a taken one is
// refused before anything starts. On error nothing is left running.
func StartStack(ctx context.Context, o StackOptions) (_ *Stack, err error) {
	if o.StateDir == "" {
		return nil, errors.New("dev stack: no state directory")
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", o.StateDir, err)
	}
	for flag, addr := range map[string]string{"temporal-address": o.TemporalAddress, "ui-address": o.UIAddress, "s3-address": o.S3Address, "demo-address": o.DemoAddress} {
		if addr == "" || addr == "127.0.0.1:0" {
			continue
		}
		if err := CheckPortFree(addr); err != nil {
			var pt *PortTakenError
			if errors.As(err, &pt) {
				pt.Flag = flag
			}
			return nil, err
		}
	}
	s := &Stack{log: o.Logger}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	s.S3, err = StartS3(ctx, S3Options{
		Binary:    o.S3Binary,
		Address:   o.S3Address,
		Dir:       filepath.Join(o.StateDir, "s3"),
		AccessKey: DefaultS3AccessKey,
		SecretKey: DefaultS3SecretKey,
		Bucket:    o.Bucket,
		Logger:    o.Logger,
	})
	if err != nil {
		return nil, err
	}
	s.Temporal, err = StartTemporal(ctx, TemporalOptions{
		DatabaseFile:     filepath.Join(o.StateDir, "temporal.db"),
		Address:          o.TemporalAddress,
		Namespace:        o.Namespace,
		SearchAttributes: o.SearchAttributes,
		Logger:           o.Logger,
	})
	if err != nil {
		return nil, err
	}
	if o.UIAddress != "" {
		s.UI, err = StartUI(ctx, UIOptions{Address: o.UIAddress, TemporalAddress: o.TemporalAddress, Namespace: o.Namespace})
		if err != nil {
			return nil, err
		}
	}
	s.Demo, err = demosite.Listen(o.DemoAddress)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Stop stops every part in reverse order; safe to call more than once.
func (s *Stack) Stop() {
	if s.Demo != nil {
		_ = s.Demo.Close()
		s.Demo = nil
	}
	if s.UI != nil {
		s.UI.Stop()
		s.UI = nil
	}
	if s.Temporal != nil {
		s.Temporal.Stop()
		s.Temporal = nil
	}
	if s.S3 != nil {
		_ = s.S3.Stop()
		s.S3 = nil
	}
}
