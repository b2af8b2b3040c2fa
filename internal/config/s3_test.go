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

// Server-side encryption with KMS names its key; a key needs aws:kms.
func TestValidateWorkerSSE(t *testing.T) {
	base := func(sse, key string) Worker {
		w := Worker{Temporal: Temporal{Address: "127.0.0.1:7233", Namespace: "default"}, S3: S3{Bucket: "b", SSE: sse, KMSKeyID: key}, ProfileRoot: t.TempDir()}
		return w
	}
	cases := []struct {
		sse, key, flag string
	}{
		{"aws:kms", "", "s3-kms-key-id"},
		{"", "alias/evidence", "s3-kms-key-id"},
		{"XYZ", "", "s3-sse"},
	}
	for _, c := range cases {
		w := base(c.sse, c.key)
		err := w.Validate()
		var ce *Error
		if !errors.As(err, &ce) || ce.Flag != c.flag || ce.Fix == "" {
			t.Errorf("sse %q key %q: %v, want a fix for --%s", c.sse, c.key, err, c.flag)
		}
	}
	for _, ok := range []Worker{base("aws:kms", "alias/evidence"), base("AES256", "")} {
		if err := ok.Validate(); err != nil && strings.Contains(err.Error(), "s3-") {
			t.Errorf("sse %q key %q refused: %v", ok.S3.SSE, ok.S3.KMSKeyID, err)
		}
	}
}
