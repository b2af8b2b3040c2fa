package remote

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestStatusError(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{http.StatusUnauthorized, ErrAuth},
		{http.StatusForbidden, ErrAuth},
		{http.StatusTooManyRequests, ErrRateLimited},
		{http.StatusInternalServerError, ErrUnavailable},
		{http.StatusNotFound, ErrUnavailable},
	}
	for _, tt := range tests {
		e := StatusError("p", "op", tt.status, time.Second, "")
		if !errors.Is(e, tt.want) {
			t.Fatalf("%d: %v", tt.status, e)
		}
		if NotFound(e) != (tt.status == http.StatusNotFound) {
			t.Fatalf("%d: NotFound wrong", tt.status)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"12", 12 * time.Second},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0},
		{"soon", 0},
		{"-3", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Fatalf("%q: %s, want %s", tt.h, got, tt.want)
		}
	}
}
