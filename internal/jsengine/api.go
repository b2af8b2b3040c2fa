package jsengine

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// removed are globals a cell does without: binary buffers allocate their
// whole size in one step the engine cannot interrupt, and nothing a page
// call takes or gives needs them.
var removed = []string{"ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics",
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
	"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "WeakRef", "FinalizationRegistry"}

// harden bounds the builtins that build a large value in one native step
// (where the engine's interrupt does not reach): a string from repeat,
// padStart, padEnd or join, and an array filled by fill or Array.from.
const harden = `(function(max){
  const def = (o, k, f) => Object.defineProperty(o, k, {value: f, writable: true, configurable: true, enumerable: false});
  const tooLong = (n) => { throw new RangeError("a string of " + n + " characters is over the cell's limit of " + max); };
  const rep = String.prototype.repeat, ps = String.prototype.padStart, pe = String.prototype.padEnd;
  def(String.prototype, "repeat", function repeat(n){ const s = String(this); if (s.length * Math.max(0, Number(n) || 0) > max) tooLong(s.length * n); return rep.call(s, n); });
  def(String.prototype, "padStart", function padStart(n, f){ if (Number(n) > max) tooLong(n); return ps.call(this, n, f); });
  def(String.prototype, "padEnd", function padEnd(n, f){ if (Number(n) > max) tooLong(n); return pe.call(this, n, f); });
  const jn = Array.prototype.join, fl = Array.prototype.fill, fr = Array.from;
  def(Array.prototype, "join", function join(sep){ if (this.length > max / 8) throw new RangeError("join of " + this.length + " items is over the cell's limit"); return jn.call(this, sep); });
  def(Array.prototype, "fill", function fill(...a){ if (this.length > max / 8) throw new RangeError("fill of " + this.length + " items is over the cell's limit"); return fl.apply(this, a); });
  def(Array, "from", function from(src, ...a){ if (src != null && Number(src.length) > max / 8) throw new RangeError("Array.from of " + src.length + " items is over the cell's limit"); return fr.call(this, src, ...a); });
})`

// install sets up the globals: page, emit, console; and nothing of the
// host (no require, import, fetch, timers, filesystem or process).
func (c *cellRun) install(vm *goja.Runtime) error {
	g := vm.GlobalObject()
	for _, name := range removed {
		if err := g.Delete(name); err != nil {
			return err
		}
	}
	// Named, so the frames of its functions show as native ones in a
	// stack (source.go), never by its lines.
	h, err := vm.RunScript(builtinsName, harden)
	if err != nil {
		return err
	}
	hf, _ := goja.AssertFunction(h)
	if _, err := hf(goja.Undefined(), vm.ToValue(MaxStringChars)); err != nil {
		return err
	}

	page := vm.NewObject()
	for _, m := range Methods {
		m := m
		if err := setNative(vm, page, m, func(call goja.FunctionCall) goja.Value {
			args, err := argsFor(vm, m, call.Arguments)
			if err != nil {
				c.throwPage("refused", "page."+m+": "+err.Error())
			}
			return c.call(m, args)
		}); err != nil {
			return err
		}
	}
	if err := g.Set("page", page); err != nil {
		return err
	}
	if err := setNative(vm, g, "emit", func(call goja.FunctionCall) goja.Value {
		c.emit(call.Argument(0))
		return goja.Undefined()
	}); err != nil {
		return err
	}
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		level := level
		if err := setNative(vm, console, level, func(call goja.FunctionCall) goja.Value {
			c.console(level, call.Arguments)
			return goja.Undefined()
		}); err != nil {
			return err
		}
	}
	if err := g.Set("console", console); err != nil {
		return err
	}
	// The page's globals are a snapshot's business, not the engine's:
	// freeze what a cell is given so one call cannot redefine another.
	_, err = vm.RunString(`Object.freeze(page); Object.freeze(console);`)
	return err
}

// setNative sets o[name] to the Go function f, named name: the engine
// would name it by its Go symbol (a package path), which a stack, its name
// and its toString would show the cell.
func setNative(vm *goja.Runtime, o *goja.Object, name string, f func(goja.FunctionCall) goja.Value) error {
	fn := vm.ToValue(f).(*goja.Object)
	if err := fn.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return o.Set(name, fn)
}

