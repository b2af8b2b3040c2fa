// Evaluated in a page, called with the text wanted. Returns a bounded
// excerpt of the body's visible text around its first occurrence (up to
// 80 characters either side, "..." where cut), or null when it is absent.
function excerpt(want){
  const t = document.body ? document.body.innerText : "";
  const i = t.indexOf(want);
  if (i < 0) return null;
  const from = Math.max(0, i - 80), to = Math.min(t.length, i + want.length + 80);
  return (from > 0 ? "..." : "") + t.slice(from, to).replace(/\s+/g, " ").trim() + (to < t.length ? "..." : "");
}
