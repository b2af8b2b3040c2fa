package deploy

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/states"
	"github.com/durable-browser/durable-browser/workflows"
)

// The files checked, relative to this package.
const (
	composePath   = "../docker-compose.yml"
	k8sWorkerPath = "k8s/worker.yaml"
	deployDocPath = "../docs/deploy.md"
)

// facts are what the deployment files must agree with: the versions the
// project runs and tests, and what the worker and the workflows read.
type facts struct {
	serverVersion, uiVersion, versitygwVersion string
	// flags are the worker's flag names; vars the DURABLE_BROWSER_*
	// variables it reads (each flag's, and those read without a flag).
	flags, vars map[string]bool
	// stopGrace is --stop-grace's default.
	stopGrace time.Duration
	// searchAttrs maps each search attribute the workflows upsert to its
	// type as the temporal CLI names it (Keyword).
	searchAttrs map[string]string
}

func loadFacts(t *testing.T) facts {
	t.Helper()
	gomod := readFile(t, "../go.mod")
	install := readFile(t, "../scripts/install-versitygw.sh")
	f := facts{
		serverVersion:    submatch(t, gomod, `(?m)^\s*go\.temporal\.io/server v(\S+)`),
		uiVersion:        submatch(t, gomod, `(?m)^\s*github\.com/temporalio/ui-server/v2 v(\S+)`),
		versitygwVersion: submatch(t, install, `versitygw/cmd/versitygw@(v\S+)`),
		flags:            map[string]bool{},
		vars:             map[string]bool{states.EnvKey: true},
		searchAttrs:      map[string]string{},
	}
	s := config.NewSet("worker", func(string) string { return "" })
	var w config.Worker
	config.BindWorker(s, &w)
	for _, name := range s.Names() {
		f.flags[name] = true
		f.vars[config.EnvName(name)] = true
	}
	d, err := time.ParseDuration(s.Lookup("stop-grace").DefValue)
	if err != nil {
		t.Fatalf("--stop-grace's default: %v", err)
	}
	f.stopGrace = d
	for name, typ := range workflows.SearchAttributeTypes {
		f.searchAttrs[name] = typ.String()
	}
	return f
}

// readsVar says the worker reads the variable: a flag's, the state key, or
// a tool secret (DURABLE_BROWSER_SECRET_<NAME>).
func (f facts) readsVar(name string) bool {
	return f.vars[name] || (strings.HasPrefix(name, redact.EnvPrefix) && len(name) > len(redact.EnvPrefix))
}

// secretName matches variables whose values are secrets: they must come
// from the environment (compose) or a Secret (Kubernetes), never the file.
var secretName = regexp.MustCompile(`PASSWORD|PWD|SECRET|TOKEN|API_KEY|STATE_KEY|ACCESS_KEY`)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func submatch(t *testing.T, text, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no match for %s", pattern)
	}
	return m[1]
}

// imageTag splits an image reference into its name and tag ("" if none);
// a digest (@sha256:...) counts as the tag when there is no other.
func imageTag(ref string) (name, tag string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		name, tag := imageTag(ref[:i])
		return name, cmp.Or(tag, ref[i+1:])
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// checkPinned reports an image that is not pinned to a release.
func checkPinned(where, ref string) []string {
	_, tag := imageTag(ref)
	switch {
	case tag == "":
		return []string{fmt.Sprintf("%s: image %q is not pinned: give it a release tag", where, ref)}
	case tag == "latest" || !strings.ContainsAny(tag, "0123456789"):
		return []string{fmt.Sprintf("%s: image %q is not pinned (tag %q moves): give it a release tag", where, ref, tag)}
	}
	return nil
}

// workerSettings reads the worker's flags from its command line and its
// DURABLE_BROWSER_* variables, reporting names the worker does not read.
// It returns the value each flag gets (command line over variable).
func workerSettings(where string, f facts, env map[string]string, args []string) (map[string]string, []string) {
	var problems []string
	got := map[string]string{}
	for _, name := range sortedKeys(env) {
		if !strings.HasPrefix(name, config.EnvPrefix) {
			continue
		}
		if !f.readsVar(name) {
			problems = append(problems, fmt.Sprintf("%s: %s is not a variable the worker reads (see `durable-browser worker --help`)", where, name))
			continue
		}
		flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, config.EnvPrefix), "_", "-"))
		if f.flags[flag] {
			got[flag] = env[name]
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !f.flags[name] {
			problems = append(problems, fmt.Sprintf("%s: %s is not a worker flag (see `durable-browser worker --help`)", where, a))
			continue
		}
		if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			val = args[i+1]
			i++
		}
		got[name] = val
	}
	return got, problems
}

