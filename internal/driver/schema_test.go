package driver

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
)

// schemaActions reads the run tool's schema: each op (its const) and the
// fields that op's branch offers.
func schemaActions(t *testing.T) map[string][]string {
	t.Helper()
	tool, ok := contract.Lookup(contract.ToolRun)
	if !ok {
		t.Fatal("no run tool")
	}
	var s struct {
		Properties struct {
			Actions struct {
				Items struct {
					OneOf []struct {
						Properties map[string]struct {
							Const any `json:"const"`
						} `json:"properties"`
					} `json:"oneOf"`
				} `json:"items"`
			} `json:"actions"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Schema, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for i, b := range s.Properties.Actions.Items.OneOf {
		op, ok := b.Properties["op"].Const.(string)
		if !ok {
			t.Fatalf("run schema: action branch %d pins no op", i)
		}
		if _, dup := out[op]; dup {
			t.Fatalf("run schema: op %q twice", op)
		}
		var fields []string
		for k := range b.Properties {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		out[op] = fields
	}
	if len(out) == 0 {
		t.Fatal("run schema lists no ops")
	}
	return out
}

// dispatchedOps reads the ops Browser.do's switch on a.Op handles, from
// dispatch.go's source: the switch is the driver's one list of ops.
func dispatchedOps(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "dispatch.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "do" || fn.Recv == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			sel, ok := sw.Tag.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Op" {
				return true
			}
			for _, st := range sw.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					lit, ok := e.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("do: case %T is not a string literal", e)
					}
					op, _ := strconv.Unquote(lit.Value)
					ops[op] = true
				}
			}
			return false
		})
	}
	if len(ops) == 0 {
		t.Fatal("found no switch on a.Op in Browser.do")
	}
	return ops
}

// The run schema (what a model may send, checked by validate.Call) and
// the driver's dispatcher agree on the set of ops, and every field an op's
// schema offers is a field of Action.
func TestSchemaOpsMatchDispatch(t *testing.T) {
	schema := schemaActions(t)
	dispatched := dispatchedOps(t)
	for op := range schema {
		if !dispatched[op] {
			t.Errorf("the run schema offers op %q, but Browser.do does not dispatch it", op)
		}
	}
	for op := range dispatched {
		if _, ok := schema[op]; !ok {
			t.Errorf("Browser.do dispatches op %q, but the run schema does not offer it", op)
		}
	}
	tags := map[string]bool{}
	at := reflect.TypeOf(Action{})
	for i := 0; i < at.NumField(); i++ {
		name, _, _ := strings.Cut(at.Field(i).Tag.Get("json"), ",")
		if name == "-" {
			continue // set by the worker, never by a model
		}
		tags[name] = true
	}
	used := map[string]bool{}
	for op, fields := range schema {
		for _, f := range fields {
			used[f] = true
			if !tags[f] {
				t.Errorf("the run schema offers %s.%s, but Action has no such field", op, f)
			}
		}
	}
	for name := range tags {
		if !used[name] {
			t.Errorf("Action.%s is offered by no op in the run schema", name)
		}
	}
}

// Every batch the schema accepts decodes, and the driver's own checks refuse
// only what the schema cannot say.
func TestValidatedBatchesParse(t *testing.T) {
	raw := `{"actions":[{"op":"click","id":"5","button":"middle","count":3},{"op":"hover","id":"[6]"},{"op":"fill","id":"2","value":""},` +
		`{"op":"type","id":"2","text":"x","delay_ms":0},{"op":"press","key":"Enter","id":"3"},{"op":"select","id":"3","values":["a"]},` +
		`{"op":"check","id":"4"},{"op":"uncheck","id":"4"},{"op":"scroll","dx":-5},{"op":"goto","url":"http://a.example/"},` +
		`{"op":"back"},{"op":"forward"},{"op":"reload"},{"op":"wait","load":true},{"op":"close_tab","tab":"t1"}]}`
	args, f := validate.Call(contract.ToolRun, json.RawMessage(raw))
	if f != nil {
		t.Fatal(f)
	}
	acts, err := ParseActions(args.(contract.RunArgs).Actions)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 15 || acts[1].ID != "6" || acts[4].ID != "3" {
		t.Fatalf("parsed %+v", acts)
	}
}
