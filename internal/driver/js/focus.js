// Run on an element (this). Focuses it and either selects all its text
// (selectAll) or puts the caret at the end of it, a field's or a
// contenteditable's alike. Returns "" when it has focus, "gone" when it
// left the document, "notfocusable" when focus went elsewhere.
function focus(selectAll){
const el=this;
if(!el.isConnected) return "gone";
el.scrollIntoView({block:"nearest",inline:"nearest"});
el.focus();
const doc=el.ownerDocument, act=(el.getRootNode().activeElement||doc.activeElement);
if(act!==el && !el.contains(act)) return "notfocusable";
if(selectAll){
 if(typeof el.select==="function" && ("value" in el)) { try{ el.select(); }catch(e){} }
 else if(el.isContentEditable){ const r=doc.createRange(); r.selectNodeContents(el); const s=doc.getSelection(); s.removeAllRanges(); s.addRange(r); }
} else if (("value" in el) && typeof el.setSelectionRange==="function") {
 try{ const n=el.value.length; el.setSelectionRange(n,n); }catch(e){}
} else if (el.isContentEditable) {
 // Typed text goes after what the element holds, as in a field: focus
 // alone leaves the caret at its start (or wherever it was last).
 const r=doc.createRange(); r.selectNodeContents(el); r.collapse(false); const s=doc.getSelection(); s.removeAllRanges(); s.addRange(r);
}
return "";
}
