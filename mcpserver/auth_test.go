package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRequireBearer(t *testing.T) {
	const token = "s3cret-token-0123456789"
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, tc := range []struct {
		name, server, header string
		want                 int
	}{
		{"right token", token, "Bearer " + token, http.StatusTeapot},
		{"scheme in any case", token, "bearer " + token, http.StatusTeapot},
		{"no header", token, "", http.StatusUnauthorized},
		{"wrong token", token, "Bearer s3cret-token-0123456780", http.StatusUnauthorized},
		{"a prefix of the token", token, "Bearer " + token[:10], http.StatusUnauthorized},
		{"the token and more", token, "Bearer " + token + "x", http.StatusUnauthorized},
		{"another scheme", token, "Basic " + token, http.StatusUnauthorized},
		{"the bare token", token, token, http.StatusUnauthorized},
		{"scheme only", token, "Bearer ", http.StatusUnauthorized},
		{"no server token refuses all", "", "Bearer ", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			requireBearer(tc.server, ok).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if tc.want == http.StatusUnauthorized {
				if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") || !strings.Contains(w.Body.String(), "Authorization: Bearer") {
					t.Fatalf("a refusal should say how to authenticate: %q %q", w.Header(), w.Body)
				}
				if strings.Contains(w.Body.String(), token) {
					t.Fatal("the refusal shows the token")
				}
			}
		})
	}
}

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{NewToken(), true},
		{"0123456789abcdef", true},
		{"short", false},
		{"0123456789 abcdef", false},
		{"0123456789abcdef\n", false},
		{"0123456789abcdéf", false},
	} {
		if err := CheckToken(tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckToken(%q) = %v, want ok %v", tc.token, err, tc.ok)
		}
	}
	if a, b := NewToken(), NewToken(); a == b || len(a) < MinTokenLength {
		t.Fatalf("NewToken: %q %q", a, b)
	}
}
