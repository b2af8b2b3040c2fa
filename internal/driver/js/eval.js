// A template, evaluated in a page's main world once the driver put in
// __ARGS__ (a JSON array) and __SOURCE__ (a cell's function or expression;
// it stays inside the async arrow so an expression may await). Calls the
// function with the arguments, or takes the expression's value, and
// returns a promise of the result as a JSON string, null for undefined.
(async () => { const __args = __ARGS__; const __f = (__SOURCE__
); const __r = typeof __f === "function" ? await __f(...__args) : await __f; return __r === undefined ? null : JSON.stringify(__r); })()
