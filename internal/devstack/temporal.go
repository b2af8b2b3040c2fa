package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// TemporalOptions configures the embedded Temporal server.
type TemporalOptions struct {
	// DatabaseFile is the SQLite file; empty keeps everything in memory.
	DatabaseFile string
	// Address is host:port for the frontend, e.g. 127.0.0.1:7233.
	Address string
	// Namespace is created when missing. Default "default".
	Namespace string
	// SearchAttributes are registered on the namespace when it is created.
	SearchAttributes map[string]enumspb.IndexedValueType
	Logger           zerolog.Logger
}

// Temporal is a running embedded Temporal server.
type Temporal struct {
	server  temporal.Server
	address string
	log     ServerLogger
	// internal are the loopback ports of its internal services.
	internal []int
}

// InternalPorts are the loopback ports the server's internal services
// (gRPC and membership of history, matching and worker) listen on.
func (t *Temporal) InternalPorts() []int { return append([]int(nil), t.internal...) }

// Address is the frontend's host:port.
func (t *Temporal) Address() string { return t.address }

// Stop stops the server; it is safe to call more than once.
func (t *Temporal) Stop() {
	if t.server != nil {
		t.log.Quiet()
		_ = t.server.Stop()
		t.server = nil
	}
}

// StartTemporal starts an in-process Temporal server persisting to SQLite.
func StartTemporal(ctx context.Context, o TemporalOptions) (*Temporal, error) {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	host, portStr, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("temporal address %q: %w (want host:port, e.g. 127.0.0.1:7233)", o.Address, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 {
		return nil, fmt.Errorf("temporal address %q: port must be a number", o.Address)
	}
	if err := CheckPortFree(o.Address); err != nil {
		return nil, err
	}
	sqlConf, err := sqliteConfig(o)
	if err != nil {
		return nil, err
	}
	// The internal services listen on ports chosen here. Another process
	// can take one between the choice and the bind, and the server then
	// fails (or panics) while starting; a fresh choice of ports usually
	// gets through, so try a few times.
	//
	// A server on a database file starts again on the ports it had: the
	// file remembers each internal service's address as a cluster member,
	// and a restart on other ports leaves the old, dead members in the ring
	// for about a minute, during which tasks are routed to them and every
	// running session's answers wait (measured: 60 s instead of 50 ms).
	kept := keptPorts(o.DatabaseFile)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		internal := kept
		kept = nil
		if internal == nil {
			if internal, err = internalPorts(7); err != nil {
				return nil, err
			}
		}
		t, err := startServer(o, host, port, internal, sqlConf)
		if err == nil {
			if err := keepPorts(o.DatabaseFile, internal); err != nil {
				o.Logger.Warn().Err(err).Msg("could not note the embedded temporal's ports; a restart will take a minute to route tasks again")
			}
			return t, nil
		}
		lastErr = err
		o.Logger.Warn().Err(err).Int("attempt", attempt+1).Msg("embedded temporal did not start; retrying on other ports")
	}
	return nil, lastErr
}

// startServer builds and starts the server once, turning a panic during
// start into an error.
func startServer(o TemporalOptions, host string, port int, internal []int, sqlConf *config.SQL) (_ *Temporal, err error) {
	svc := func(grpc, membership int, bind string) config.Service {
		var s config.Service
		s.RPC.GRPCPort = grpc
		s.RPC.MembershipPort = membership
		if bind == "" {
			s.RPC.BindOnLocalHost = true
		} else {
			s.RPC.BindOnIP = bind
		}
		return s
	}
	const cluster = "active"
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = "127.0.0.1"
	conf.Persistence.DefaultStore = "sqlite"
	conf.Persistence.VisibilityStore = "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	cm := clusterConfig(cluster, port)
	conf.ClusterMetadata = &cm
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{
		"frontend": svc(port, internal[0], host),
		"history":  svc(internal[1], internal[2], ""),
		"matching": svc(internal[3], internal[4], ""),
		"worker":   svc(internal[5], internal[6], ""),
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = o.Address

	dyn := dynamicconfig.StaticClient{
		// Search attributes registered at start are visible at once.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// One partition per task queue: on one machine, more partitions only
		// add forwarding hops between a task and its poller.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// With one history shard, the default 20 polls a second of the
		// transfer queue cap a session at about ten tool calls a second
		// (each call queues an activity task and a workflow task), and each
		// call then waits ~100 ms for its turn. Lift the caps.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   10000,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      10000,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 10000,
		// A worker that stops answering (frozen, paused, cut off) keeps its
		// polls open, and each is handed a task that then waits out its
		// timeout. Ping a quiet connection after 2 s and drop it 3 s
		// later: a stalled worker's polls are gone within 5 s.
		dynamicconfig.KeepAliveTime.Key():    2 * time.Second,
		dynamicconfig.KeepAliveTimeout.Key(): 3 * time.Second,
	}
	slog := NewServerLogger(o.Logger.Level(maxLevel(o.Logger.GetLevel(), zerolog.WarnLevel)))
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(slog),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("building embedded temporal: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting embedded temporal: %v", r)
			func() {
				defer func() { _ = recover() }()
				_ = srv.Stop()
			}()
		}
	}()
	if err := srv.Start(); err != nil {
		func() {
			defer func() { _ = recover() }()
			_ = srv.Stop()
		}()
		return nil, fmt.Errorf("starting embedded temporal: %w", err)
	}
	return &Temporal{server: srv, address: o.Address, log: slog, internal: internal}, nil
}

