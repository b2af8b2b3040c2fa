package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The tool schemas are checked with github.com/santhosh-tekuri/jsonschema
// (draft 2020-12). This file compiles them and turns the library's error
// tree into short messages a model can act on: each names the field (as a
// path such as run.actions[2].op) and the fix, and never quotes the value,
// since arguments may hold secrets.

// toolSchema is one tool's compiled schema, with the schema document kept
// to phrase messages (ranges, field lists, descriptions).
type toolSchema struct {
	name     string
	compiled *jsonschema.Schema
	doc      any // the schema, decoded with UseNumber
}

// compileTool compiles a tool's schema as draft 2020-12.
func compileTool(name string, raw json.RawMessage) (*toolSchema, error) {
	forLib, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	loc := "file:///durable-browser/tools/" + name + ".json"
	if err := c.AddResource(loc, forLib); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &toolSchema{name: name, compiled: s, doc: doc}, nil
}

// schemaError is one problem with a model's arguments, at a path such as
// run.actions[2].op. It never quotes the value: arguments may hold secrets.
type schemaError struct {
	Path string
	Msg  string

	// For a stable order: the object the problem belongs to, then unknown
	// fields before missing ones before counts before the fields' own values.
	owner []string
	rank  int
	at    []string
}

func (e schemaError) String() string { return e.Path + ": " + e.Msg }

const (
	rankUnknown = iota
	rankMissing
	rankCount
	rankValue
)

// schemaMaxReported bounds how many problems one refusal lists.
const schemaMaxReported = 3

// validate checks v (decoded with UseNumber) and returns its problems in a
// stable order, at most schemaMaxReported of them.
func (ts *toolSchema) validate(v any) []schemaError {
	var errs []schemaError
	checkNumbers(v, nil, &errs)
	if len(errs) == 0 {
		err := ts.compiled.Validate(v)
		var ve *jsonschema.ValidationError
		switch {
		case err == nil:
			// Valid as JSON Schema sees it, where 2.0 and 1e2 are integers;
			// the typed decode wants integers written plainly.
			ts.integerLiterals(ts.doc, v, nil, &errs)
		case errors.As(err, &ve):
			ts.collect(ve, v, &errs)
		default:
			ts.add(&errs, nil, rankValue, nil, "could not be checked; this is a bug in durable-browser, report it")
		}
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if c := compareLoc(a.owner, b.owner); c != 0 {
			return c < 0
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if c := compareLoc(a.at, b.at); c != 0 {
			return c < 0
		}
		return a.Msg < b.Msg
	})
	if len(errs) > schemaMaxReported {
		errs = errs[:schemaMaxReported]
	}
	for i := range errs {
		errs[i].Path = renderPath(ts.name, v, errs[i].at)
	}
	return errs
}

func (ts *toolSchema) add(errs *[]schemaError, owner []string, rank int, at []string, format string, a ...any) {
	*errs = append(*errs, schemaError{Msg: fmt.Sprintf(format, a...), owner: owner, rank: rank, at: at})
}

