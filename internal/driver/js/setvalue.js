// Run on an input (this) that takes its value directly. Sets it to v and
// fires input and change. Returns "" when the input kept v, "rejected" when
// it did not (a value outside its format).
function setValue(v){ this.focus(); this.value=v; this.dispatchEvent(new Event("input",{bubbles:true})); this.dispatchEvent(new Event("change",{bubbles:true})); return this.value===v ? "" : "rejected"; }
