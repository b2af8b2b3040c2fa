// Run on a <select> (this). Picks the options matching values (by value,
// then label, then text) and fires input and change. Returns {ok:true}, or
// {err:"notselect"|"disabled"|"single"}, or {err:"missing", value, have}
// with the first 15 options' labels.
function selectValues(values){
const el=this;
if(el.tagName.toLowerCase()!=="select") return {err:"notselect"};
if(el.disabled) return {err:"disabled"};
const opts=Array.from(el.options);
const picked=[];
for(const v of values){
  const o=opts.find(o=>o.value===v)||opts.find(o=>o.label.trim()===v.trim())||opts.find(o=>o.textContent.trim()===v.trim());
  if(!o) return {err:"missing", value:v, have:opts.slice(0,15).map(o=>o.label.trim()||o.value)};
  picked.push(o);
}
if(picked.length>1&&!el.multiple) return {err:"single"};
for(const o of opts) o.selected=picked.includes(o);
el.dispatchEvent(new Event("input",{bubbles:true}));
el.dispatchEvent(new Event("change",{bubbles:true}));
return {ok:true};
}
