// Run on an element (this). Returns true when it is in the document and
// has a box of some size.
function visible(){ const r=this.getBoundingClientRect(); return this.isConnected && r.width>0 && r.height>0; }
