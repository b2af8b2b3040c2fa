package driver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// noisyPage logs 70 console errors and makes 60 requests that answer 404,
// then says it is done.
const noisyPage = `<!doctype html><title>Noisy</title><p id="s">working</p><script>
for (let i = 1; i <= 70; i++) console.error("err " + i);
Promise.all(Array.from({length: 60}, (_, i) => fetch("/missing/" + i).catch(() => {})))
  .then(() => { document.getElementById("s").textContent = "all done"; });
</script>`

// TestListsPastTheBoundSayHowManyMore: console errors and failed requests
// past the 50 an answer lists are not dropped unsaid: a run's list ends
// with a line counting the ones not listed, and a check counts them all.
func TestListsPastTheBoundSayHowManyMore(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, noisyPage)
	}))
	defer srv.Close()
	b := attach(t, Options{})
	mustRun(t, b, `[{"op":"wait","ms":1}]`) // drains what came before
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"all done"}]`, srv.URL+"/"))

	// An event handled a moment after an answer is listed by the next run,
	// so the lists are summed over runs until every line is accounted for.
	more := regexp.MustCompile(`^\((\d+) more (console errors|failed requests) not listed\)$`)
	total := func(lists [][]string, what string) (n int, cut bool) {
		for _, l := range lists {
			if len(l) > maxListed {
				t.Fatalf("%d %s listed, want at most %d: %q", len(l), what, maxListed, l)
			}
			for i, line := range l {
				m := more.FindStringSubmatch(line)
				if m == nil {
					n++
					continue
				}
				if i != len(l)-1 || m[2] != what {
					t.Fatalf("%q: a count of %s is the last line of its list:\n%q", line, what, l)
				}
				k, _ := strconv.Atoi(m[1])
				n += k
				cut = true
			}
		}
		return n, cut
	}
	consoleLists, failedLists := [][]string{res.ConsoleErrors}, [][]string{res.FailedRequests}
	eventually(t, "70 console errors and 60 failed requests accounted for", func() bool {
		nc, _ := total(consoleLists, "console errors")
		nf, _ := total(failedLists, "failed requests")
		if nc >= 70 && nf >= 60 {
			return true
		}
		next := mustRun(t, b, `[{"op":"wait","ms":1}]`)
		consoleLists, failedLists = append(consoleLists, next.ConsoleErrors), append(failedLists, next.FailedRequests)
		return false
	})
	nc, cutC := total(consoleLists, "console errors")
	nf, cutF := total(failedLists, "failed requests")
	if nc != 70 || nf != 60 || !cutC || !cutF {
		t.Fatalf("console errors %d (cut %v), failed requests %d (cut %v); want 70 and 60, both cut:\n%q\n%q", nc, cutC, nf, cutF, consoleLists, failedLists)
	}

	// A check reads the document's lists, which runs do not drain.
	c, err := b.Check(ctxT(t), CheckOptions{NoConsoleErrors: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Verdict.Checks[0].Found; !strings.HasPrefix(got, "70: err 1; err 2;") {
		t.Errorf("no_console_errors found %q, want it to count all 70", got)
	}
	if len(c.ConsoleErrors) != maxListed || c.ConsoleErrors[maxListed-1] != "(21 more console errors not listed)" {
		t.Errorf("check's console errors: %d, last %q; want %d ending with a count of 21 more", len(c.ConsoleErrors), c.ConsoleErrors[len(c.ConsoleErrors)-1], maxListed)
	}
	if len(c.Verdict.Warnings) == 0 || !strings.HasPrefix(c.Verdict.Warnings[0], "60 failed requests (not checked): ") {
		t.Errorf("warnings %q, want the first to count all 60 failed requests", c.Verdict.Warnings)
	}
}
