//go:build !crashhooks

package worker

import (
	"github.com/rs/zerolog"
	"go.temporal.io/sdk/interceptor"
)

// crashHooks is empty outside the crash matrix's build (crashhook.go).
func crashHooks(zerolog.Logger) []interceptor.WorkerInterceptor { return nil }
