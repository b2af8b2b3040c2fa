// Run in an isolated world of one frame with (scopeIdx, maxNodes, start):
// start 0 walks the document from its body, 1 from the scope element, 2
// from the element around it (a heading's section is in it); a walk that
// starts at the scope reads it past what a whole walk's bound reaches.
// Returns the frame's document as a JSON string {d: document token, u: URL,
// ti: title, c: tree, cut: whether maxNodes cut it, deep: whether parts
// nested over 300 deep were left out}; node fields are listed
// beside walkJS in walk.go. Keeps the elements it numbered in
// globalThis.__dbSnap.els for resolve.js.
function walkSnapshot(scopeIdx, maxNodes, start){
const old=globalThis.__dbSnap;
const scopeEl=(old&&scopeIdx>0)?old.els.get(scopeIdx):null;
// Numbers stay with elements for the document's life; this world is the document's.
if(!globalThis.__dbIds){globalThis.__dbIds=new WeakMap();globalThis.__dbN=0;globalThis.__dbDoc=Math.random().toString(36).slice(2)+Date.now().toString(36);}
const ids=globalThis.__dbIds;
const els=new Map();
const num=(el)=>{let n=ids.get(el);if(n===undefined){n=++globalThis.__dbN;ids.set(el,n);}els.set(n,el);return n;};
let budget=maxNodes, cut=false, deep=false;
const doc=document;
let act=doc.activeElement;
for(let i=0;i<30&&act&&act.shadowRoot&&act.shadowRoot.activeElement;i++) act=act.shadowRoot.activeElement;
const SKIP=new Set(["script","style","noscript","template","head","meta","link","title","base","svg","math","canvas","object","embed","param","source","track","datalist"]);
const BLOCK=new Set(["div","p","li","br","td","th","tr","h1","h2","h3","h4","h5","h6","section","article","header","footer","nav","main","ul","ol","table","dd","dt","blockquote","pre","form","fieldset","option"]);
const FROM_CONTENT=new Set(["button","link","heading","cell","columnheader","rowheader","option","tab","menuitem","menuitemcheckbox","menuitemradio","checkbox","radio","switch","treeitem","tooltip","DisclosureTriangle","legend","caption","term","row","gridcell"]);
const GENERIC=new Set(["","generic","none","presentation"]);
// Roles a person acts on (render.go's interactiveRoles).
const INTERACTIVE=new Set(["button","link","textbox","searchbox","combobox","listbox","option","checkbox","radio","switch","slider","spinbutton","menuitem","menuitemcheckbox","menuitemradio","tab","treeitem","DisclosureTriangle","ColorWell","Date","DateTime","InputTime","clickable"]);
const ROLES=new Set(["alert","alertdialog","application","article","banner","blockquote","button","caption","cell","checkbox","code","columnheader","combobox","complementary","contentinfo","definition","deletion","dialog","directory","document","emphasis","feed","figure","form","generic","grid","gridcell","group","heading","img","image","insertion","link","list","listbox","listitem","log","main","marquee","math","menu","menubar","menuitem","menuitemcheckbox","menuitemradio","meter","navigation","none","note","option","paragraph","presentation","progressbar","radio","radiogroup","region","row","rowgroup","rowheader","scrollbar","search","searchbox","separator","slider","spinbutton","status","strong","subscript","superscript","switch","tab","table","tablist","tabpanel","term","textbox","time","timer","toolbar","tooltip","tree","treegrid","treeitem"]);
const clip=(s,n)=>{s=String(s==null?"":s).replace(/\s+/g," ").trim();return s.length>n?s.slice(0,n):s;};
// Text that may hold a secret leaves the page with SLACK characters more
// than its bound: Go redacts it, then cuts to the bound, so a secret of up to
// SLACK characters straddling the bound is hidden whole.
const SLACK=256;
function textOf(root, skip){
 let out="";
 const w=(n)=>{
  if(out.length>400) return;
  if(n.nodeType===3){out+=n.data;return;}
  if(n.nodeType!==1&&n.nodeType!==11) return;
  if(n===skip) return;
  if(n.nodeType===1){
   const t=n.localName;
   if(SKIP.has(t)) return;
   if(n.getAttribute("aria-hidden")==="true") return;
   if(t==="img"||t==="area"){out+=" "+(n.getAttribute("aria-label")||n.getAttribute("alt")||(n.hasAttribute("alt")?"":n.getAttribute("title"))||"")+" ";return;}
   if(t==="svg"){out+=" "+svgName(n)+" ";return;}
   if(n!==root&&(t==="input"||t==="select"||t==="textarea")) return;
   if(BLOCK.has(t)) out+=" ";
   if(n.shadowRoot){w(n.shadowRoot);return;}
   if(t==="slot"){const a=n.assignedNodes({flatten:true});if(a.length){for(const x of a)w(x);return;}}
  }
  for(let c=n.firstChild;c;c=c.nextSibling) w(c);
  if(n.nodeType===1&&BLOCK.has(n.localName)) out+=" ";
 };
 w(root);
 return out;
}
// An inline svg's name: its aria-label or its <title> (an icon in a link names the link).
function svgName(el){const a=el.getAttribute("aria-label");if(a)return a;const ti=el.querySelector(":scope>title");return ti?ti.textContent:"";}
// Hover reveals: the selectors of the page's :hover rules that make
// something visible, with :hover taken out (pre:hover > .buttons button
// becomes pre > .buttons button), per document or shadow root. An
// element they match is hidden only until the pointer is over it.
const hoverSels=new Map();
function hoverRules(root){
 let sels=hoverSels.get(root);
 if(sels) return sels;
 sels=[];
 const scan=(rules)=>{
  for(const r of rules){
   if(r.selectorText&&r.selectorText.includes(":hover")&&r.style&&r.style.visibility==="visible"){
    for(const part of r.selectorText.split(",")){if(part.includes(":hover"))sels.push(part.replace(/:hover/g,"").trim()||"*");}
   }
   if(r.cssRules&&r.cssRules.length) scan(r.cssRules);
  }
 };
 const sheets=[...(root.styleSheets||[]),...(root.adoptedStyleSheets||[])];
 for(const sh of sheets){try{scan(sh.cssRules);}catch(e){/* a cross-origin sheet: its rules cannot be read */}}
 hoverSels.set(root,sels);
 return sels;
}
function hoverReveals(el){
 const sels=hoverRules(el.getRootNode());
 for(const s of sels){try{if(el.matches(s))return true;}catch(e){/* not a selector without :hover */}}
 return false;
}
// The labels of a control, as el.labels has them, from one map per
// document or shadow root: el.labels searches the whole tree the first
// time each control asks, which on a page of thousands of fields or
// buttons made one walk take seconds.
const labelMaps=new Map();
function labelsOf(el){
 const root=el.getRootNode();
 let m=labelMaps.get(root);
 if(!m){
  m=new Map();
  if(root.querySelectorAll){for(const l of root.querySelectorAll("label")){const c=l.control;if(c){const a=m.get(c);if(a)a.push(l);else m.set(c,[l]);}}}
  labelMaps.set(root,m);
 }
 return m.get(el)||[];
}
function byId(el,id){const r=el.getRootNode();return (r&&r.getElementById&&r.getElementById(id))||doc.getElementById(id);}
function inSectioning(el){for(let p=el.parentElement;p;p=p.parentElement){const t=p.localName;if(t==="article"||t==="aside"||t==="main"||t==="nav"||t==="section")return true;}return false;}
function implicitRole(el,t){
 switch(t){
 case "a": case "area": return el.hasAttribute("href")?"link":"";
 case "button": return "button";
 case "input": {
  const ty=(el.getAttribute("type")||"text").toLowerCase();
  switch(ty){
  case "hidden": return null;
  case "button": case "submit": case "reset": case "image": case "file": return "button";
  case "checkbox": return "checkbox";
  case "radio": return "radio";
  case "range": return "slider";
  case "number": return "spinbutton";
  case "color": return "ColorWell";
  case "date": return "Date";
  case "datetime-local": case "month": case "week": return "DateTime";
  case "time": return "InputTime";
  case "search": return el.hasAttribute("list")?"combobox":"searchbox";
  default: return el.hasAttribute("list")?"combobox":"textbox";
  }
 }
 case "textarea": return "textbox";
 case "select": return (el.multiple||el.size>1)?"listbox":"combobox";
 case "option": return "option";
 case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
 case "nav": return "navigation";
 case "main": return "main";
 case "aside": return "complementary";
 case "form": return "form";
 case "search": return "search";
 case "header": return inSectioning(el)?"":"banner";
 case "footer": return inSectioning(el)?"":"contentinfo";
 case "section": return (el.hasAttribute("aria-label")||el.hasAttribute("aria-labelledby")||el.hasAttribute("title"))?"region":"";
 case "article": return "article";
 case "dialog": return "dialog";
 case "ul": case "ol": case "menu": return "list";
 case "li": return "listitem";
 case "table": return "table";
 case "tr": return "row";
 case "td": return "cell";
 case "th": return el.getAttribute("scope")==="row"?"rowheader":"columnheader";
 case "img": return el.getAttribute("alt")===""?"":"image";
 case "p": return "paragraph";
 case "details": case "fieldset": return "group";
 case "summary": return "DisclosureTriangle";
 case "progress": return "progressbar";
 case "meter": return "meter";
 case "hr": return "separator";
 case "blockquote": return "blockquote";
 case "figure": return "figure";
 case "iframe": case "frame": return "iframe";
 case "output": return "status";
 case "video": return "video";
 case "audio": return "audio";
 case "caption": return "caption";
 }
 return "";
}
function nameOf(el,t,role,generic){
 let n="";
 const lb=el.getAttribute("aria-labelledby");
 if(lb){n=lb.split(/\s+/).map(id=>{const x=id&&byId(el,id);return x?textOf(x):"";}).join(" ");}
 if(!clip(n,1)) n=el.getAttribute("aria-label")||"";
 if(generic) return clip(n,200+SLACK);
 if(!clip(n,1)&&t!=="button"){const ls=labelsOf(el);if(ls.length)n=ls.map(l=>textOf(l,el)).join(" ");}
 if(!clip(n,1)){
  if(t==="input"){
   const ty=(el.getAttribute("type")||"").toLowerCase();
   if(ty==="button"||ty==="submit"||ty==="reset") n=el.value||(ty==="submit"?"Submit":ty==="reset"?"Reset":"");
   else if(ty==="image") n=el.getAttribute("alt")||"Submit";
  } else if(t==="img"||t==="area") n=el.getAttribute("alt")||"";
  else if(t==="fieldset"){const l=el.querySelector(":scope>legend");if(l)n=textOf(l);}
  else if(t==="figure"){const l=el.querySelector(":scope>figcaption");if(l)n=textOf(l);}
  else if(t==="table"){const l=el.querySelector(":scope>caption");if(l)n=textOf(l);}
 }
 if(!clip(n,1)&&FROM_CONTENT.has(role)) n=textOf(el);
 if(!clip(n,1)) n=el.getAttribute("title")||"";
 if(!clip(n,1)&&(t==="input"||t==="textarea")) n=el.getAttribute("placeholder")||"";
 return clip(n,200+SLACK);
}
function states(el,t,role,node){
 const a=(k)=>el.getAttribute(k);
 if(role==="heading"){const l=parseInt(a("aria-level")||(t.length===2&&t[0]==="h"?t[1]:"2"),10);if(l>0)node.lv=l;}
 const ty=t==="input"?(a("type")||"text").toLowerCase():"";
 if(ty==="checkbox"||ty==="radio") node.ck=el.indeterminate?"mixed":String(el.checked);
 else if(role==="checkbox"||role==="radio"||role==="switch"||role==="menuitemcheckbox"||role==="menuitemradio") node.ck=a("aria-checked")||"false";
 if(a("aria-pressed")!==null) node.pr=a("aria-pressed");
 if(a("aria-expanded")!==null) node.ex=a("aria-expanded");
 else if(t==="summary"&&el.parentElement&&el.parentElement.localName==="details") node.ex=String(el.parentElement.open);
 const f=[];
 // A file input is a button a person clicks to choose a file: browser_upload chooses it.
 if(ty==="file") f.push("file");
 if((t==="option"&&el.selected)||a("aria-selected")==="true") f.push("selected");
 if(a("aria-disabled")==="true"||((t==="button"||t==="input"||t==="select"||t==="textarea"||t==="option"||t==="fieldset")&&el.matches(":disabled"))) f.push("disabled");
 if(a("aria-required")==="true"||((t==="input"||t==="select"||t==="textarea")&&el.required)) f.push("required");
 if(el===act) f.push("focused");
 if(a("aria-readonly")==="true"||((t==="input"||t==="textarea")&&el.readOnly)) f.push("readonly");
 const inv=a("aria-invalid"); if(inv&&inv!=="false") f.push("invalid");
 if(a("aria-multiselectable")==="true"||(t==="select"&&el.multiple)) f.push("multiselectable");
 if(f.length) node.f=f;
 if(t==="input"||t==="textarea"){
  if(ty==="password"){ if(el.value) node.pw=1; }
  else if(ty==="file"){ if(el.files&&el.files.length) node.v=clip(Array.from(el.files,(x)=>x.name).join(", "),100+SLACK); }
  else if(ty!=="checkbox"&&ty!=="radio"&&el.value) node.v=clip(el.value,100+SLACK);
 } else if(role==="textbox"||role==="searchbox"||role==="combobox"||role==="spinbutton"||role==="slider"){
  const v=a("aria-valuetext")||a("aria-valuenow")||(el.isContentEditable?textOf(el):"");
  if(clip(v,1)) node.v=clip(v,100+SLACK);
 }
 if(role==="link"){const h=el.href;node.h=typeof h==="string"?h:(a("href")||"");}
}
let depth=0;
// inPtr: the element being walked shows a pointer (cursor:pointer), which
// its children inherit; inHover: it is hidden until hovered, and so are they.
let inPtr=false, inHover=false;
function kids(el,out,quiet){
 if(depth>300){deep=true;return;}
 depth++;
 try{
 if(el.shadowRoot){walk(el.shadowRoot,out,quiet);return;}
 if(el.localName==="slot"){const as=el.assignedNodes({flatten:true});if(as.length){for(const n of as)visit(n,out,quiet);return;}}
 walk(el,out,quiet);
 }finally{depth--;}
}
function walk(p,out,quiet){for(let c=p.firstChild;c;c=c.nextSibling) visit(c,out,quiet);}
function visit(n,out,quiet){
 if(budget<=0){cut=true;return;}
 if(n.nodeType===3){ if(quiet) return; const s=clip(n.data,300+SLACK); if(s){budget--;out.push({t:s});} return; }
 if(n.nodeType!==1) return;
 const el=n, t=el.localName;
 if(SKIP.has(t)){
  if(t==="svg"&&el.getAttribute("aria-hidden")!=="true"){const nm=clip(el.getAttribute("aria-label")||"",200+SLACK);if(nm){budget--;out.push({r:"image",n:nm,i:num(el)});}}
  return;
 }
 if(el.getAttribute("aria-hidden")==="true") return;
 let hover=false;
 if(!el.checkVisibility({checkVisibilityCSS:true,visibilityProperty:true})){
  const cs=getComputedStyle(el);
  if(cs.display==="none") return;
  if(cs.display!=="contents"&&cs.visibility==="hidden"&&(inHover||hoverReveals(el))) hover=true;
  else if(cs.display==="contents"||cs.visibility==="hidden"||cs.visibility==="collapse"){kids(el,out,quiet||cs.display!=="contents");return;}
  else if(t!=="area") return;
 }
 const savePtr=inPtr, saveHover=inHover;
 try{
 inHover=hover;
 return visitShown(el,t,out,quiet,hover);
 }finally{inPtr=savePtr;inHover=saveHover;}
}
// visitShown reports an element that is shown (or shown on hover).
function visitShown(el,t,out,quiet,hover){
 let role=null;
 const ar=el.getAttribute("role");
 if(ar){for(const x of ar.trim().split(/\s+/)){if(ROLES.has(x)){role=x==="img"?"image":x;break;}}}
 if(role===null) role=implicitRole(el,t);
 if(role===null) return;
 const editable=el.isContentEditable&&(!el.parentElement||!el.parentElement.isContentEditable);
 if(editable&&GENERIC.has(role)) role="textbox";
 // A label whose checkbox or radio is not shown (a CSS-only toggle) is
 // what a person clicks: it stands for its control.
 const ctl=t==="label"?el.control:null;
 const proxy=ctl&&ctl.localName==="input"&&(ctl.type==="checkbox"||ctl.type==="radio")&&!ctl.checkVisibility({checkVisibilityCSS:true,visibilityProperty:true});
 if(proxy&&GENERIC.has(role)) role=ctl.type;
 let generic=GENERIC.has(role);
 // An element that shows a pointer of its own (not its parent's) is meant
 // to be clicked, whatever its role says: a div a script listens on, a
 // heading that scrolls to the top. A label of a shown control is not
 // (its control is listed).
 const ptr=getComputedStyle(el).cursor==="pointer";
 const ownPtr=ptr&&!inPtr&&!INTERACTIVE.has(role)&&!(t==="label"&&ctl&&!proxy);
 inPtr=ptr;
 const focusable=generic&&((el.hasAttribute("tabindex")&&el.tabIndex>=0)||el.hasAttribute("onclick"));
 const clickable=focusable||(generic&&ownPtr);
 const name=(clickable||proxy)?nameOf(el,t,"button",false):nameOf(el,t,role,generic);
 if(generic&&!clickable){
  if(!name){kids(el,out,quiet||(t==="label"&&!!ctl));return;}
  role="group";generic=false;
 }
 budget--;
 const node={r:clickable?"clickable":role,i:num(el)};
 if(name) node.n=name;
 if(clickable||(ownPtr&&!generic)) node.cl=1;
 if(hover) node.hv=1;
 states(el,t,role,node);
 if(proxy){node.ck=ctl.indeterminate?"mixed":String(ctl.checked);if(ctl.disabled)(node.f=node.f||[]).push("disabled");}
 if(el===scopeEl) node.sc=1;
 const ph=(t==="input"||t==="textarea")?el.getAttribute("placeholder"):null; if(ph) node.ph=clip(ph,200+SLACK);
 const tid=el.getAttribute("data-testid"); if(tid) node.tid=clip(tid,200+SLACK);
 out.push(node);
 if(t==="iframe"||t==="frame"){node.fr=1;return;}
 if(t==="select"){
  const o=el.options, lab=(x)=>clip(x.label||x.textContent,60+SLACK);
  node.no=o.length;
  node.o=Array.from(o).slice(0,12).map(lab);
  if(el.multiple){
   // Every selected option, not only the first: sl holds the first 12,
   // ns how many there are.
   const sel=Array.from(el.selectedOptions);
   node.ns=sel.length;
   node.sl=sel.slice(0,12).map(lab);
  } else if(el.selectedIndex>=0&&o[el.selectedIndex]) node.v=lab(o[el.selectedIndex]);
  return;
 }
 const c=[];
 kids(el,c,quiet||(t==="label"&&!!ctl));
 if(c.length) node.c=c;
 // Shown a pointer but holding controls of its own (a toolbar, a card
 // around its link): the controls are what is clicked.
 if(node.cl&&!focusable&&holdsControl(c)){
  delete node.cl;
  if(node.r==="clickable"){node.r=node.n?"group":"generic";if(node.r==="generic"){out.pop();budget++;for(const x of c)out.push(x);}}
 }
}
function holdsControl(c){for(const x of c){if((x.r&&INTERACTIVE.has(x.r))||(x.c&&holdsControl(x.c)))return true;}return false;}
const root=[];
const top=doc.body||doc.documentElement;
const from=scopeEl&&start&&scopeEl.isConnected?(start===2&&scopeEl.parentElement?scopeEl.parentElement:scopeEl):null;
if(from){
 // A pointer its parent shows is inherited, not its own.
 const up=from.parentElement||(from.parentNode&&from.parentNode.host);
 inPtr=!!up&&getComputedStyle(up).cursor==="pointer";
 visit(from,root,false);
} else if(top) kids(top,root,false);
// The scope stays at hand for a walk that starts at it (start 1 or 2),
// reached by this walk or not.
if(scopeEl&&scopeEl.isConnected&&!els.has(scopeIdx)) els.set(scopeIdx,scopeEl);
globalThis.__dbSnap={els};
return JSON.stringify({d:globalThis.__dbDoc,u:location.href,ti:doc.title,c:root,cut:cut,deep:deep});
}
