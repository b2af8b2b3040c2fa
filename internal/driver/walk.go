package driver

// walkJS (js/walk.js) runs in an isolated world of one frame (the page's own scripts
// cannot reach it) and returns that frame's document as a compact tree, as
// a JSON string: one walk of the DOM and open shadow roots instead of
// Chrome's full accessibility tree, which costs ~10x more on big pages.
//
// Each element it reports gets a number that stays with it for the life
// of the document (a WeakMap in the isolated world, which the page's own
// scripts cannot reach, so they cannot swap elements under an id); the
// numbers the latest walk saw are kept in globalThis.__dbSnap.els, and
// actions resolve an id to its element through it lazily. Each document
// also gets a random token ("d"), so the driver can tell a frame's new
// document from the old. A password field's value never leaves the page:
// only the "pw" flag does. snode (snapshot.go) says what each field holds.
var walkJS = program("walk.js")

// resolveJS (js/resolve.js) hands back element number i, or null when the
// frame's latest walk did not see it or it left the document.
var resolveJS = program("resolve.js")