// stopGrace is the worker's --stop-grace as configured.
func stopGrace(where string, f facts, got map[string]string) (time.Duration, []string) {
	v, ok := got["stop-grace"]
	if !ok {
		return f.stopGrace, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, []string{fmt.Sprintf("%s: --stop-grace %q is not a duration", where, v)}
	}
	return d, nil
}

// metricsPort is the port of the worker's --metrics address.
func metricsPort(where string, got map[string]string) (string, []string) {
	addr := got["metrics"]
	if addr == "" {
		return "", []string{where + ": the worker serves no metrics: set DURABLE_BROWSER_METRICS (e.g. :9464)"}
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", []string{fmt.Sprintf("%s: --metrics %q is not host:port", where, addr)}
	}
	return port, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// words is a compose command or entrypoint as one list (a string is split
// on spaces, as compose does for the exec form's shorthand).
type words []string

func (w *words) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*w = strings.Fields(n.Value)
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*w = list
	return nil
}

// envMap is a compose environment in either form: a mapping, or a list of
// KEY=value (a bare KEY takes its value from the environment).
type envMap map[string]string

func (e *envMap) UnmarshalYAML(n *yaml.Node) error {
	m := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, kv := range list {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				v = "${" + k + "}"
			}
			m[k] = v
		}
	} else if err := n.Decode(&m); err != nil {
		return err
	}
	*e = m
	return nil
}

// dependsOn maps each dependency to its condition, from either form (a
// list means service_started).
type dependsOn map[string]string

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	out := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, s := range list {
			out[s] = "service_started"
		}
	} else {
		var m map[string]struct {
			Condition string `yaml:"condition"`
		}
		if err := n.Decode(&m); err != nil {
			return err
		}
		for s, c := range m {
			out[s] = cmp.Or(c.Condition, "service_started")
		}
	}
	*d = out
	return nil
}

// portList is compose's ports or expose in either syntax; a long-syntax
// entry becomes "published:target" (or "target").
type portList []string

func (p *portList) UnmarshalYAML(n *yaml.Node) error {
	var items []yaml.Node
	if err := n.Decode(&items); err != nil {
		return err
	}
	for _, it := range items {
		if it.Kind == yaml.ScalarNode {
			*p = append(*p, it.Value)
			continue
		}
		var long struct {
			Target    string `yaml:"target"`
			Published string `yaml:"published"`
		}
		if err := it.Decode(&long); err != nil {
			return err
		}
		if long.Published != "" {
			*p = append(*p, long.Published+":"+long.Target)
		} else {
			*p = append(*p, long.Target)
		}
	}
	return nil
}

