package worker

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/activities"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/redact"
)

func TestHostQueueNaming(t *testing.T) {
	tests := []struct {
		host, boot, want string
	}{
		{"worker-1", "a1b2c3d4e5f6", "durable-browser@worker-1-a1b2c3d4e5f6"},
		{"ip-10-0-0-7.ec2.internal", "00ff", "durable-browser@ip-10-0-0-7.ec2.internal-00ff"},
		{"my host/with:odd*chars", "b", "durable-browser@my-host-with-odd-chars-b"},
		{"über ☃ box", "b", "durable-browser@-ber-box-b"},
	}
	for _, tt := range tests {
		if got := hostQueue(tt.host, tt.boot); got != tt.want {
			t.Errorf("hostQueue(%q, %q) = %q, want %q", tt.host, tt.boot, got, tt.want)
		}
	}

	boot := newBootID()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(boot) {
		t.Fatalf("boot id %q is not 12 hex digits", boot)
	}
	if newBootID() == boot {
		t.Fatal("two boots got one id")
	}
	q := HostQueue(boot)
	if !strings.HasPrefix(q, contract.SharedQueue+"@") || !strings.HasSuffix(q, "-"+boot) {
		t.Fatalf("HostQueue = %q", q)
	}
	if !regexp.MustCompile(`^durable-browser@[A-Za-z0-9_.-]+$`).MatchString(q) {
		t.Fatalf("HostQueue %q has characters outside the safe set", q)
	}
}

// names records what is registered on one queue.
type names struct {
	workflows, activities []string
}

func (n *names) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	n.workflows = append(n.workflows, o.Name)
}

func (n *names) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	n.activities = append(n.activities, o.Name)
}

func TestRegister(t *testing.T) {
	var shared, host names
	register(&shared, &host, activities.New(activities.Options{}), nil)

	if want := []string{contract.WorkflowBrowserSession, SmokeWorkflow, contract.WorkflowEvidence}; !reflect.DeepEqual(shared.workflows, want) {
		t.Fatalf("shared workflows = %v, want %v", shared.workflows, want)
	}
	if len(host.workflows) != 0 {
		t.Fatalf("the host queue serves workflows %v; it serves only this process's browsers", host.workflows)
	}
	wantShared := []string{contract.ActivityCreate, contract.ActivityRelease, contract.ActivityWebFetch, contract.ActivityWebSearch, contract.ActivityEvidence, contract.ActivityAgentResult}
	if !reflect.DeepEqual(shared.activities, wantShared) {
		t.Fatalf("shared activities = %v, want %v", shared.activities, wantShared)
	}
	// Every call that touches a browser goes to the process holding it.
	for _, name := range []string{
		contract.ActivitySnapshot, contract.ActivityRun, contract.ActivityScreenshot, contract.ActivityRead, contract.ActivityCheck,
		contract.ActivityDownloads, contract.ActivityUpload, contract.ActivityRelease, contract.ActivityRelaunch,
		contract.ActivityReconcile, contract.ActivityNotify,
	} {
		if !contains(host.activities, name) {
			t.Errorf("host queue lacks %s", name)
		}
		if name != contract.ActivityRelease && contains(shared.activities, name) {
			t.Errorf("shared queue serves %s, which needs the browser's own process", name)
		}
	}
	if len(host.activities) != 11 {
		t.Fatalf("host activities = %v", host.activities)
	}
}

