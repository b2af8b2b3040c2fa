// Run as a script on each new document of a tab, in an isolated world,
// with data ({origin: {l: local, s: session}}) and the marker key. Puts the
// document's origin's saved storage back the first time the tab shows that
// origin (keys the page already has win) and sets the marker in session
// storage. Returns nothing.
function seed(data, mark) { try {
  const d = data[location.origin]; const m = mark;
  if (!d || sessionStorage.getItem(m)) return;
  for (const [k, v] of Object.entries(d.l || {})) if (localStorage.getItem(k) === null) localStorage.setItem(k, v);
  for (const [k, v] of Object.entries(d.s || {})) if (sessionStorage.getItem(k) === null) sessionStorage.setItem(k, v);
  sessionStorage.setItem(m, "1");
} catch (e) {} }
