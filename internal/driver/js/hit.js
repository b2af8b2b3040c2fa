// Run on an element (this). Scrolls it into view if needed and checks that
// the point at its centre reaches it. Returns {ok:true}; {err:"gone"} (left
// the document), {err:"zero"} (no size) or {err:"offscreen"}; {hover:true}
// when the point reaches an element holding it, which it is hidden in
// until hovered (visibility); or {covered:"tag#id.class \"text\""} naming
// what is on top of it.
function hit(){
const el=this;
if(!el.isConnected) return {err:"gone"};
let r=el.getBoundingClientRect();
if(r.width===0||r.height===0) return {err:"zero"};
const vw=window.innerWidth, vh=window.innerHeight;
if(r.top<0||r.left<0||r.bottom>vh||r.right>vw){ el.scrollIntoView({block:"center",inline:"center"}); r=el.getBoundingClientRect(); }
const x=r.left+r.width/2, y=r.top+r.height/2;
const root=el.getRootNode();
let hit=(root&&root.elementFromPoint)?root.elementFromPoint(x,y):document.elementFromPoint(x,y);
for(let i=0;i<20&&hit&&hit.shadowRoot;i++){const h=hit.shadowRoot.elementFromPoint(x,y); if(!h||h===hit) break; hit=h;}
if(!hit) return {err:"offscreen"};
for(let n=hit;n;n=n.parentNode||n.host){ if(n===el) return {ok:true}; }
const lab=hit.closest&&hit.closest("label"); if(lab&&lab.control===el) return {ok:true};
if(getComputedStyle(el).visibility==="hidden"){for(let n=el.parentNode||el.host;n;n=n.parentNode||n.host){ if(n===hit) return {hover:true}; }}
let d=hit.tagName.toLowerCase(); if(hit.id) d+="#"+hit.id;
if(typeof hit.className==="string"&&hit.className.trim()) d+="."+hit.className.trim().split(/\s+/).slice(0,2).join(".");
const t=(hit.innerText||hit.textContent||"").trim().replace(/\s+/g," ").slice(0,40); if(t) d+=' "'+t+'"';
return {covered:d};
}