// collect walks the library's error tree down to the leaves that say what
// to fix.
func (ts *toolSchema) collect(e *jsonschema.ValidationError, root any, errs *[]schemaError) {
	loc := e.InstanceLocation
	node := ts.node(e.SchemaURL)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			ts.collect(c, root, errs)
		}
	case *kind.OneOf:
		ts.oneOf(e, k, node, root, errs)
	case *kind.AnyOf:
		ts.add(errs, loc, rankValue, loc, "must match one of the forms %s", schemaForms(listOf(node["anyOf"])))
	case *kind.Type:
		m := "must be " + describeType(node)
		if k.Got == "null" {
			m += "; leave the field out rather than sending null"
		}
		ts.add(errs, loc, rankValue, loc, "%s", m)
	case *kind.Const:
		ts.add(errs, loc, rankValue, loc, "must be %s", schemaLiteral(node["const"]))
	case *kind.Enum:
		ts.add(errs, loc, rankValue, loc, "must be one of %s", schemaLiterals(listOf(node["enum"])))
	case *kind.MinLength:
		if k.Want == 1 {
			ts.add(errs, loc, rankValue, loc, "must not be empty")
		} else {
			ts.add(errs, loc, rankValue, loc, "must be at least %d characters", k.Want)
		}
	case *kind.MaxLength:
		ts.add(errs, loc, rankValue, loc, "must be at most %d characters (got %d)", k.Want, k.Got)
	case *kind.Pattern:
		if d, _ := node["description"].(string); d != "" {
			ts.add(errs, loc, rankValue, loc, "has the wrong form (%s must match %s)", strings.TrimSuffix(d, "."), k.Want)
		} else {
			ts.add(errs, loc, rankValue, loc, "has the wrong form: must match %s", k.Want)
		}
	case *kind.Minimum, *kind.Maximum:
		if node["type"] == "integer" {
			ts.add(errs, loc, rankValue, loc, "must be %s", describeType(node))
		} else {
			ts.add(errs, loc, rankValue, loc, "must be %s", describeRange(node))
		}
	case *kind.MinItems:
		ts.add(errs, loc, rankValue, loc, "must hold at least %d item(s)", k.Want)
	case *kind.MaxItems:
		ts.add(errs, loc, rankValue, loc, "must hold at most %d items (got %d); split the work into several calls", k.Want, k.Got)
	case *kind.AdditionalProperties:
		names := append([]string(nil), k.Properties...)
		sort.Strings(names)
		allowed := schemaNames(sortedKeys(mapOf(node["properties"])))
		for _, p := range names {
			ts.add(errs, loc, rankUnknown, child(loc, p), "unknown field; allowed fields are %s", allowed)
		}
	case *kind.Required:
		props := mapOf(node["properties"])
		for _, r := range k.Missing {
			m := "missing; it is required"
			if enum := listOf(mapOf(props[r])["enum"]); len(enum) > 0 {
				m += ", one of " + schemaLiterals(enum)
			}
			ts.add(errs, loc, rankMissing, child(loc, r), "%s", m)
		}
	case *kind.MinProperties:
		ts.add(errs, loc, rankCount, loc, "%s", countMessage(node, k.Got))
	case *kind.MaxProperties:
		ts.add(errs, loc, rankCount, loc, "%s", countMessage(node, k.Got))
	case *kind.FalseSchema:
		ts.add(errs, loc, rankValue, loc, "is not allowed here")
	default:
		// A keyword the messages above do not phrase (TestSchemaKeywords
		// keeps the schemas to those they do). Never the library's own
		// text: it may quote the value.
		ts.add(errs, loc, rankValue, loc, "is not valid (%s)", strings.Join(e.ErrorKind.KeywordPath(), "/"))
	}
}

// oneOf reports against the one branch the caller meant: the branch whose
// discriminator (a property every branch pins with const, such as an
// action's op) matches, or else the one branch whose required fields are
// all present.
func (ts *toolSchema) oneOf(e *jsonschema.ValidationError, k *kind.OneOf, node map[string]any, root any, errs *[]schemaError) {
	loc := e.InstanceLocation
	branches := listOf(node["oneOf"])
	forms := schemaForms(branches)
	if len(k.Subschemas) > 0 || len(e.Causes) != len(branches) {
		// More than one branch matched (or the tree is not one cause per branch).
		ts.add(errs, loc, rankValue, loc, "must take exactly one of the forms %s", forms)
		return
	}
	obj, isObj := instanceAt(root, loc).(map[string]any)
	if key := schemaDiscriminator(branches); key != "" {
		consts := constsOf(branches, key)
		if !isObj {
			ts.add(errs, loc, rankValue, loc, "must be an object with %q set to one of %s", key, schemaLiterals(consts))
			return
		}
		val, ok := obj[key]
		if !ok {
			ts.add(errs, loc, rankMissing, child(loc, key), "missing; it is required, one of %s", schemaLiterals(consts))
			return
		}
		for i, c := range consts {
			if scalarEqual(c, val) {
				ts.collect(e.Causes[i], root, errs)
				return
			}
		}
		ts.add(errs, loc, rankValue, child(loc, key), "must be one of %s", schemaLiterals(consts))
		return
	}
	if isObj {
		cand := -1
		for i, b := range branches {
			all := true
			for _, r := range listOf(mapOf(b)["required"]) {
				if s, _ := r.(string); s != "" {
					if _, ok := obj[s]; !ok {
						all = false
					}
				}
			}
			if all {
				if cand >= 0 {
					cand = -2
					break
				}
				cand = i
			}
		}
		if cand >= 0 {
			ts.collect(e.Causes[cand], root, errs)
			return
		}
	}
	ts.add(errs, loc, rankValue, loc, "must take exactly one of the forms %s", forms)
}

