package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		tool string
		args any
		want string
	}{
		{ToolSnapshot, SnapshotArgs{Mode: "interactive"}, "snapshot interactive"},
		{ToolSnapshot, SnapshotArgs{}, "snapshot full"},
		{ToolSnapshot, SnapshotArgs{Mode: "full", Scope: "[12]", Since: 3}, "snapshot full of [12] since epoch 3"},
		{ToolRun, RunArgs{Actions: json.RawMessage(`[{"op":"goto","url":"https://user:pw@shop.example/login?token=abc#frag"}]`)}, "goto shop.example/login?…"},
		{ToolRun, RunArgs{Actions: json.RawMessage(`[{"op":"fill","id":"10","value":"ann@example.com"},{"op":"click","locator":{"role":"button","name":"Create account"}},{"op":"press","key":"Enter"},{"op":"wait","ms":200}]`)},
			`fill [10] · click button "Create account" · press Enter · wait 200ms`},
		{ToolRun, RunArgs{Actions: json.RawMessage(`[{"op":"type","locator":{"label":"Password"},"text":"{{secret:SHOP_PASSWORD}}"}]`)}, `type label "Password"`},
		{ToolRun, RunArgs{Code: "const a = 1;\nreturn a;\n"}, "code cell (2 lines)"},
		{ToolScreenshot, ScreenshotArgs{FullPage: true}, "screenshot full page"},
		{ToolScreenshot, ScreenshotArgs{ID: "4", Type: "jpeg"}, "screenshot of [4] (jpeg)"},
		{ToolRead, ReadArgs{}, "read markdown"},
		{ToolUpload, UploadArgs{ID: "7", Path: "invoices/2026/invoice.pdf"}, `upload "invoice.pdf" into [7]`},
		{ToolCheck, CheckArgs{URL: "https://u:p@h.example/*/done?x=1", ExpectText: "Thanks", NoConsoleErrors: true}, "check url https://h.example/*/done?…, text, no console errors"},
		{ToolRelease, ReleaseArgs{}, "release"},
		{ToolRelaunch, RelaunchArgs{Profile: &Profile{Name: "shop"}}, `relaunch with profile "shop"`},
		{ToolRequestHandoff, HandoffArgs{Instruction: "Sign in with 2FA"}, `ask a person: "Sign in with 2FA"`},
		{ToolWebFetch, WebFetchArgs{URL: "https://docs.example/a/b?key=sk-123"}, "fetch docs.example/a/b?…"},
		{ToolWebSearch, WebSearchArgs{Query: "private words from a page"}, "web search (5 words)"},
		{ToolDownloads, DownloadsArgs{}, "list downloads"},
		{"nope", nil, "nope"},
		{ToolSnapshot, &SnapshotArgs{Mode: "interactive"}, "snapshot interactive"},
	}
	for _, tt := range tests {
		if got := Summary(tt.tool, tt.args); got != tt.want {
			t.Errorf("Summary(%s, %+v) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}

// A long batch names what fits and counts the rest, within MaxSummary.
func TestSummaryLongBatch(t *testing.T) {
	var acts []map[string]any
	for range 30 {
		acts = append(acts, map[string]any{"op": "click", "locator": map[string]string{"role": "link", "name": strings.Repeat("n", 60)}})
	}
	raw, _ := json.Marshal(acts)
	got := Summary(ToolRun, RunArgs{Actions: raw})
	if utf8.RuneCountInString(got) > MaxSummary {
		t.Fatalf("summary of %d runes, over %d: %q", utf8.RuneCountInString(got), MaxSummary, got)
	}
	if !strings.HasPrefix(got, `click link "`) || !strings.HasSuffix(got, ")") || !strings.Contains(got, "(+") {
		t.Fatalf("want the first actions and a count of the rest, got %q", got)
	}
}

// FuzzSummary: whatever a model writes as a typed value, a query value or a
// fragment never reaches the summary, which stays one bounded line.
func FuzzSummary(f *testing.F) {
	f.Add("hunter2-secret-value", "https://a.example/p?q=v#f")
	f.Add("line\nbreak", "http://[::1]:80/x?y")
	f.Fuzz(func(t *testing.T, value, rawURL string) {
		marker := "Zq9" + value + "9qZ"
		acts, _ := json.Marshal([]map[string]any{
			{"op": "fill", "id": "1", "value": marker},
			{"op": "type", "id": "2", "text": marker},
			{"op": "select", "id": "3", "values": []string{marker}},
			{"op": "goto", "url": rawURL + "?k=" + marker + "#" + marker},
		})
		for _, s := range []string{
			Summary(ToolRun, RunArgs{Actions: acts}),
			Summary(ToolWebFetch, WebFetchArgs{URL: "https://h.example/?t=" + marker}),
			Summary(ToolWebSearch, WebSearchArgs{Query: marker}),
			Summary(ToolCheck, CheckArgs{ExpectText: marker}),
		} {
			if strings.Contains(s, marker) {
				t.Fatalf("summary %q holds the value %q", s, marker)
			}
			if utf8.RuneCountInString(s) > MaxSummary || strings.ContainsAny(s, "\n\r") {
				t.Fatalf("summary not one bounded line: %q", s)
			}
		}
	})
}
