package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestCheckUploadDir(t *testing.T) {
	base := t.TempDir()
	up := filepath.Join(base, "uploads")
	profiles := filepath.Join(base, "profiles")
	for _, d := range []string{up, profiles, filepath.Join(up, "inner")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secrets := filepath.Join(base, "secrets")
	if err := os.WriteFile(secrets, []byte("A=b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link-to-uploads")
	if err := os.Symlink(up, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		dir       string
		protected map[string]string
		wantFlag  string // "" for no error
		wantIn    string
	}{
		{"unset", "", map[string]string{"profile-root": profiles}, "", ""},
		{"separate", up, map[string]string{"profile-root": profiles, "secrets-file": secrets}, "", ""},
		{"missing", filepath.Join(base, "nope"), nil, "upload-dir", "not a directory"},
		{"a file", secrets, nil, "upload-dir", "not a directory"},
		{"contains the profile root", base, map[string]string{"profile-root": profiles}, "upload-dir", "--profile-root"},
		{"inside the profile root", profiles, map[string]string{"profile-root": base}, "upload-dir", "--profile-root"},
		{"is the profile root", profiles, map[string]string{"profile-root": profiles}, "upload-dir", "--profile-root"},
		{"contains the secrets file", base, map[string]string{"secrets-file": secrets}, "upload-dir", "--secrets-file"},
		{"profile root not yet created inside", up, map[string]string{"profile-root": filepath.Join(up, "inner", "later", "browsers")}, "upload-dir", "--profile-root"},
		{"through a symlink", link, map[string]string{"profile-root": filepath.Join(up, "inner")}, "upload-dir", "--profile-root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckUploadDir(tc.dir, tc.protected)
			if tc.wantFlag == "" {
				if err != nil {
					t.Fatalf("CheckUploadDir: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Flag != tc.wantFlag || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("CheckUploadDir = %v, want an error on --%s containing %q", err, tc.wantFlag, tc.wantIn)
			}
		})
	}
}

func TestParseProfileGrants(t *testing.T) {
	cases := []struct {
		in      string
		want    []contract.Profile
		wantErr bool
	}{
		{"", nil, false},
		{"shop", []contract.Profile{{Name: "shop"}}, false},
		{"shop, mail:save", []contract.Profile{{Name: "shop"}, {Name: "mail", Save: true}}, false},
		{"shop:write", nil, true},
		{"../etc", nil, true},
	}
	for _, tc := range cases {
		got, err := ParseProfileGrants(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseProfileGrants(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
