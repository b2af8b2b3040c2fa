function(){ const el=this;
if("checked" in el && el.tagName.toLowerCase()==="input") return el.checked?"true":"false";
const a=el.getAttribute("aria-checked")||el.getAttribute("aria-pressed"); return a===null?"none":a; }
