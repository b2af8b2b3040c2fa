// Run on an element (this). Returns its checked state: "true" or "false"
// (an input's checked, else aria-checked or aria-pressed, e.g. "mixed"), or
// "none" when it is not a checkbox, radio or switch.
function checked(){ const el=this;
if("checked" in el && el.tagName.toLowerCase()==="input") return el.checked?"true":"false";
const a=el.getAttribute("aria-checked")||el.getAttribute("aria-pressed"); return a===null?"none":a; }
