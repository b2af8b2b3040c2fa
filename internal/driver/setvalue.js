function(v){ this.focus(); this.value=v; this.dispatchEvent(new Event("input",{bubbles:true})); this.dispatchEvent(new Event("change",{bubbles:true})); return this.value===v ? "" : "rejected"; }