type composeService struct {
	Image           string    `yaml:"image"`
	Build           any       `yaml:"build"`
	Command         words     `yaml:"command"`
	Environment     envMap    `yaml:"environment"`
	StopGracePeriod string    `yaml:"stop_grace_period"`
	ShmSize         string    `yaml:"shm_size"`
	Expose          portList  `yaml:"expose"`
	Ports           portList  `yaml:"ports"`
	Volumes         []any     `yaml:"volumes"`
	DependsOn       dependsOn `yaml:"depends_on"`
	Deploy          struct {
		Replicas *int `yaml:"replicas"`
	} `yaml:"deploy"`
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

// interpolated matches a value compose takes from the environment.
var interpolated = regexp.MustCompile(`^\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}$`)

// checkCompose reports where the compose file drifted from facts. dir is
// where the file's relative paths start.
func checkCompose(raw []byte, dir string, f facts) []string {
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return []string{"docker-compose.yml does not parse: " + err.Error()}
	}
	if len(c.Services) == 0 {
		return []string{"docker-compose.yml has no services"}
	}
	var problems []string
	add := func(p ...string) { problems = append(problems, p...) }
	type release struct{ version, source string }
	want := map[string]release{
		"temporalio/server":      {f.serverVersion, "go.mod's go.temporal.io/server"},
		"temporalio/admin-tools": {f.serverVersion, "go.mod's go.temporal.io/server"},
		"temporalio/ui":          {f.uiVersion, "go.mod's github.com/temporalio/ui-server/v2"},
		"versity/versitygw":      {f.versitygwVersion, "scripts/install-versitygw.sh"},
	}
	seen := map[string]bool{}
	for _, name := range sortedKeys(c.Services) {
		s := c.Services[name]
		where := "docker-compose.yml service " + name
		switch {
		case s.Image == "" && s.Build == nil:
			add(where + ": neither image nor build")
		case s.Image != "":
			add(checkPinned(where, s.Image)...)
			img, tag := imageTag(s.Image)
			if img == "temporalio/auto-setup" {
				add(where + ": temporalio/auto-setup is Temporal's development image; run temporalio/server with the schema set up by a temporalio/admin-tools step")
			}
			if r, ok := want[img]; ok {
				seen[img] = true
				if tag != r.version {
					add(fmt.Sprintf("%s: %s:%s, but the project runs and tests %s (%s)", where, img, tag, r.version, r.source))
				}
			}
		}
		for _, k := range sortedKeys(s.Environment) {
			if v := s.Environment[k]; secretName.MatchString(k) && v != "" && !interpolated.MatchString(v) {
				add(fmt.Sprintf("%s: %s is written in the file; take the secret from the environment (${%s})", where, k, k))
			}
		}
		for _, vol := range s.Volumes {
			v, _ := vol.(string) // the long syntax is not checked
			if src, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(src, "./") {
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					add(fmt.Sprintf("%s: mounts %s, which does not exist", where, src))
				}
			}
		}
	}
	for _, img := range sortedKeys(want) {
		if !seen[img] {
			add("docker-compose.yml runs no " + img + " image")
		}
	}

	// The server starts only after an admin-tools step set up its schema.
	if t, ok := c.Services["temporal"]; !ok {
		add("docker-compose.yml has no temporal service")
	} else {
		schema := false
		for dep, cond := range t.DependsOn {
			cmd := strings.Join(c.Services[dep].Command, " ")
			if cond == "service_completed_successfully" && strings.Contains(cmd, "temporal-sql-tool") && strings.Contains(cmd, "update-schema") {
				schema = true
			}
		}
		if !schema {
			add("docker-compose.yml: the temporal service does not wait for (service_completed_successfully) a step that sets up its schema with temporal-sql-tool update-schema")
		}
	}

	// The search attributes registered are those the workflows upsert.
	registered, found := map[string]string{}, false
	pair := regexp.MustCompile(`--name\s+(\S+)\s+--type\s+(\S+)`)
	for _, name := range sortedKeys(c.Services) {
		cmd := strings.Join(c.Services[name].Command, " ")
		if !strings.Contains(cmd, "search-attribute create") {
			continue
		}
		found = true
		for _, m := range pair.FindAllStringSubmatch(cmd, -1) {
			registered[m[1]] = m[2]
		}
	}
	if !found {
		add("docker-compose.yml registers no search attributes (temporal operator search-attribute create)")
	}
	for _, name := range sortedKeys(f.searchAttrs) {
		if got, ok := registered[name]; !ok {
			add(fmt.Sprintf("docker-compose.yml does not register search attribute %s (%s), which BrowserSession upserts", name, f.searchAttrs[name]))
		} else if !strings.EqualFold(got, f.searchAttrs[name]) {
			add(fmt.Sprintf("docker-compose.yml registers %s as %s; the workflows upsert it as %s", name, got, f.searchAttrs[name]))
		}
	}
	for _, name := range sortedKeys(registered) {
		if _, ok := f.searchAttrs[name]; !ok {
			add(fmt.Sprintf("docker-compose.yml registers search attribute %s, which no workflow upserts", name))
		}
	}

	w, ok := c.Services["worker"]
	if !ok {
		return append(problems, "docker-compose.yml has no worker service")
	}
	const where = "docker-compose.yml service worker"
	if w.Build == nil {
		add(where + ": not built from the Dockerfile (build: .)")
	}
	args := []string(w.Command)
	if len(args) > 0 && args[0] == "worker" {
		args = args[1:]
	}
	got, p := workerSettings(where, f, w.Environment, args)
	add(p...)
	if w.Deploy.Replicas == nil || *w.Deploy.Replicas < 2 {
		add(where + ": fewer than two replicas (deploy.replicas); the stack shows several workers")
	}
	if w.ShmSize == "" {
		add(where + ": no shm_size; Chrome's tabs crash in the default 64 MB /dev/shm")
	}
	grace, p := stopGrace(where, f, got)
	add(p...)
	if w.StopGracePeriod == "" {
		add(where + ": no stop_grace_period; the engine kills the worker 10 s after SIGTERM")
	} else if period, err := time.ParseDuration(w.StopGracePeriod); err != nil {
		add(fmt.Sprintf("%s: stop_grace_period %q is not a duration", where, w.StopGracePeriod))
	} else if grace >= period {
		add(fmt.Sprintf("%s: --stop-grace %s is not shorter than stop_grace_period %s: the worker is killed before it releases its browsers", where, grace, period))
	}
	if port, p := metricsPort(where, got); len(p) > 0 {
		add(p...)
	} else if !slices.ContainsFunc(append(slices.Clone(w.Expose), w.Ports...), func(e string) bool {
		return e == port || strings.HasSuffix(e, ":"+port) || strings.HasPrefix(e, port+"/")
	}) {
		add(fmt.Sprintf("%s: the metrics port %s is neither exposed nor published", where, port))
	}
	return problems
}

