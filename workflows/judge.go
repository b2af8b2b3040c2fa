package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// judgePage asks the page judge (page.judge, the host's or the worker's
// rules) about what a read, a fetch or a search brought back. A page that
// is not content turns the answer into its failure (blocked or
// not_content, with the next step); a page over the injection threshold is
// marked, and a search hit over it loses its snippet. A judge that fails,
// or answers out of shape, leaves the page unjudged: the result stands.
// Histories from before the change (no marker) judge nothing, and those
// from before changeJudgeEmpty no fetch without text. args are the call's.
func (b *Browser) judgePage(ctx workflow.Context, args, res any) *contract.Failure {
	pages := judgeInput(res)
	if f, ok := res.(*contract.WebFetchResult); ok && len(pages) == 0 && emptyFetch(args, f) &&
		workflow.GetVersion(ctx, changeJudgeEmpty, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		pages = []contract.JudgePage{fetchPage(f)}
	}
	if len(pages) == 0 {
		return nil
	}
	if workflow.GetVersion(ctx, changePageJudge, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	var out contract.JudgeResult
	actx := workflow.WithActivityOptions(ctx, summarized(ActivityOptions(contract.ClassRead, contract.SharedQueue, false, b.t), "judge the page read"))
	if err := workflow.ExecuteActivity(actx, contract.ActivityJudge, contract.JudgeRequest{Pages: pages}).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("page judge failed; the page is left unjudged", "error", err)
		return nil
	}
	if err := out.Check(len(pages)); err != nil {
		workflow.GetLogger(ctx).Warn("page judge answered out of shape; the page is left unjudged", "error", err)
		return nil
	}
	switch r := res.(type) {
	case *contract.ReadResult:
		if f := out.Pages[0].Failure(r.URL); f != nil {
			return f
		}
		r.Injection = out.Pages[0].FlagInjection()
	case *contract.WebFetchResult:
		if f := out.Pages[0].Failure(r.FinalURL); f != nil {
			return f
		}
		r.Injection = out.Pages[0].FlagInjection()
	case *contract.WebSearchResult:
		for i, j := range out.Pages {
			if flag := j.FlagInjection(); flag != nil {
				r.Hits[i].Snippet, r.Hits[i].Withheld = "", flag.Note
			}
		}
	}
	return nil
}

// judgeInput is what the judge is sent about a result: the page of a read
// of its content or of a fetch, or each hit of a search. Nil for anything
// else (a read of the URL or title, raw bytes, a search with no hits).
func judgeInput(res any) []contract.JudgePage {
	clip := func(s string) string {
		r := []rune(s)
		if len(r) > contract.MaxJudgeText {
			return string(r[:contract.MaxJudgeText])
		}
		return s
	}
	switch r := res.(type) {
	case *contract.ReadResult:
		if r.What != "markdown" && r.What != "text" {
			return nil
		}
		return []contract.JudgePage{{URL: r.URL, Status: r.Status, ContentType: "text/html", Title: r.Title, Text: clip(r.Content)}}
	case *contract.WebFetchResult:
		if r.IsPDF || r.Content == "" {
			return nil
		}
		p := fetchPage(r)
		p.Text = clip(p.Text)
		return []contract.JudgePage{p}
	case *contract.WebSearchResult:
		var out []contract.JudgePage
		for _, h := range r.Hits {
			out = append(out, contract.JudgePage{URL: h.URL, Title: h.Title, Text: clip(h.Snippet)})
		}
		return out
	}
	return nil
}

// emptyFetch says a web_fetch read as markdown brought back no text: a
// raw fetch has no text by design (its bytes are filed), and a PDF read as
// markdown says only that it is one.
func emptyFetch(args any, f *contract.WebFetchResult) bool {
	a, ok := contract.ArgsOf[contract.WebFetchArgs](args)
	return ok && a.Format != "raw" && !f.IsPDF && f.Content == ""
}

// fetchPage is what the judge is sent about a fetched page.
func fetchPage(r *contract.WebFetchResult) contract.JudgePage {
	return contract.JudgePage{URL: r.FinalURL, Status: r.Status, ContentType: r.ContentType, Title: r.Title, Text: r.Content}
}