// argsFor turns a page method's JavaScript arguments into named ones.
func argsFor(vm *goja.Runtime, method string, in []goja.Value) (map[string]any, error) {
	arg := func(i int) goja.Value {
		if i < len(in) {
			return in[i]
		}
		return goja.Undefined()
	}
	given := func(i int) bool { v := arg(i); return v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) }
	str := func(i int, what string) (string, error) {
		if !given(i) {
			return "", fmt.Errorf("%s is missing", what)
		}
		switch v := arg(i).Export().(type) {
		case string:
			return v, nil
		case int64, float64:
			return arg(i).String(), nil
		}
		return "", fmt.Errorf("%s must be a string", what)
	}
	opts := func(i int, into map[string]any) error {
		if !given(i) {
			return nil
		}
		m, ok := arg(i).Export().(map[string]any)
		if !ok {
			return fmt.Errorf("argument %d must be an options object", i+1)
		}
		for k, v := range m {
			if _, set := into[k]; set {
				return fmt.Errorf("option %q repeats a positional argument", k)
			}
			into[k] = v
		}
		return nil
	}
	out := map[string]any{}
	// target takes an element: an id from the latest snapshot, or a
	// locator object ({role, name}, {label}, {text}, {placeholder},
	// {testid}) found on the page when the call runs.
	target := func(i int) error {
		if m, ok := arg(i).Export().(map[string]any); ok {
			out["locator"] = m
			return nil
		}
		var err error
		out["id"], err = str(i, "id")
		return err
	}
	var err error
	switch method {
	case "goto":
		out["url"], err = str(0, "url")
	case "snapshot", "screenshot":
		err = opts(0, out)
	case "click", "check", "uncheck":
		if err = target(0); err == nil {
			err = opts(1, out)
		}
	case "fill":
		if err = target(0); err == nil {
			out["value"], err = str(1, "value")
		}
	case "type":
		if err = target(0); err == nil {
			if out["text"], err = str(1, "text"); err == nil {
				err = opts(2, out)
			}
		}
	case "press":
		// press(key) or press(id, key)
		if given(1) {
			if out["id"], err = str(0, "id"); err == nil {
				out["key"], err = str(1, "key")
			}
		} else {
			out["key"], err = str(0, "key")
		}
	case "select":
		if err = target(0); err == nil {
			switch v := arg(1).Export().(type) {
			case string:
				out["values"] = []any{v}
			case []any:
				out["values"] = v
			default:
				err = fmt.Errorf("values must be a string or an array of strings")
			}
		}
	case "scroll":
		// scroll(id) or scroll({dy, dx})
		if given(0) {
			if _, isObj := arg(0).Export().(map[string]any); isObj {
				err = opts(0, out)
			} else {
				out["id"], err = str(0, "id")
			}
		} else {
			err = fmt.Errorf("give an id, or {dy: pixels}")
		}
	case "wait":
		// wait(ms), wait("text"), or wait({text|id|url|load|ms})
		switch v := arg(0).Export().(type) {
		case int64, float64:
			out["ms"] = v
		case string:
			out["text"] = v
		case map[string]any:
			err = opts(0, out)
		default:
			err = fmt.Errorf("give milliseconds, text to wait for, or {text|id|url|load|ms}")
		}
	case "text":
		out["id"], err = str(0, "id")
	case "attr":
		if out["id"], err = str(0, "id"); err == nil {
			out["name"], err = str(1, "name")
		}
	case "url", "title":
	case "eval":
		err = evalArgs(vm, in, out)
	}
	return out, err
}

// evalArgs takes eval's function (its source is sent) or source string,
// and its arguments as JSON.
func evalArgs(vm *goja.Runtime, in []goja.Value, out map[string]any) error {
	if len(in) == 0 {
		return fmt.Errorf("give a function or a source string to run in the page")
	}
	switch v := in[0].Export().(type) {
	case string:
		out["source"] = v
	default:
		if _, ok := goja.AssertFunction(in[0]); !ok {
			return fmt.Errorf("the first argument must be a function or a source string")
		}
		src := in[0].String()
		if strings.Contains(src, "[native code]") {
			return fmt.Errorf("a built-in function has no source to send; write the function out")
		}
		out["source"] = src
		_ = v
	}
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	args := vm.NewArray()
	for i, a := range in[1:] {
		_ = args.Set(fmt.Sprint(i), a)
	}
	s, err := stringify(goja.Undefined(), args)
	if err != nil {
		return fmt.Errorf("the arguments are not JSON: %v", err)
	}
	out["args"] = s.String()
	return nil
}
