package driver

import (
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/states"
)

// A checkpoint tab is loaded again only when its page was reached by GET:
// nothing a POST sent is sent twice, and a withheld address stays out.
func TestNotReloaded(t *testing.T) {
	for _, c := range []struct {
		tab  states.Tab
		want string // "" loads; else a word of the reason
	}{
		{states.Tab{URL: "https://shop.example/search?q=lamp", Method: "GET"}, ""},
		{states.Tab{URL: "about:blank"}, ""},
		{states.Tab{URL: "https://shop.example/order", Method: "POST"}, "POST"},
		{states.Tab{URL: "https://shop.example/x"}, "not known"},
		{states.Tab{URL: "about:blank", Method: MethodWithheld}, "secret"},
		{states.Tab{URL: "chrome-error://chromewebdata/", Method: "GET"}, "not a web page"},
	} {
		got := notReloaded(c.tab)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("notReloaded(%+v) = %q, want %q", c.tab, got, c.want)
		}
	}
}
