// Package pagejudge is the rule-based page judge the worker serves as
// page.judge when the host brings no judge of its own: it names pages that
// are not the content a reader came for (bot checks, sign-in walls, ...)
// from their status and short text, and scores text that addresses
// instructions to an AI reader. Rules miss what a model would catch; they
// are a floor, not a ceiling.
package pagejudge

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/durable-browser/durable-browser/contract"
)

// shortPage bounds the text under which a page's wording alone may name its
// kind: an article that mentions a CAPTCHA is still an article.
const shortPage = 1500

type rule struct {
	kind string
	re   *regexp.Regexp
}

// kindRules are tried in order on short pages; the first match names the kind.
var kindRules = []rule{
	{contract.PageCaptcha, regexp.MustCompile(`(?i)\b(captcha|recaptcha|hcaptcha|verify (that )?you are (a )?human|are you a robot|not a robot|checking your browser|unusual traffic from your (computer|network)|press (and|&) hold|bot (check|protection)|security check to continue)\b`)},
	{contract.PageRegionBlock, regexp.MustCompile(`(?i)(not available in your (country|region|location)|unavailable in your (country|region)|in your region|geo.?(block|restrict)|your country is not supported)`)},
	{contract.PageLoginWall, regexp.MustCompile(`(?i)\b((sign|log) ?in (to|required to) (continue|view|see|access|read)|please (sign|log) ?in|you must be (signed|logged) in|members only|sign in to your account to continue)\b`)},
	{contract.PagePaywall, regexp.MustCompile(`(?i)(subscribe to (continue|read|keep reading)|subscribers only|for subscribers|already a subscriber|this (article|content) is for (paid )?(subscribers|members)|start your (free )?trial to (read|continue))`)},
	{contract.PageConsent, regexp.MustCompile(`(?i)(before you continue|we value your privacy|(manage|cookie) (preferences|settings)|accept (all )?cookies|this (site|website) uses cookies)`)},
	{contract.PageErrorNotFound, regexp.MustCompile(`(?i)(\b404\b|page not found|not found on this server|page (you requested )?(does not|doesn't) exist|internal server error|service unavailable|bad gateway|something went wrong)`)},
	{contract.PageLoading, regexp.MustCompile(`(?i)(enable javascript|javascript is (required|disabled)|requires javascript|you need to enable javascript|^\s*loading\s*(\.\.\.|…)?\s*$)`)},
}

// injectionCues are phrasings addressed to an AI reader, each with a weight;
// the probability combines the cues found as independent evidence.
var injectionCues = []struct {
	re *regexp.Regexp
	w  float64
}{
	{regexp.MustCompile(`(?i)\b(ignore|disregard|forget) (all |any )?(the )?(previous|prior|above|earlier|your) (instructions|prompts?|rules|directions)`), 0.8},
	{regexp.MustCompile(`(?i)\b(ai|llm|language model|assistant|agent|chatbot)s?\b[^.\n]{0,40}\b(must|should|are instructed to|need to)\b`), 0.45},
	{regexp.MustCompile(`(?i)\b(if you are|as) an? (ai|llm|language model|ai assistant|ai agent)\b`), 0.6},
	{regexp.MustCompile(`(?i)\b(system prompt|new instructions|developer mode|jailbreak)\b`), 0.4},
	{regexp.MustCompile(`(?i)\bdo not (tell|inform|reveal to) the user\b`), 0.6},
	{regexp.MustCompile(`(?i)(^|\n)\s*(system|assistant)\s*:`), 0.35},
}

// Judge answers about one page.
func Judge(p contract.JudgePage) contract.PageJudgement {
	out := contract.PageJudgement{Kind: kind(p), Injection: injection(p.Text)}
	return out
}

// JudgeAll answers about each page, in order.
func JudgeAll(req contract.JudgeRequest) contract.JudgeResult {
	res := contract.JudgeResult{Pages: make([]contract.PageJudgement, len(req.Pages))}
	for i, p := range req.Pages {
		res.Pages[i] = Judge(p)
	}
	return res
}

func kind(p contract.JudgePage) string {
	switch {
	case p.Status == 451:
		return contract.PageRegionBlock
	case p.Status == 401:
		return contract.PageLoginWall
	case p.Status == 402:
		return contract.PagePaywall
	case p.Status == 404 || p.Status == 410 || p.Status >= 500:
		return contract.PageErrorNotFound
	}
	text := strings.TrimSpace(p.Title + "\n" + p.Text)
	if len(p.Text) <= shortPage {
		for _, r := range kindRules {
			if r.re.MatchString(text) {
				return r.kind
			}
		}
	}
	if p.Status == 403 || p.Status == 429 {
		return contract.PageCaptcha
	}
	if words(p.Title+" "+p.Text) < 3 {
		return contract.PageEmpty
	}
	return contract.PageNone
}

func injection(text string) float64 {
	miss := 1.0
	for _, c := range injectionCues {
		if c.re.MatchString(text) {
			miss *= 1 - c.w
		}
	}
	return float64(int((1-miss)*100+0.5)) / 100
}

func words(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}
