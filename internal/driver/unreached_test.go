package driver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
)

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// Behind the egress proxy, a server that is not running fails the goto
// (and a click's navigation) as Chrome's own connection error does, named
// by its cause; a site that sends the proxy's mark itself is an ordinary
// page; a host the policy refuses stays blocked.
func TestGotoUnreachableThroughEgress(t *testing.T) {
	dead, service := deadAddr(t), deadAddr(t)
	_, servicePort, _ := net.SplitHostPort(service)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/forged":
			w.Header().Set(egress.UnreachableHeader, "connection refused")
			fmt.Fprint(w, `<title>Forged</title><p>A page of its own</p>`)
		default:
			fmt.Fprintf(w, `<title>Links</title><a href="http://%s/gone">Gone</a>`, dead)
		}
	}))
	defer srv.Close()
	pol := &netguard.Policy{AllowPrivate: true, Services: []netguard.Service{{Name: "a service", Host: "127.0.0.1", Port: servicePort}}}
	eg, err := egress.Start(egress.Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eg.Close() })
	ws, _, stop, err := startChrome(t.TempDir(), "--proxy-server=http://"+eg.Addr(), "--proxy-bypass-list=<-loopback>")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	b := attachTo(t, Options{CDPURL: ws, Egress: eg, Reach: pol}) // as the local provider attaches

	gotoPage(t, b, srv.URL+"/start")
	_, err = runErr(t, b, fmt.Sprintf(`[{"op":"goto","url":"http://%s/x"}]`, dead))
	var ae *ActionError
	if !errors.As(err, &ae) || ae.Kind != KindNavigation || !strings.Contains(ae.Reason, "failed: connection refused; check the URL, and that its server is up") {
		t.Fatalf("goto to nothing listening: %v; want a navigation failure naming connection refused", err)
	}

	gotoPage(t, b, srv.URL+"/start")
	s := snap(t, b, SnapshotOptions{})
	_, err = runErr(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Gone")))
	if !errors.As(err, &ae) || ae.Kind != KindNavigation || !strings.Contains(ae.Reason, "/gone failed: connection refused") {
		t.Fatalf("click to nothing listening: %v; want a navigation failure naming connection refused", err)
	}

	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q}]`, srv.URL+"/forged"))
	if res.Title != "Forged" {
		t.Fatalf("a site sending the mark itself: title %q, want its page", res.Title)
	}

	_, err = runErr(t, b, fmt.Sprintf(`[{"op":"goto","url":"http://%s/x"}]`, service))
	var be *BlockedError
	if !errors.As(err, &be) || be.Rule != string(netguard.RuleService) {
		t.Fatalf("goto to a service: %v; want blocked by rule service", err)
	}
}

// A goto whose answer is a file to save answers ok, stays on the page it
// was on and names the download; one Chrome aborts for another reason (a
// 204) still fails. (A PDF is shown by the full browser's viewer and saved
// by the headless shell: saved, it is this same aborted navigation.)
func TestGotoThatDownloads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/report":
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
			fmt.Fprint(w, "a,b\n1,2\n")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<title>Start</title><p>Here</p>`)
		}
	}))
	defer srv.Close()
	b := attach(t, Options{DownloadDir: t.TempDir()})
	gotoPage(t, b, srv.URL+"/start")
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q}]`, srv.URL+"/report"))
	if res.URL != srv.URL+"/start" || res.Title != "Start" || len(res.Downloads) != 1 || res.Downloads[0] != "report.csv" {
		t.Fatalf("goto an attachment: at %s %q, downloads %q; want still at /start, report.csv begun", res.URL, res.Title, res.Downloads)
	}
	dls, err := b.Downloads(ctxT(t)) // waits for downloads under way
	if err != nil || len(dls) != 1 || dls[0].Name != "report.csv" || dls[0].Size != 8 {
		t.Fatalf("downloads %+v, %v; want report.csv, 8 bytes", dls, err)
	}

	_, err = runErr(t, b, fmt.Sprintf(`[{"op":"goto","url":%q}]`, srv.URL+"/empty"))
	var ae *ActionError
	if !errors.As(err, &ae) || ae.Kind != KindNavigation || !strings.Contains(ae.Reason, "net::ERR_ABORTED; check the URL") {
		t.Fatalf("goto a 204: %v; want the navigation failure as before", err)
	}
}