type k8sEnv struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type k8sPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type k8sContainer struct {
	Name         string    `yaml:"name"`
	Image        string    `yaml:"image"`
	Args         []string  `yaml:"args"`
	Env          []k8sEnv  `yaml:"env"`
	Ports        []k8sPort `yaml:"ports"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	ReadinessProbe *struct {
		HTTPGet *struct {
			Path string    `yaml:"path"`
			Port yaml.Node `yaml:"port"`
		} `yaml:"httpGet"`
	} `yaml:"readinessProbe"`
}

type k8sDeployment struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds *int           `yaml:"terminationGracePeriodSeconds"`
				Containers                    []k8sContainer `yaml:"containers"`
				Volumes                       []struct {
					Name     string `yaml:"name"`
					EmptyDir *struct {
						Medium string `yaml:"medium"`
					} `yaml:"emptyDir"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// checkK8s reports where the worker's Deployment drifted from facts.
func checkK8s(raw []byte, f facts) []string {
	const file = "deploy/k8s/worker.yaml"
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	var dep *k8sDeployment
	for {
		var d k8sDeployment
		err := dec.Decode(&d)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return []string{file + " does not parse: " + err.Error()}
		}
		if d.Kind == "Deployment" {
			dep = &d
		}
	}
	if dep == nil {
		return []string{file + " holds no Deployment"}
	}
	spec := dep.Spec.Template.Spec
	var c *k8sContainer
	for i := range spec.Containers {
		if spec.Containers[i].Name == "worker" {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return []string{file + ": the Deployment has no container named worker"}
	}
	where := file + " container worker"
	var problems []string
	add := func(p ...string) { problems = append(problems, p...) }
	add(checkPinned(where, c.Image)...)
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		fromSecret := e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
		if secretName.MatchString(e.Name) && !fromSecret {
			add(fmt.Sprintf("%s: %s is not taken from a Secret (valueFrom.secretKeyRef)", where, e.Name))
		}
	}
	args := c.Args
	if len(args) > 0 && args[0] == "worker" {
		args = args[1:]
	}
	got, p := workerSettings(where, f, env, args)
	add(p...)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		add(file + ": fewer than two replicas")
	}
	grace, p := stopGrace(where, f, got)
	add(p...)
	if tg := spec.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second <= grace {
		add(fmt.Sprintf("%s: terminationGracePeriodSeconds is not above --stop-grace %s: the worker is killed before it releases its browsers", file, grace))
	}
	shm := false
	for _, m := range c.VolumeMounts {
		if m.MountPath != "/dev/shm" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && v.EmptyDir.Medium == "Memory" {
				shm = true
			}
		}
	}
	if !shm {
		add(where + ": /dev/shm is not an emptyDir with medium Memory; Chrome's tabs crash in the default 64 MB")
	}
	port, p := metricsPort(where, got)
	add(p...)
	if port == "" {
		return problems
	}
	var metrics *k8sPort
	for i := range c.Ports {
		if strconv.Itoa(c.Ports[i].ContainerPort) == port {
			metrics = &c.Ports[i]
		}
	}
	if metrics == nil {
		return append(problems, fmt.Sprintf("%s: the metrics port %s is not a containerPort", where, port))
	}
	rp := c.ReadinessProbe
	if rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/metrics" ||
		(rp.HTTPGet.Port.Value != port && (metrics.Name == "" || rp.HTTPGet.Port.Value != metrics.Name)) {
		add(fmt.Sprintf("%s: the readinessProbe is not an httpGet of /metrics on the metrics port %s (the worker has no other health endpoint)", where, port))
	}
	return problems
}

