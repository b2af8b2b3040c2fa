package activities

import (
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestCreateOpensOnlyGrantedProfiles(t *testing.T) {
	shop := contract.Profile{Name: "shop"}
	shopSave := contract.Profile{Name: "shop", Save: true}
	cases := []struct {
		name    string
		worker  []contract.Profile // --profile-grants
		grants  []contract.Profile // the host's, in the request
		profile *contract.Profile  // what is asked for
		refused bool
	}{
		{"no profile needs no grant", nil, nil, nil, false},
		{"not granted anywhere", nil, nil, &shop, true},
		{"granted by the session", nil, []contract.Profile{shop}, &shop, false},
		{"granted by the worker", []contract.Profile{shop}, nil, &shop, false},
		{"a copy grant does not allow saving", []contract.Profile{shop}, []contract.Profile{shop}, &shopSave, true},
		{"a save grant allows saving", nil, []contract.Profile{shopSave}, &shopSave, false},
		{"a save grant allows a copy", []contract.Profile{shopSave}, nil, &shop, false},
		{"another profile's grant", []contract.Profile{{Name: "mail"}}, []contract.Profile{{Name: "bank"}}, &shop, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.ProfileGrants = tc.worker })
			_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{
				Tag: "t-1", Options: contract.SessionOptions{Profile: tc.profile}, Grants: tc.grants,
			})
			created, _ := h.prov.calls()
			if !tc.refused {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			f := wantCode(t, err, contract.CodeRefused, false)
			if !strings.Contains(f.Message, `"shop"`) || !strings.Contains(f.Message, "--profile-grants") {
				t.Fatalf("refusal does not name the profile and the way out: %s", f.Message)
			}
			if len(created) != 0 {
				t.Fatalf("the provider was asked for %v", created)
			}
		})
	}
}

func TestCreatePassesReplacesToProvider(t *testing.T) {
	h := newHarness(t, nil)
	shop := contract.Profile{Name: "shop"}
	if _, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{
		Tag: "t-2", Options: contract.SessionOptions{Profile: &shop}, Grants: []contract.Profile{shop}, Replaces: "t-1",
	}); err != nil {
		t.Fatal(err)
	}
	h.prov.mu.Lock()
	got := h.prov.created[0]
	h.prov.mu.Unlock()
	if got.Replaces != "t-1" || got.Profile == nil || got.Profile.Name != "shop" {
		t.Fatalf("provider create options = %+v", got)
	}
}
