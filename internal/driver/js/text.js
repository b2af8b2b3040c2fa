// Run on an element (this). Returns {v: its rendered text}, or {gone:true}
// when it left the document.
function text(){ if(!this.isConnected) return {gone:true}; return {v: (this.innerText !== undefined ? this.innerText : this.textContent) || ""}; }