// integerLiterals refuses integers written with a fraction or exponent
// (2.0, 1e2), which JSON Schema accepts but encoding/json will not decode
// into an int. It runs on values the schema accepted.
func (ts *toolSchema) integerLiterals(node any, v any, loc []string, errs *[]schemaError) {
	s := mapOf(node)
	if s == nil {
		return
	}
	if s["type"] == "integer" {
		if n, ok := v.(json.Number); ok {
			if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
				ts.add(errs, loc, rankValue, loc, "must be %s, written without a decimal point or exponent", describeType(s))
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props := mapOf(s["properties"])
		for _, k := range sortedKeys(x) {
			if p, ok := props[k]; ok {
				ts.integerLiterals(p, x[k], child(loc, k), errs)
			}
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, item := range x {
				ts.integerLiterals(items, item, child(loc, strconv.Itoa(i)), errs)
			}
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		for _, b := range listOf(s[kw]) {
			if constsMatch(mapOf(b), v) {
				ts.integerLiterals(b, v, loc, errs)
			}
		}
	}
}

// checkNumbers refuses numbers no field could want before the schema sees
// them: out of float64 range, huge exponents or very long literals (which
// would also make exact arithmetic on them slow).
func checkNumbers(v any, loc []string, errs *[]schemaError) {
	switch x := v.(type) {
	case json.Number:
		if !ordinaryNumber(x.String()) {
			*errs = append(*errs, schemaError{Msg: "must be a finite number of ordinary size", owner: loc, rank: rankValue, at: loc})
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			checkNumbers(x[k], child(loc, k), errs)
		}
	case []any:
		for i, item := range x {
			checkNumbers(item, child(loc, strconv.Itoa(i)), errs)
		}
	}
}

func ordinaryNumber(s string) bool {
	if len(s) > 100 {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// node resolves a schema location (url#/json/pointer) in the tool's schema.
func (ts *toolSchema) node(url string) map[string]any {
	_, frag, _ := strings.Cut(url, "#")
	var loc []string
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok != "" {
			loc = append(loc, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
		}
	}
	return mapOf(instanceAt(ts.doc, loc))
}

// instanceAt follows a location (an instance's in the arguments, or a
// schema's in the tool's schema) through maps and arrays.
func instanceAt(root any, loc []string) any {
	cur := root
	for _, tok := range loc {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// renderPath writes a location as tool.field[3].field: indexes in brackets
// where the arguments hold an array.
func renderPath(tool string, root any, loc []string) string {
	var b strings.Builder
	b.WriteString(tool)
	cur := root
	for _, tok := range loc {
		if arr, ok := cur.([]any); ok {
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(arr) {
				cur = arr[i]
			} else {
				cur = nil
			}
			continue
		}
		b.WriteString("." + tok)
		if m, ok := cur.(map[string]any); ok {
			cur = m[tok]
		} else {
			cur = nil
		}
	}
	return b.String()
}

// compareLoc orders locations token by token, array indexes numerically.
func compareLoc(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		x, ex := strconv.Atoi(a[i])
		y, ey := strconv.Atoi(b[i])
		if ex == nil && ey == nil {
			if x < y {
				return -1
			}
			return 1
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

func child(loc []string, tok string) []string {
	return append(append(make([]string, 0, len(loc)+1), loc...), tok)
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// countMessage explains a minProperties/maxProperties breach in terms of the
// optional fields, since required ones are always present.
func countMessage(node map[string]any, count int) string {
	low, high := intOf(node["minProperties"]), intOf(node["maxProperties"])
	required := listOf(node["required"])
	req := map[string]bool{}
	for _, r := range required {
		if s, ok := r.(string); ok {
			req[s] = true
		}
	}
	var optional []string
	for _, k := range sortedKeys(mapOf(node["properties"])) {
		if !req[k] {
			optional = append(optional, k)
		}
	}
	adj := len(required)
	fields := schemaNames(optional)
	switch {
	case low >= 0 && low == high:
		return fmt.Sprintf("give exactly %s of %s", schemaCountWord(low-adj), fields)
	case low >= 0 && count < low:
		return fmt.Sprintf("give at least %s of %s", schemaCountWord(low-adj), fields)
	default:
		return fmt.Sprintf("give at most %s of %s", schemaCountWord(high-adj), fields)
	}
}

// intOf reads a non-negative integer keyword; -1 when absent.
func intOf(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(n.String())
	if err != nil {
		return -1
	}
	return i
}

func schemaCountWord(n int) string {
	switch n {
	case 1:
		return "one"
	case 2:
		return "two"
	}
	return strconv.Itoa(n)
}

// schemaDiscriminator finds the property every branch pins with const (such
// as an action's op), so a mistake can be reported against the one branch meant.
func schemaDiscriminator(branches []any) string {
	if len(branches) == 0 {
		return ""
	}
next:
	for _, key := range sortedKeys(mapOf(mapOf(branches[0])["properties"])) {
		for _, b := range branches {
			if _, ok := mapOf(mapOf(mapOf(b)["properties"])[key])["const"]; !ok {
				continue next
			}
		}
		return key
	}
	return ""
}

func constsOf(branches []any, key string) []any {
	out := make([]any, len(branches))
	for i, b := range branches {
		out[i] = mapOf(mapOf(mapOf(b)["properties"])[key])["const"]
	}
	return out
}

// constsMatch says whether v could be the branch b: every property b pins
// with const has that value in v (or b pins none).
func constsMatch(b map[string]any, v any) bool {
	obj, isObj := v.(map[string]any)
	for k, p := range mapOf(b["properties"]) {
		c, ok := mapOf(p)["const"]
		if !ok {
			continue
		}
		if !isObj || !scalarEqual(c, obj[k]) {
			return false
		}
	}
	return true
}

// scalarEqual compares the scalars consts and enums hold here; compound
// values never match.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// schemaForms summarises branches as {a, b?} for a message.
func schemaForms(branches []any) string {
	var parts []string
	for _, raw := range branches {
		b := mapOf(raw)
		if b["type"] != "object" && b["properties"] == nil {
			parts = append(parts, describeType(b))
			continue
		}
		req := map[string]bool{}
		var fs []string
		for _, r := range listOf(b["required"]) {
			if s, ok := r.(string); ok {
				req[s] = true
				fs = append(fs, s)
			}
		}
		for _, k := range sortedKeys(mapOf(b["properties"])) {
			if !req[k] {
				fs = append(fs, k+"?")
			}
		}
		parts = append(parts, "{"+strings.Join(fs, ", ")+"}")
	}
	return strings.Join(parts, " or ")
}

func describeType(n map[string]any) string {
	switch n["type"] {
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		if r := describeRange(n); r != "" {
			return "a whole number " + r
		}
		return "a whole number"
	case "number":
		return "a number"
	case "null":
		return "null"
	}
	return "a value"
}

func describeRange(n map[string]any) string {
	lo, hasLo := n["minimum"].(json.Number)
	hi, hasHi := n["maximum"].(json.Number)
	switch {
	case hasLo && hasHi:
		return "from " + lo.String() + " to " + hi.String()
	case hasLo:
		return "at least " + lo.String()
	case hasHi:
		return "at most " + hi.String()
	}
	return ""
}

func schemaLiteral(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func schemaLiterals(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = schemaLiteral(v)
	}
	return strings.Join(parts, ", ")
}

func schemaNames(ns []string) string {
	if len(ns) == 0 {
		return "(none: send {})"
	}
	return strings.Join(ns, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
