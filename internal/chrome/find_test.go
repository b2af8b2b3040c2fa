package chrome

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

type fakeInfo struct {
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 1 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

// fakeFS answers Stat from a map of path to mode.
func fakeFS(files map[string]fs.FileMode) func(string) (os.FileInfo, error) {
	return func(p string) (os.FileInfo, error) {
		m, ok := files[p]
		if !ok {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
		}
		return fakeInfo{mode: m}, nil
	}
}

func fakePath(onPath map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := onPath[name]; ok {
			return p, nil
		}
		return "", errors.New("not found")
	}
}

func TestFindOrder(t *testing.T) {
	const exe = 0o755
	tests := []struct {
		name     string
		explicit string
		env      map[string]string
		onPath   map[string]string
		files    map[string]fs.FileMode
		goos     string
		want     string
		wantErr  error
		errHas   string
	}{
		{
			name:     "flag wins over env, PATH and install paths",
			explicit: "/flag/chrome",
			env:      map[string]string{"CHROME_PATH": "/env/chrome"},
			onPath:   map[string]string{"chromium": "/path/chromium"},
			files:    map[string]fs.FileMode{"/flag/chrome": exe, "/env/chrome": exe, "/usr/bin/chromium": exe},
			want:     "/flag/chrome",
		},
		{
			name:   "env wins over PATH",
			env:    map[string]string{"CHROME_PATH": "/env/chrome"},
			onPath: map[string]string{"chromium": "/path/chromium"},
			files:  map[string]fs.FileMode{"/env/chrome": exe},
			want:   "/env/chrome",
		},
		{
			name:   "PATH in name order: chromium before google-chrome",
			onPath: map[string]string{"google-chrome": "/p/google-chrome", "chromium": "/p/chromium"},
			want:   "/p/chromium",
		},
		{
			name:   "PATH: chromium-browser before google-chrome-stable",
			onPath: map[string]string{"google-chrome-stable": "/p/gcs", "chromium-browser": "/p/cb"},
			want:   "/p/cb",
		},
		{
			name:   "PATH: google-chrome-stable last",
			onPath: map[string]string{"google-chrome-stable": "/p/gcs"},
			files:  map[string]fs.FileMode{"/usr/bin/chromium": exe},
			want:   "/p/gcs",
		},
		{
			name:  "linux install paths when PATH has none, in order",
			files: map[string]fs.FileMode{"/opt/google/chrome/chrome": exe, "/snap/bin/chromium": exe},
			want:  "/opt/google/chrome/chrome",
		},
		{
			name:  "non-executable install path is skipped",
			files: map[string]fs.FileMode{"/usr/bin/chromium": 0o644, "/snap/bin/chromium": exe},
			want:  "/snap/bin/chromium",
		},
		{
			name:  "macOS app bundle",
			goos:  "darwin",
			files: map[string]fs.FileMode{"/Applications/Chromium.app/Contents/MacOS/Chromium": exe},
			want:  "/Applications/Chromium.app/Contents/MacOS/Chromium",
		},
		{
			name: "macOS Chrome before Chromium",
			goos: "darwin",
			files: map[string]fs.FileMode{
				"/Applications/Chromium.app/Contents/MacOS/Chromium":           exe,
				"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome": exe,
			},
			want: "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		},
		{
			name:    "nothing on linux says apt-get",
			wantErr: ErrNotFound,
			errHas:  "apt-get install chromium",
		},
		{
			name:    "nothing on macOS says brew",
			goos:    "darwin",
			wantErr: ErrNotFound,
			errHas:  "brew install --cask chromium",
		},
		{
			name:     "missing explicit path names the flag, no fallback",
			explicit: "/nope",
			onPath:   map[string]string{"chromium": "/p/chromium"},
			wantErr:  ErrBadPath,
			errHas:   `--chrome "/nope" does not exist`,
		},
		{
			name:     "non-executable explicit path",
			explicit: "/flag/chrome",
			files:    map[string]fs.FileMode{"/flag/chrome": 0o644},
			wantErr:  ErrBadPath,
			errHas:   "is not executable",
		},
		{
			name:    "bad CHROME_PATH names the variable",
			env:     map[string]string{"CHROME_PATH": "/dir"},
			files:   map[string]fs.FileMode{"/dir": fs.ModeDir | exe},
			wantErr: ErrBadPath,
			errHas:  `CHROME_PATH "/dir" is a directory`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(fakeOptions(tt.explicit, tt.env, tt.onPath, tt.files, tt.goos))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err %q lacks %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Find = %q, want %q", got, tt.want)
			}
		})
	}
}

// fakeOptions are FindOptions over a fake environment, PATH and files
// (goos "" is linux).
func fakeOptions(explicit string, env, onPath map[string]string, files map[string]fs.FileMode, goos string) FindOptions {
	if goos == "" {
		goos = "linux"
	}
	return FindOptions{
		Explicit: explicit,
		Env:      func(k string) string { return env[k] },
		LookPath: fakePath(onPath),
		Stat:     fakeFS(files),
		GOOS:     goos,
	}
}

func TestFindRealDefaults(t *testing.T) {
	// With real lookups Find either finds an executable or says how to get one.
	p, err := Find(FindOptions{})
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		t.Fatalf("Find returned unusable %q: %v", p, err)
	}
}

func TestFindShell(t *testing.T) {
	const exe = 0o755
	debian := "/usr/lib/chromium/chromium-headless-shell"
	tests := []struct {
		name     string
		setting  string
		explicit string
		env      map[string]string
		onPath   map[string]string
		files    map[string]fs.FileMode
		goos     string
		want     string
		errHas   string
	}{
		{name: "auto finds Debian's executable before PATH's script",
			onPath: map[string]string{"chromium-headless-shell": "/usr/bin/chromium-headless-shell"},
			files:  map[string]fs.FileMode{debian: exe},
			want:   debian},
		{name: "auto falls back to PATH",
			onPath: map[string]string{"chrome-headless-shell": "/opt/chs/chrome-headless-shell"},
			want:   "/opt/chs/chrome-headless-shell"},
		{name: "empty setting is auto", files: map[string]fs.FileMode{debian: exe}, setting: "", want: debian},
		{name: "auto with none installed runs the full browser"},
		{name: "auto leaves a browser named by --chrome alone",
			explicit: "/opt/google/chrome/chrome",
			files:    map[string]fs.FileMode{debian: exe}},
		{name: "auto leaves a browser named by CHROME_PATH alone",
			env:   map[string]string{"CHROME_PATH": "/x/chrome"},
			files: map[string]fs.FileMode{debian: exe}},
		{name: "auto is Linux only (the shell's packages are)",
			goos: "darwin", files: map[string]fs.FileMode{debian: exe}},
		{name: "off never uses one", setting: "off", files: map[string]fs.FileMode{debian: exe}},
		{name: "a path wins, even with --chrome",
			setting: "/s/shell", explicit: "/c/chrome",
			files: map[string]fs.FileMode{"/s/shell": exe},
			want:  "/s/shell"},
		{name: "a bad path names the flag and the ways out",
			setting: "/nope",
			errHas:  `--headless-shell "/nope" does not exist: point it at chrome-headless-shell`},
		{name: "a non-executable path",
			setting: "/s/shell", files: map[string]fs.FileMode{"/s/shell": 0o644},
			errHas: "is not executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindShell(fakeOptions(tt.explicit, tt.env, tt.onPath, tt.files, tt.goos), tt.setting)
			if tt.errHas != "" {
				if !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want ErrBadPath with %q", err, tt.errHas)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindShell = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
