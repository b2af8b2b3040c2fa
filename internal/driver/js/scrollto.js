// Run on an element (this). Scrolls it to the viewport's middle. Returns
// "", or "gone" when it left the document.
function scrollTo(){ if(!this.isConnected) return "gone"; this.scrollIntoView({block:"center", inline:"nearest"}); return "" }
