package netguard

import (
	"strings"
	"testing"
)

// FuzzValidateHostList: whatever list an operator or orchestrator gives,
// ValidateHostList never panics, and a list it accepts holds only entries
// the guard reads as a host: an address, or a valid name (under "*.")
// without scheme, port, path or wildcard elsewhere; an accepted entry
// matches its own host.
func FuzzValidateHostList(f *testing.F) {
	f.Add("shop.example,*.corp,10.0.0.5")
	f.Add("http://x.example")
	f.Add("*.,[::1],0x7f.1")
	f.Add(" ,a b")
	f.Fuzz(func(t *testing.T, list string) {
		entries := strings.Split(list, ",")
		if ValidateHostList(entries) != nil {
			return
		}
		for _, e := range entries {
			e = strings.TrimSpace(e)
			name, wild := strings.CutPrefix(e, "*.")
			h := ParseHost(name)
			if h.Invalid || h.Name == "" {
				t.Fatalf("accepted %q, which the guard reads as no host", e)
			}
			if wild && h.Addr.IsValid() {
				t.Fatalf("accepted a wildcard over an address: %q", e)
			}
			if !h.Addr.IsValid() && strings.ContainsAny(h.Name, "/:@ ?#*[]%\\") {
				t.Fatalf("accepted %q, which is not a name", e)
			}
			if !wild && !matchHosts([]string{e}, h) {
				t.Fatalf("accepted %q, which does not match its own host", e)
			}
		}
	})
}