// internalPorts picks n free loopback ports below the kernel's ephemeral
// range, where browsers and outgoing connections take theirs.
func internalPorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	seen := map[int]bool{}
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("no free loopback ports between 20000 and 32000 for the embedded temporal")
		}
		p := 20000 + mrand.IntN(12000)
		if seen[p] {
			continue
		}
		seen[p] = true
		if CheckPortFree(fmt.Sprintf("127.0.0.1:%d", p)) == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func clusterConfig(name string, port int) cluster.Config {
	return cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        name,
		CurrentClusterName:       name,
		ClusterInformation: map[string]cluster.ClusterInformation{
			name: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             fmt.Sprintf("127.0.0.1:%d", port),
				ClusterID:              "durable-browser-dev",
			},
		},
	}
}

func sqliteConfig(o TemporalOptions) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	fresh := true
	if o.DatabaseFile == "" {
		// The plugin creates the schema of an in-memory database itself.
		fresh = false
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = fmt.Sprintf("mem-%d", time.Now().UnixNano())
	} else {
		if err := os.MkdirAll(filepath.Dir(o.DatabaseFile), 0o700); err != nil {
			return nil, fmt.Errorf("creating state directory for %s: %w", o.DatabaseFile, err)
		}
		conf.ConnectAttributes = map[string]string{"mode": "rwc", "_journal_mode": "wal", "_synchronous": "1"}
		conf.DatabaseName = o.DatabaseFile
		if _, err := os.Stat(o.DatabaseFile); err == nil {
			fresh = false
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", o.DatabaseFile, err)
		}
	}
	if fresh {
		if err := sqliteschema.SetupSchema(conf); err != nil {
			return nil, fmt.Errorf("creating temporal schema in %s: %w", o.DatabaseFile, err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("namespace %q: %w", o.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("creating namespace %q: %w", o.Namespace, err)
	}
	return conf, nil
}

func maxLevel(a, b zerolog.Level) zerolog.Level {
	if a > b {
		return a
	}
	return b
}

// portsFile is where a server on a database file notes its internal ports.
func portsFile(db string) string { return db + ".ports" }

// keptPorts reads the internal ports a server on db last ran on, when all
// of them are free again; nil otherwise (first start, in memory, or taken).
func keptPorts(db string) []int {
	if db == "" {
		return nil
	}
	raw, err := os.ReadFile(portsFile(db))
	if err != nil {
		return nil
	}
	var ports []int
	if json.Unmarshal(raw, &ports) != nil || len(ports) != 7 {
		return nil
	}
	for _, p := range ports {
		if p <= 0 || p > 65535 || CheckPortFree(fmt.Sprintf("127.0.0.1:%d", p)) != nil {
			return nil
		}
	}
	return ports
}

// keepPorts notes a server's internal ports next to its database file.
func keepPorts(db string, ports []int) error {
	if db == "" {
		return nil
	}
	raw, err := json.Marshal(ports)
	if err != nil {
		return err
	}
	return os.WriteFile(portsFile(db), raw, 0o600)
}