// checkDoc reports compose services, images and manifests docs/deploy.md
// does not name.
func checkDoc(doc string, composeRaw []byte) []string {
	var c composeFile
	if err := yaml.Unmarshal(composeRaw, &c); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, name := range sortedKeys(c.Services) {
		if !strings.Contains(doc, "`"+name+"`") {
			problems = append(problems, fmt.Sprintf("docs/deploy.md does not name the compose service `%s`", name))
		}
		if img := c.Services[name].Image; img != "" && !strings.Contains(doc, img) {
			problems = append(problems, fmt.Sprintf("docs/deploy.md does not name the image %s", img))
		}
	}
	for _, f := range []string{"deploy/k8s/worker.yaml", "deploy/compose/dynamicconfig.yaml", "deploy/compose/example.env"} {
		if !strings.Contains(doc, f) {
			problems = append(problems, "docs/deploy.md does not name "+f)
		}
	}
	return problems
}

// TestDeployFiles checks the compose file, the Kubernetes manifest and
// docs/deploy.md against go.mod, the worker's flags and the workflows.
func TestDeployFiles(t *testing.T) {
	f := loadFacts(t)
	compose := []byte(readFile(t, composePath))
	for _, p := range checkCompose(compose, "..", f) {
		t.Error(p)
	}
	for _, p := range checkK8s([]byte(readFile(t, k8sWorkerPath)), f) {
		t.Error(p)
	}
	for _, p := range checkDoc(readFile(t, deployDocPath), compose) {
		t.Error(p)
	}
}

