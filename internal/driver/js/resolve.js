// Run in the walk's isolated world of a frame. Returns element number i
// of the frame's latest walk, or null when that walk did not see it or it
// left the document.
function resolve(i){const s=globalThis.__dbSnap;if(!s)return null;const el=s.els.get(i);return el&&el.isConnected?el:null;}
