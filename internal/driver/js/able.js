// Run on the element an action names (this), with the action's op. Returns
// "disabled" when the element is disabled (its own disabled, a disabled
// <fieldset> around a form control, as :disabled says, or its own
// aria-disabled="true"), "readonly" when a fill or type meets a read-only
// field (readonly, or aria-readonly="true"), else "".
function able(op){
const el=this;
if(!el.isConnected) return "";
if(el.matches(":disabled")||el.getAttribute("aria-disabled")==="true") return "disabled";
if(op!=="fill"&&op!=="type") return "";
const tag=el.tagName.toLowerCase(), type=(el.getAttribute("type")||"text").toLowerCase();
const field=tag==="textarea"||(tag==="input"&&!["checkbox","radio","file","button","submit","reset","image","hidden","range","color"].includes(type));
if((field&&el.readOnly)||el.getAttribute("aria-readonly")==="true") return "readonly";
return "";
}
