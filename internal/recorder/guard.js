// The recorder's guard, run in an isolated world of every frame (the page's
// own scripts cannot see or change it). It reports, through the binding
// named by BINDING, every moment a credential field is touched (before its
// value changes), and answers checks: does any credential field of this
// document, its open shadow roots or same-origin frames hold a value, does a
// visible cross-origin frame hide one, does a typed secret show?
(() => {
  const g = globalThis;
  if (g.__dbrec) return;
  const report = g[BINDING];
  if (typeof report !== 'function') return;
  const send = (o) => { try { report(JSON.stringify(o)); } catch (e) {} };
  const autocompletes = ['current-password', 'new-password', 'one-time-code', 'cc-number', 'cc-csc'];
  const names = /pass(word|wd|code)|(^|[^a-z])pwd([^a-z]|$)|otp|one.?time|totp|cvv|cvc|csc/i;
  const credential = (el) => {
    if (!el || el.nodeType !== 1 || el.localName !== 'input') return false;
    const type = (el.getAttribute('type') || '').trim().toLowerCase();
    if (type === 'hidden') return false;
    if (type === 'password' || el.type === 'password') return true;
    const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
    if (autocompletes.some((w) => ac.includes(w))) return true;
    return names.test(el.getAttribute('name') || '') || names.test(el.id || '');
  };
  // Capture listeners see the event before the page's handlers and, for
  // keydown, beforeinput, paste and drop, before the value changes.
  for (const type of ['keydown', 'beforeinput', 'input', 'paste', 'drop', 'compositionstart', 'change']) {
    g.addEventListener(type, (e) => {
      const t = e.composedPath ? e.composedPath()[0] : e.target;
      if (credential(t)) send({k: 'mark', t: Date.now()});
    }, true);
  }
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const w = el.ownerDocument.defaultView;
    if (r.bottom <= 0 || r.right <= 0 || (w && (r.top >= w.innerHeight || r.left >= w.innerWidth))) return false;
    const s = w && w.getComputedStyle(el);
    return !s || (s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0');
  };
  const has = (text, secrets) => secrets.some((s) => text && text.includes(s));
  const scan = (root, secrets, depth) => {
    if (depth > 8) return 'credential';
    const walker = (root.ownerDocument || root).createTreeWalker(root, 1);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      const tag = el.localName;
      if (tag === 'input' || tag === 'textarea') {
        const v = el.value;
        if (v && tag === 'input' && credential(el)) return 'credential';
        if (v && has(v, secrets)) return 'secret_typed';
      } else if (tag === 'iframe' || tag === 'frame') {
        let d = null;
        try { d = el.contentDocument; } catch (e) {}
        if (d && d.documentElement) {
          const r = scan(d.documentElement, secrets, depth + 1);
          if (r) return r;
        } else if (!d && visible(el)) {
          return 'cross_origin_frame';
        }
      }
      if (el.shadowRoot) {
        const r = scan(el.shadowRoot, secrets, depth + 1);
        if (r) return r;
      }
    }
    return null;
  };
  g.__dbrec = {
    check(id, secrets) {
      let reason = null;
      try {
        reason = scan(document.documentElement || document, secrets, 0);
        if (!reason && secrets.length && has(document.documentElement && document.documentElement.textContent, secrets)) reason = 'secret_typed';
      } catch (e) {
        reason = 'uncheckable';
      }
      send({k: 'check', id, now: Date.now(), reason});
    },
  };
})();
