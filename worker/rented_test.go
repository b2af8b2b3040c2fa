package worker

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
)

func TestRentedProviders(t *testing.T) {
	full := map[string]string{
		"BROWSERBASE_API_KEY": "bb", "BROWSERBASE_PROJECT_ID": "proj", "BROWSERBASE_BASE_URL": "http://127.0.0.1:9/",
		"KERNEL_API_KEY": "k",
	}
	tests := []struct {
		name, providers string
		env             map[string]string
		wantErr         string
		want            []string
	}{
		{name: "none", providers: "", env: nil},
		{name: "browserbase without key", providers: "browserbase", env: nil, wantErr: "BROWSERBASE_API_KEY"},
		{name: "browserbase without project", providers: "browserbase", env: map[string]string{"BROWSERBASE_API_KEY": "x"}, wantErr: "BROWSERBASE_PROJECT_ID"},
		{name: "kernel without key", providers: "kernel", env: nil, wantErr: "KERNEL_API_KEY"},
		{name: "unknown", providers: "nimbus", env: full, wantErr: "unknown provider"},
		{name: "both", providers: "browserbase, Kernel", env: full, want: []string{"browserbase", "kernel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Worker{Providers: tt.providers}
			got, svcs, err := rentedProviders(cfg, func(k string) string { return tt.env[k] }, zerolog.Nop())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) || len(svcs) != len(tt.want) {
				t.Fatalf("providers %v services %v, want %v", got, svcs, tt.want)
			}
			for _, n := range tt.want {
				if got[n] == nil {
					t.Fatalf("%s not built", n)
				}
			}
		})
	}
	if p, err := config.ParsePrices("browserbase=0.002, kernel=0.0016"); err != nil || p["kernel"] != 0.0016 {
		t.Fatalf("prices: %v %v", p, err)
	}
	if _, err := config.ParsePrices("browserbase"); err == nil {
		t.Fatal("a price without a value was taken")
	}
}
