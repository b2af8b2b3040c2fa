package deploy

import (
	"testing"
	"time"

	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
)

// The compose stack's Temporal reads deploy/compose/dynamicconfig.yaml:
// read it as that server does and check it sets what dev sets (a key or a
// value the server does not take would leave the default silently).
func TestComposeDynamicConfig(t *testing.T) {
	done := make(chan any)
	defer close(done)
	fc, err := dynamicconfig.NewFileBasedClient(&dynamicconfig.FileBasedClientConfig{
		Filepath: "compose/dynamicconfig.yaml", PollInterval: time.Minute}, log.NewNoopLogger(), done)
	if err != nil {
		t.Fatal(err)
	}
	dc := dynamicconfig.NewCollection(fc, log.NewNoopLogger())
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"frontend.keepAliveTime", dynamicconfig.KeepAliveTime.Get(dc)(), 2 * time.Second},
		{"frontend.keepAliveTimeout", dynamicconfig.KeepAliveTimeout.Get(dc)(), 3 * time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s: the server reads %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := dynamicconfig.TransferProcessorMaxPollRPS.Get(dc)(); got != 10000 {
		t.Errorf("history.transferProcessorMaxPollRPS: the server reads %d, want 10000", got)
	}
}
