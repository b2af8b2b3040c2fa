// Run on a fill target (this). Returns how it takes a value: "select",
// "check" (checkbox or radio), "file", "direct" (date, colour and other
// inputs set by value), "text" (typed into), or "other" (not a field).
function kind(){
const el=this, tag=el.tagName.toLowerCase(), type=(el.getAttribute("type")||"").toLowerCase();
if(tag==="select") return "select";
if(tag==="input"&&["checkbox","radio"].includes(type)) return "check";
if(tag==="input"&&["file"].includes(type)) return "file";
if(tag==="input"&&["date","time","datetime-local","month","week","color","range"].includes(type)) return "direct";
if(tag==="input"||tag==="textarea"||el.isContentEditable) return "text";
return "other";
}
