// Evaluated in a page. Returns its origin's storage as {o: origin, l: local
// storage, s: session storage}, at most 2,000 items and 256 KiB a storage
// area: a page cannot grow its session's saved state beyond that.
function readStorage() {
  const r = {o: location.origin, l: {}, s: {}};
  const read = (st, into) => { try { let n = 0; for (let i = 0; i < st.length && i < 2000; i++) { const k = st.key(i); const v = st.getItem(k); n += k.length + v.length; if (n > 262144) break; into[k] = v; } } catch (e) {} };
  read(localStorage, r.l); read(sessionStorage, r.s);
  return r;
}
