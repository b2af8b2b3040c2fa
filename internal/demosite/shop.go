package demosite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// The shop is the demo agent's task: sign in with the test account, search,
// add to the cart, check out, read the confirmation. State lives in memory,
// per sign-in cookie.

// ShopEmail and ShopPassword are the shop's test account.
const (
	ShopEmail    = "agent@example.com"
	ShopPassword = "demo-shop-pass"
)

// Product is one thing the shop sells.
type Product struct {
	ID    string
	Name  string
	Cents int
}

var products = []Product{
	{"lamp", "Desk lamp", 2900},
	{"mug", "Coffee mug", 1200},
	{"chair", "Office chair", 14900},
	{"notebook", "Paper notebook", 600},
}

// Order is one checked-out cart.
type Order struct {
	N     int
	Email string
	Items []string
	Cents int
}

type shop struct {
	mu       sync.Mutex
	sessions map[string]*shopper // by cookie
	orders   []Order
}

type shopper struct {
	email string
	cart  []string // product ids
}

func newShop() *shop { return &shop{sessions: map[string]*shopper{}} }

func (s *Site) registerShop() {
	s.shop = newShop()
	s.mux.HandleFunc("GET /shop/{$}", s.shopHome)
	s.mux.HandleFunc("POST /shop/signin", s.shopSignin)
	s.mux.HandleFunc("GET /shop/search", s.signedIn(s.shopSearch))
	s.mux.HandleFunc("POST /shop/cart", s.signedIn(s.shopCart))
	s.mux.HandleFunc("GET /shop/checkout", s.signedIn(s.shopCheckout))
	s.mux.HandleFunc("POST /shop/order", s.signedIn(s.shopOrder))
	s.mux.HandleFunc("GET /shop/order/{n}", s.shopConfirmation)
}

// ShopSessions returns the value of every sign-in cookie the shop handed
// out (tests look for them where they must not be).
func (s *Site) ShopSessions() []string {
	s.shop.mu.Lock()
	defer s.shop.mu.Unlock()
	out := make([]string, 0, len(s.shop.sessions))
	for id := range s.shop.sessions {
		out = append(out, id)
	}
	return out
}

// Orders returns a copy of every order placed so far.
func (s *Site) Orders() []Order {
	s.shop.mu.Lock()
	defer s.shop.mu.Unlock()
	return append([]Order(nil), s.shop.orders...)
}

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s · Demo Shop</title></head><body><header><nav><a href="/shop/">Demo Shop</a></nav></header><main>%s</main></body></html>`,
		html.EscapeString(title), body)
}

func (s *Site) shopper(r *http.Request) *shopper {
	c, err := r.Cookie("shop")
	if err != nil {
		return nil
	}
	s.shop.mu.Lock()
	defer s.shop.mu.Unlock()
	return s.shop.sessions[c.Value]
}

// signedIn serves fn to a signed-in shopper and sends anyone else to sign
// in. A POST is a submission, recorded whoever sent it.
func (s *Site) signedIn(fn func(w http.ResponseWriter, r *http.Request, sh *shopper)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.Record(r)
		}
		sh := s.shopper(r)
		if sh == nil {
			http.Redirect(w, r, "/shop/", http.StatusSeeOther)
			return
		}
		fn(w, r, sh)
	}
}

func (s *Site) shopHome(w http.ResponseWriter, r *http.Request) {
	page(w, "Sign in", `<h1>Sign in</h1><p>Test account: `+ShopEmail+`</p>
<form method="post" action="/shop/signin">
<label>Email <input type="email" name="email" required></label>
<label>Password <input type="password" name="password" required></label>
<button type="submit">Sign in</button>
</form>`)
}

func (s *Site) shopSignin(w http.ResponseWriter, r *http.Request) {
	s.Record(r)
	if r.PostFormValue("email") != ShopEmail || r.PostFormValue("password") != ShopPassword {
		w.WriteHeader(http.StatusUnauthorized)
		page(w, "Sign in failed", `<h1>Sign in failed</h1><p>Wrong email or password.</p><p><a href="/shop/">Try again</a></p>`)
		return
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	s.shop.mu.Lock()
	s.shop.sessions[id] = &shopper{email: ShopEmail}
	s.shop.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "shop", Value: id, Path: "/shop/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/shop/search", http.StatusSeeOther)
}

func (s *Site) shopSearch(w http.ResponseWriter, r *http.Request, sh *shopper) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	var b strings.Builder
	s.shop.mu.Lock()
	n := len(sh.cart)
	var mine []Order
	for _, o := range s.shop.orders {
		if o.Email == sh.email {
			mine = append(mine, o)
		}
	}
	s.shop.mu.Unlock()
	fmt.Fprintf(&b, `<h1>Search</h1><p>Signed in as %s. In your cart: %d. <a href="/shop/checkout">Check out</a></p>
