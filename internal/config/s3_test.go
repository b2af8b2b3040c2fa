package config

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateS3(t *testing.T) {
	cases := []struct {
		name string
		s3   S3
		flag string // "" when valid
	}{
		{"ok", S3{Bucket: "b"}, ""},
		{"ok endpoint", S3{Bucket: "b", Endpoint: "http://127.0.0.1:9000"}, ""},
		{"no bucket", S3{}, "s3-bucket"},
		{"endpoint without scheme", S3{Bucket: "b", Endpoint: "127.0.0.1:9000"}, "s3-endpoint"},
	}
	for _, c := range cases {
		err := ValidateS3(c.s3)
		var ce *Error
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.flag != "" && (!errors.As(err, &ce) || ce.Flag != c.flag || ce.Fix == ""):
			t.Errorf("%s: want a fix for --%s, got %v", c.name, c.flag, err)
		}
	}
}

// BindS3 gives readers the worker's S3 flags and environment variables.
func TestBindS3SharedWithWorker(t *testing.T) {
	env := map[string]string{"DURABLE_BROWSER_S3_BUCKET": "from-env"}
	r := NewSet("reader", func(k string) string { return env[k] })
	var s3 S3
	BindS3(r, &s3)
	w := NewSet("worker", nil)
	var wc Worker
	BindWorker(w, &wc)
	have := strings.Join(w.Names(), " ")
	for _, n := range r.Names() {
		if !strings.Contains(" "+have+" ", " "+n+" ") {
			t.Errorf("worker lacks --%s", n)
		}
	}
	if err := r.Parse([]string{"--s3-path-style"}); err != nil {
		t.Fatal(err)
	}
	if s3.Bucket != "from-env" || s3.Prefix != "evidence" || !s3.PathStyle {
		t.Fatalf("parsed %+v", s3)
	}
}
