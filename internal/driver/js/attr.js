// Run on an element (this). Returns {v: attribute n} (value and checked
// read the live property), {} when it has no such attribute, or
// {gone:true} when it left the document.
function attr(n){ if(!this.isConnected) return {gone:true};
if(n==="value" && ("value" in this)) return {v: String(this.value)};
if(n==="checked" && ("checked" in this)) return {v: String(this.checked)};
const a=this.getAttribute(n); return a===null ? {} : {v:a}; }