<form method="get" action="/shop/search"><label>Search <input type="search" name="q" value="%s"></label> <button type="submit">Search</button></form>`,
		html.EscapeString(sh.email), n, html.EscapeString(q))
	// The account's orders, whichever browser placed them: how an agent
	// that lost an answer finds out whether its order went through.
	if len(mine) == 0 {
		b.WriteString(`<p>Your orders: none yet.</p>`)
	} else {
		b.WriteString(`<h2>Your orders</h2><ul>`)
		for _, o := range mine {
			fmt.Fprintf(&b, `<li><a href="/shop/order/%d">Order #%d</a>: %s, %s</li>`, o.N, o.N, html.EscapeString(strings.Join(o.Items, ", ")), price(o.Cents))
		}
		b.WriteString(`</ul>`)
	}
	if q != "" {
		var hits []Product
		for _, p := range products {
			if strings.Contains(strings.ToLower(p.Name), strings.ToLower(q)) {
				hits = append(hits, p)
			}
		}
		fmt.Fprintf(&b, `<h2>%d results for "%s"</h2><ul>`, len(hits), html.EscapeString(q))
		for _, p := range hits {
			fmt.Fprintf(&b, `<li>%s, %s <form method="post" action="/shop/cart"><input type="hidden" name="product" value="%s"><input type="hidden" name="q" value="%s"><button type="submit">Add %s to cart</button></form></li>`,
				html.EscapeString(p.Name), price(p.Cents), p.ID, html.EscapeString(q), html.EscapeString(p.Name))
		}
		b.WriteString(`</ul>`)
	}
	page(w, "Search", b.String())
}

func (s *Site) shopCart(w http.ResponseWriter, r *http.Request, sh *shopper) {
	id := r.PostFormValue("product")
	if _, ok := product(id); ok {
		s.shop.mu.Lock()
		sh.cart = append(sh.cart, id)
		s.shop.mu.Unlock()
	}
	http.Redirect(w, r, "/shop/search?q="+url.QueryEscape(r.PostFormValue("q")), http.StatusSeeOther)
}

func (s *Site) shopCheckout(w http.ResponseWriter, r *http.Request, sh *shopper) {
	s.shop.mu.Lock()
	cart := append([]string(nil), sh.cart...)
	s.shop.mu.Unlock()
	var b strings.Builder
	b.WriteString(`<h1>Check out</h1>`)
	if len(cart) == 0 {
		b.WriteString(`<p>Your cart is empty. <a href="/shop/search">Search</a></p>`)
		page(w, "Check out", b.String())
		return
	}
	total := 0
	b.WriteString(`<ul>`)
	for _, id := range cart {
		p, _ := product(id)
		total += p.Cents
		fmt.Fprintf(&b, `<li>%s, %s</li>`, html.EscapeString(p.Name), price(p.Cents))
	}
	fmt.Fprintf(&b, `</ul><p>Total: %s</p><form method="post" action="/shop/order"><button type="submit">Place order</button></form>`, price(total))
	page(w, "Check out", b.String())
}

func (s *Site) shopOrder(w http.ResponseWriter, r *http.Request, sh *shopper) {
	s.shop.mu.Lock()
	if len(sh.cart) == 0 {
		s.shop.mu.Unlock()
		http.Redirect(w, r, "/shop/checkout", http.StatusSeeOther)
		return
	}
	o := Order{N: len(s.shop.orders) + 1001, Email: sh.email}
	for _, id := range sh.cart {
		p, _ := product(id)
		o.Items = append(o.Items, p.Name)
		o.Cents += p.Cents
	}
	sh.cart = nil
	s.shop.orders = append(s.shop.orders, o)
	s.shop.mu.Unlock()
	http.Redirect(w, r, "/shop/order/"+strconv.Itoa(o.N), http.StatusSeeOther)
}

func (s *Site) shopConfirmation(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var found *Order
	s.shop.mu.Lock()
	for i := range s.shop.orders {
		if s.shop.orders[i].N == n {
			o := s.shop.orders[i]
			found = &o
		}
	}
	s.shop.mu.Unlock()
	if found == nil {
		http.NotFound(w, r)
		return
	}
	page(w, "Order confirmed", fmt.Sprintf(`<h1>Order #%d confirmed</h1><p>%s, total %s, for %s.</p><p><a href="/shop/search">Keep shopping</a></p>`,
		found.N, html.EscapeString(strings.Join(found.Items, ", ")), price(found.Cents), html.EscapeString(found.Email)))
}

func product(id string) (Product, bool) {
	for _, p := range products {
		if p.ID == id {
			return p, true
		}
	}
	return Product{}, false
}

func price(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
