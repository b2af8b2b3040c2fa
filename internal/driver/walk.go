package driver

import (
	_ "embed" // walk.js
	"strings"
)

// walkSource is walk.js, the page-side walker. It is one named function
// declaration, so the file is JavaScript that tools can read and lint.
//
//go:embed walk.js
var walkSource string

// walkJS runs in an isolated world of one frame (the page's own scripts
// cannot reach it) and returns that frame's document as a compact tree, as
// a JSON string: one walk of the DOM and open shadow roots instead of
// Chrome's full accessibility tree, which costs ~10x more on big pages.
//
// Each element it reports is kept in globalThis.__dbSnap.els (in the
// isolated world, so a hostile page cannot swap them) under its index "i";
// actions resolve an id to its element through that array lazily. A
// password field's value never leaves the page: only the "pw" flag does.
//
// Node fields: r role, n name, i element index, c children, t text,
// lv heading level, ck checked, pr pressed, ex expanded, f flags, v value,
// pw password with a value, h link href, fr frame owner, o/no select
// options (first 12, count), sc the scope element, cl clickable.
var walkJS = strings.TrimSpace(walkSource)

// resolveJS hands back element i of snapshot key, or null when the frame
// has taken a newer snapshot or the element left the document.
const resolveJS = `function(key,i){const s=globalThis.__dbSnap;if(!s||s.k!==key)return null;const el=s.els[i];return el&&el.isConnected?el:null;}`