// TestRegisterIntoTemporal registers into Temporal's own test registries,
// which refuse a function Temporal could not call.
func TestRegisterIntoTemporal(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	shared, host := s.NewTestWorkflowEnvironment(), s.NewTestWorkflowEnvironment()
	register(shared, host, activities.New(activities.Options{}), nil)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSecretsFor(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(file, []byte("# shop\nexport SHOP_PASSWORD=file-value-123\nAPI_KEY=file-api-key-456\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(redact.EnvPrefix+"SHOP_PASSWORD", "env-value-789")
	t.Setenv(redact.EnvPrefix+"OTHER", "env-other-000")
	environ := []string{
		redact.EnvPrefix + "SHOP_PASSWORD=env-value-789",
		redact.EnvPrefix + "OTHER=env-other-000",
		"HOME_NOT_SECRET=plain-value-111",
	}

	src, red, err := secretsFor(config.Worker{SecretsFile: file}, environ)
	if err != nil {
		t.Fatal(err)
	}
	// The file wins over the environment; the environment fills the rest.
	for name, want := range map[string]string{"SHOP_PASSWORD": "file-value-123", "API_KEY": "file-api-key-456", "OTHER": "env-other-000"} {
		if got, ok := src.Lookup(name); !ok || got.Value != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", name, got.Value, ok, want)
		}
	}
	// Every value is hidden before it is ever used.
	text := "file-value-123 file-api-key-456 env-value-789 env-other-000 plain-value-111"
	got := red.String(text)
	for _, v := range []string{"file-value-123", "file-api-key-456", "env-value-789", "env-other-000"} {
		if strings.Contains(got, v) {
			t.Errorf("%s is not redacted: %s", v, got)
		}
	}
	if !strings.Contains(got, "plain-value-111") {
		t.Errorf("an ordinary variable was redacted: %s", got)
	}

	// Without a file, only the environment.
	src, _, err = secretsFor(config.Worker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := src.Lookup("SHOP_PASSWORD"); !ok || got.Value != "env-value-789" {
		t.Fatalf("env lookup = %q, %v", got.Value, ok)
	}

	// An origins list is checked at start and is not redacted.
	originsEnv := append(environ, redact.EnvPrefix+"OTHER_ORIGINS=https://shop.example")
	_, red, err = secretsFor(config.Worker{}, originsEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := red.String("https://shop.example/login"); got != "https://shop.example/login" {
		t.Fatalf("an origins list was registered as a secret: %s", got)
	}
	_, _, err = secretsFor(config.Worker{}, append(environ, redact.EnvPrefix+"OTHER_ORIGINS=shop.example"))
	if err == nil || !strings.Contains(err.Error(), redact.EnvPrefix+"OTHER_ORIGINS") {
		t.Fatalf("malformed origins at start = %v", err)
	}

	_, _, err = secretsFor(config.Worker{SecretsFile: filepath.Join(dir, "missing.env")}, nil)
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Flag != "secrets-file" {
		t.Fatalf("missing secrets file = %v, want a secrets-file config error", err)
	}
}

type nopNotifier struct{ handoff.Notifier }

func TestNotifierFor(t *testing.T) {
	log := zerolog.Nop()
	webhook := config.Worker{HandoffWebhook: "https://hooks.example/handoff", HandoffWebhookSecret: "whsec-0123456789"}

	given := nopNotifier{}
	red := redact.New()
	if got := notifierFor(webhook, given, red, log); got != handoff.Notifier(given) {
		t.Fatalf("a given notifier was replaced by %T", got)
	}

	red = redact.New()
	got := notifierFor(webhook, nil, red, log)
	wh, ok := got.(handoff.WebhookNotifier)
	if !ok || wh.URL != webhook.HandoffWebhook || string(wh.Secret) != webhook.HandoffWebhookSecret {
		t.Fatalf("webhook notifier = %#v", got)
	}
	if s := red.String("sig " + webhook.HandoffWebhookSecret); strings.Contains(s, webhook.HandoffWebhookSecret) {
		t.Fatalf("the webhook secret is not redacted: %s", s)
	}

	if got := notifierFor(config.Worker{}, nil, redact.New(), log); reflect.TypeOf(got) != reflect.TypeOf(handoff.LogNotifier{}) {
		t.Fatalf("default notifier = %T, want the log", got)
	}
}

func TestReapInterval(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{
		{0, time.Minute}, {-time.Second, time.Minute}, {15 * time.Second, 15 * time.Second},
	} {
		if got := reapInterval(config.Worker{ReapInterval: tt.in}); got != tt.want {
			t.Errorf("reapInterval(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDefaultProfileRoot(t *testing.T) {
	if got := DefaultProfileRoot("/var/lib/db"); got != filepath.Join("/var/lib/db", "browsers") {
		t.Fatalf("DefaultProfileRoot = %q", got)
	}
}
