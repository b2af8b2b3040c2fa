package worker

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/browserbase"
	"github.com/durable-browser/durable-browser/providers/kernel"
)

// rentedProviders builds the providers --providers enables, their keys read
// from the environment. A provider chosen without its key is refused by
// name. It also answers the services' API addresses, which the worker's
// browsers must never reach.
func rentedProviders(cfg config.Worker, getenv func(string) string, log zerolog.Logger) (map[string]providers.Provider, []netguard.Service, error) {
	out := map[string]providers.Provider{}
	var svcs []netguard.Service
	add := func(name, addr string) {
		if s, ok := netguard.ServiceFromAddress(name, addr); ok {
			svcs = append(svcs, s)
		}
	}
	for _, name := range cfg.RentedProviders() {
		switch name {
		case browserbase.Name:
			o, err := browserbase.FromEnv(browserbase.Options{
				Lifetime: cfg.Browserbase.Lifetime, Region: cfg.Browserbase.Region,
				Proxies: cfg.Browserbase.Proxies, AdvancedStealth: cfg.Browserbase.AdvancedStealth, Logger: log,
			}, getenv)
			if err != nil {
				return nil, nil, &config.Error{Flag: "providers", Problem: err.Error(), Fix: "set " + browserbase.EnvAPIKey + " and " + browserbase.EnvProjectID + ", or leave browserbase out of --providers"}
			}
			p, err := browserbase.New(o)
			if err != nil {
				return nil, nil, &config.Error{Flag: "providers", Problem: err.Error()}
			}
			out[name] = p
			add("Browserbase API", orDefault(o.BaseURL, browserbase.DefaultBaseURL))
		case kernel.Name:
			o, err := kernel.FromEnv(kernel.Options{IdleTimeout: cfg.Kernel.IdleTimeout, Headless: cfg.Kernel.Headless, Logger: log}, getenv)
			if err != nil {
				return nil, nil, &config.Error{Flag: "providers", Problem: err.Error(), Fix: "set " + kernel.EnvAPIKey + ", or leave kernel out of --providers"}
			}
			p, err := kernel.New(o)
			if err != nil {
				return nil, nil, &config.Error{Flag: "providers", Problem: err.Error()}
			}
			out[name] = p
			add("Kernel API", orDefault(o.BaseURL, kernel.DefaultBaseURL))
		default:
			return nil, nil, &config.Error{Flag: "providers", Problem: fmt.Sprintf("unknown provider %q", name), Fix: "use browserbase and/or kernel (local is always on; cdp comes with --cdp-endpoint)"}
		}
	}
	return out, svcs, nil
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