// TestDeployFilesDrift shows the checks catch drift: each case changes a
// copy of a file the way it drifts, and the check must name the problem.
func TestDeployFilesDrift(t *testing.T) {
	f := loadFacts(t)
	compose := readFile(t, composePath)
	k8s := readFile(t, k8sWorkerPath)
	const secret = "${S3_SECRET_KEY:?set S3_SECRET_KEY (see deploy/compose/example.env)}"
	cases := []struct {
		name, file, old, new, want string
	}{
		{"server tag behind go.mod", "compose", "temporalio/server:" + f.serverVersion, "temporalio/server:1.29.1", "temporalio/server:1.29.1, but"},
		{"admin-tools of another release", "compose", "temporalio/admin-tools:" + f.serverVersion, "temporalio/admin-tools:1.29.1", "temporalio/admin-tools:1.29.1, but"},
		{"UI tag behind go.mod", "compose", "temporalio/ui:" + f.uiVersion, "temporalio/ui:2.34.0", "temporalio/ui:2.34.0, but"},
		{"S3 server not dev's", "compose", "versity/versitygw:" + f.versitygwVersion, "versity/versitygw:v1.7.0", "versity/versitygw:v1.7.0, but"},
		{"auto-setup image", "compose", "temporalio/server:", "temporalio/auto-setup:", "development image"},
		{"latest tag", "compose", "postgres:16.10", "postgres:latest", `"postgres:latest" is not pinned`},
		{"untagged image", "compose", "postgres:16.10", "postgres", `"postgres" is not pinned`},
		{"variable the worker does not read", "compose", "DURABLE_BROWSER_MAX_BROWSERS:", "DURABLE_BROWSER_MAX_BROWSER:", "DURABLE_BROWSER_MAX_BROWSER is not a variable the worker reads"},
		{"stop grace as long as the engine waits", "compose", "DURABLE_BROWSER_STOP_GRACE: 30s", "DURABLE_BROWSER_STOP_GRACE: 45s", "is not shorter than stop_grace_period"},
		{"no stop_grace_period", "compose", "stop_grace_period: 45s", "", "no stop_grace_period"},
		{"search attribute missing", "compose", " --name BrowserState --type Keyword", "", "does not register search attribute BrowserState"},
		{"search attribute of another type", "compose", "--name BrowserState --type Keyword", "--name BrowserState --type Text", "registers BrowserState as Text"},
		{"one replica", "compose", "replicas: 2", "replicas: 1", "fewer than two replicas"},
		{"no shm_size", "compose", "shm_size: 1gb", "", "no shm_size"},
		{"secret written in the file", "compose", secret, "durable-browser-secret", "AWS_SECRET_ACCESS_KEY is written in the file"},
		{"metrics port not exposed", "compose", `- "9464"`, `- "9465"`, "metrics port 9464 is neither exposed"},
		{"server does not wait for its schema", "compose", "temporal-schema: { condition: service_completed_successfully }", "postgresql: { condition: service_healthy }", "sets up its schema"},
		{"mounted file missing", "compose", "./deploy/compose/dynamicconfig.yaml", "./deploy/compose/dynamic.yaml", "does not exist"},
		{"not YAML", "compose", "services:", "services: [", "does not parse"},
		{"k8s variable the worker does not read", "k8s", "DURABLE_BROWSER_MAX_BROWSERS", "DURABLE_BROWSER_MAXBROWSERS", "DURABLE_BROWSER_MAXBROWSERS is not a variable the worker reads"},
		{"k8s flag the worker does not take", "k8s", `args: ["worker"]`, `args: ["worker", "--max-browser=4"]`, "--max-browser=4 is not a worker flag"},
		{"k8s grace not above stop grace", "k8s", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds is not above --stop-grace 30s"},
		{"k8s /dev/shm on disk", "k8s", "emptyDir: { medium: Memory, sizeLimit: 1Gi }", "emptyDir: { sizeLimit: 1Gi }", "/dev/shm is not an emptyDir with medium Memory"},
		{"k8s readiness elsewhere", "k8s", "path: /metrics, port: metrics", "path: /healthz, port: metrics", "readinessProbe is not an httpGet of /metrics"},
		{"k8s metrics port not a containerPort", "k8s", "containerPort: 9464", "containerPort: 9000", "metrics port 9464 is not a containerPort"},
		{"k8s key not from a Secret", "k8s", "valueFrom:\n                secretKeyRef: { name: durable-browser, key: state-key }", "value: c2VjcmV0", "DURABLE_BROWSER_STATE_KEY is not taken from a Secret"},
		{"k8s latest image", "k8s", "durable-browser:v1", "durable-browser:latest", "is not pinned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := compose
			if tc.file == "k8s" {
				src = k8s
			}
			mutated := strings.ReplaceAll(src, tc.old, tc.new)
			if mutated == src {
				t.Fatalf("%q is not in the %s file: the case no longer mutates it", tc.old, tc.file)
			}
			var problems []string
			if tc.file == "k8s" {
				problems = checkK8s([]byte(mutated), f)
			} else {
				problems = checkCompose([]byte(mutated), "..", f)
			}
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("no problem containing %q; got %q", tc.want, problems)
			}
		})
	}
}

// Compose's short and long forms parse alike: a list environment, a list
// depends_on and long-syntax ports.
func TestComposeForms(t *testing.T) {
	var c composeFile
	err := yaml.Unmarshal([]byte(`services:
  a:
    environment: ["DURABLE_BROWSER_METRICS=:9464", "DURABLE_BROWSER_STATE_KEY"]
    depends_on: [b]
    ports: [{target: 9464, published: "19464"}, "7233:7233"]
`), &c)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Services["a"]
	if a.Environment["DURABLE_BROWSER_METRICS"] != ":9464" || !interpolated.MatchString(a.Environment["DURABLE_BROWSER_STATE_KEY"]) {
		t.Errorf("environment %q", a.Environment)
	}
	if a.DependsOn["b"] != "service_started" {
		t.Errorf("depends_on %q", a.DependsOn)
	}
	if !slices.Equal(a.Ports, portList{"19464:9464", "7233:7233"}) {
		t.Errorf("ports %q", a.Ports)
	}
}
