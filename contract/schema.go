package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds a small validator for the subset of JSON Schema (draft
// 2020-12) the tool schemas use, and the helpers that build those schemas.
// A library would accept more than we use; a compile step that refuses any
// keyword it does not enforce keeps "the schema is the contract" honest.

// schemaNode is one compiled schema object.
type schemaNode struct {
	typ           string
	properties    map[string]*schemaNode
	propOrder     []string // sorted, for stable messages
	required      []string
	closed        bool // additionalProperties: false
	enum          []any
	constVal      any
	hasConst      bool
	minimum       *float64
	maximum       *float64
	minLength     *int
	maxLength     *int
	minItems      *int
	maxItems      *int
	minProps      *int
	maxProps      *int
	items         *schemaNode
	oneOf         []*schemaNode
	anyOf         []*schemaNode
	pattern       *regexp.Regexp
	patternSource string
	description   string // for messages about form
}

// annotations carry no validation meaning and are accepted as is.
var schemaAnnotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "$schema": true,
}

// compileSchema turns a JSON schema into a validator node. It refuses any
// keyword the validator does not enforce, so a schema can never promise a
// check that does not happen.
func compileSchema(raw json.RawMessage) (*schemaNode, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return compileNode(v, "#")
}

func compileNode(v any, at string) (*schemaNode, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object", at)
	}
	n := &schemaNode{}
	for k, val := range m {
		var err error
		switch k {
		case "type":
			s, ok := val.(string)
			switch {
			case !ok:
				err = fmt.Errorf("type must be a single string")
			case s == "object", s == "array", s == "string", s == "integer", s == "number", s == "boolean", s == "null":
				n.typ = s
			default:
				err = fmt.Errorf("unknown type %q", s)
			}
		case "properties":
			pm, ok := val.(map[string]any)
			if !ok {
				err = fmt.Errorf("properties must be an object")
				break
			}
			n.properties = map[string]*schemaNode{}
			for pk, pv := range pm {
				c, cerr := compileNode(pv, at+"/properties/"+pk)
				if cerr != nil {
					return nil, cerr
				}
				n.properties[pk] = c
				n.propOrder = append(n.propOrder, pk)
			}
			sort.Strings(n.propOrder)
		case "required":
			arr, ok := val.([]any)
			if !ok {
				err = fmt.Errorf("required must be an array")
				break
			}
			for _, r := range arr {
				s, ok := r.(string)
				if !ok {
					err = fmt.Errorf("required entries must be strings")
					break
				}
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			b, ok := val.(bool)
			if !ok || b {
				err = fmt.Errorf("additionalProperties must be false")
				break
			}
			n.closed = true
		case "enum":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				err = fmt.Errorf("enum must be a non-empty array")
				break
			}
			n.enum = arr
		case "const":
			n.constVal, n.hasConst = val, true
		case "minimum", "maximum":
			f, ferr := schemaNumberOf(val)
			if ferr != nil {
				err = ferr
				break
			}
			if k == "minimum" {
				n.minimum = &f
			} else {
				n.maximum = &f
			}
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			i, ierr := schemaIntOf(val)
			if ierr != nil {
				err = ierr
				break
			}
			switch k {
			case "minLength":
				n.minLength = &i
			case "maxLength":
				n.maxLength = &i
			case "minItems":
				n.minItems = &i
			case "maxItems":
				n.maxItems = &i
			case "minProperties":
				n.minProps = &i
			case "maxProperties":
				n.maxProps = &i
			}
		case "items":
			c, cerr := compileNode(val, at+"/items")
			if cerr != nil {
				return nil, cerr
			}
			n.items = c
		case "oneOf", "anyOf":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				err = fmt.Errorf("%s must be a non-empty array", k)
				break
			}
			var list []*schemaNode
			for i, b := range arr {
				c, cerr := compileNode(b, fmt.Sprintf("%s/%s/%d", at, k, i))
				if cerr != nil {
					return nil, cerr
				}
				list = append(list, c)
			}
			if k == "oneOf" {
				n.oneOf = list
			} else {
				n.anyOf = list
			}
		case "pattern":
			s, ok := val.(string)
			if !ok {
				err = fmt.Errorf("pattern must be a string")
				break
			}
			re, rerr := regexp.Compile(s)
			if rerr != nil {
				err = rerr
				break
			}
			n.pattern, n.patternSource = re, s
		case "description":
			n.description, _ = val.(string)
		default:
			if !schemaAnnotations[k] {
				err = fmt.Errorf("keyword %q is not supported by the validator", k)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", at, k, err)
		}
	}
	if n.typ == "object" && len(n.oneOf) == 0 && len(n.anyOf) == 0 && !n.closed {
		return nil, fmt.Errorf("%s: objects must set additionalProperties: false", at)
	}
	return n, nil
}

func schemaNumberOf(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("must be a number")
	}
	return n.Float64()
}

func schemaIntOf(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("must be an integer")
	}
	i, err := strconv.Atoi(n.String())
	if err != nil || i < 0 {
		return 0, fmt.Errorf("must be a non-negative integer")
	}
	return i, nil
}

// schemaError is one problem with a model's arguments, at a path such as
// run.actions[2].op. It never quotes the value: arguments may hold secrets.
type schemaError struct {
	Path string
	Msg  string
}

func (e schemaError) String() string { return e.Path + ": " + e.Msg }

// schemaMaxReported bounds how many problems one refusal lists.
const schemaMaxReported = 3

// validate checks v (decoded with UseNumber) and returns its problems in a
// stable order, at most schemaMaxReported of them.
func (n *schemaNode) validate(v any, path string) []schemaError {
	var errs []schemaError
	n.check(v, path, &errs)
	return errs
}

func (n *schemaNode) check(v any, path string, errs *[]schemaError) {
	if len(*errs) >= schemaMaxReported {
		return
	}
	add := func(msg string, a ...any) {
		if len(*errs) < schemaMaxReported {
			*errs = append(*errs, schemaError{Path: path, Msg: fmt.Sprintf(msg, a...)})
		}
	}
	if n.typ != "" && !schemaTypeMatches(n.typ, v) {
		msg := "must be " + n.describeType()
		if v == nil {
			msg += "; leave the field out rather than sending null"
		}
		add("%s", msg)
		return
	}
	if n.hasConst && !schemaEqual(v, n.constVal) {
		add("must be %s", schemaLiteral(n.constVal))
		return
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if schemaEqual(v, e) {
				found = true
				break
			}
		}
		if !found {
			add("must be one of %s", schemaLiterals(n.enum))
			return
		}
	}
	switch x := v.(type) {
	case string:
		l := utf8.RuneCountInString(x)
		if n.minLength != nil && l < *n.minLength {
			if *n.minLength == 1 {
				add("must not be empty")
			} else {
				add("must be at least %d characters", *n.minLength)
			}
			return
		}
		if n.maxLength != nil && l > *n.maxLength {
			add("must be at most %d characters (got %d)", *n.maxLength, l)
			return
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			if n.description != "" {
				add("has the wrong form (%s must match %s)", strings.TrimSuffix(n.description, "."), n.patternSource)
			} else {
				add("has the wrong form: must match %s", n.patternSource)
			}
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			add("must be a finite number")
			return
		}
		if (n.minimum != nil && f < *n.minimum) || (n.maximum != nil && f > *n.maximum) {
			if n.typ == "integer" {
				add("must be %s", n.describeType())
			} else {
				add("must be %s", n.describeRange())
			}
		}
	case []any:
		if n.minItems != nil && len(x) < *n.minItems {
			add("must hold at least %d item(s)", *n.minItems)
			return
		}
		if n.maxItems != nil && len(x) > *n.maxItems {
			add("must hold at most %d items (got %d); split the work into several calls", *n.maxItems, len(x))
			return
		}
		if n.items != nil {
			for i, item := range x {
				n.items.check(item, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	case map[string]any:
		n.checkObject(x, path, errs)
	}
	if len(n.oneOf) > 0 {
		n.checkOneOf(v, path, errs)
	}
	if len(n.anyOf) > 0 {
		for _, b := range n.anyOf {
			if len(b.validate(v, path)) == 0 {
				return
			}
		}
		add("must match one of the forms %s", schemaForms(n.anyOf))
	}
}

func (n *schemaNode) checkObject(x map[string]any, path string, errs *[]schemaError) {
	add := func(p, msg string, a ...any) {
		if len(*errs) < schemaMaxReported {
			*errs = append(*errs, schemaError{Path: p, Msg: fmt.Sprintf(msg, a...)})
		}
	}
	// Unknown fields first: a misspelt name is the likeliest mistake and
	// would otherwise show up as a confusing "missing" for the real name.
	if n.closed {
		keys := schemaSortedKeys(x)
		for _, k := range keys {
			if _, ok := n.properties[k]; !ok {
				add(path+"."+k, "unknown field; allowed fields are %s", schemaNames(n.propOrder))
			}
		}
	}
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			msg := "missing; it is required"
			if p := n.properties[r]; p != nil && len(p.enum) > 0 {
				msg += ", one of " + schemaLiterals(p.enum)
			}
			add(path+"."+r, "%s", msg)
		}
	}
	if n.minProps != nil || n.maxProps != nil {
		if msg := n.countMessage(len(x)); msg != "" {
			add(path, "%s", msg)
		}
	}
	for _, k := range n.propOrder {
		if val, ok := x[k]; ok {
			n.properties[k].check(val, path+"."+k, errs)
		}
	}
}

// countMessage explains a minProperties/maxProperties breach in terms of the
// optional fields, since required ones are always present.
func (n *schemaNode) countMessage(count int) string {
	low, high := -1, -1
	if n.minProps != nil {
		low = *n.minProps
	}
	if n.maxProps != nil {
		high = *n.maxProps
	}
	if (low < 0 || count >= low) && (high < 0 || count <= high) {
		return ""
	}
	req := map[string]bool{}
	for _, r := range n.required {
		req[r] = true
	}
	var optional []string
	for _, k := range n.propOrder {
		if !req[k] {
			optional = append(optional, k)
		}
	}
	adj := len(n.required)
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

func schemaCountWord(n int) string {
	switch n {
	case 1:
		return "one"
	case 2:
		return "two"
	}
	return strconv.Itoa(n)
}

// schemaDiscriminator finds the property every branch pins with const (such as an
// action's op), so a mistake can be reported against the one branch meant.
func schemaDiscriminator(branches []*schemaNode) string {
	var key string
	for i, b := range branches {
		found := ""
		for _, k := range b.propOrder {
			if b.properties[k].hasConst {
				found = k
				break
			}
		}
		if found == "" || (i > 0 && found != key) {
			return ""
		}
		key = found
	}
	return key
}

func (n *schemaNode) checkOneOf(v any, path string, errs *[]schemaError) {
	add := func(p, msg string, a ...any) {
		if len(*errs) < schemaMaxReported {
			*errs = append(*errs, schemaError{Path: p, Msg: fmt.Sprintf(msg, a...)})
		}
	}
	obj, isObj := v.(map[string]any)
	if key := schemaDiscriminator(n.oneOf); key != "" {
		if !isObj {
			add(path, "must be an object with %q set to one of %s", key, schemaLiterals(n.constsOf(key)))
			return
		}
		val, ok := obj[key]
		if !ok {
			add(path+"."+key, "missing; it is required, one of %s", schemaLiterals(n.constsOf(key)))
			return
		}
		for _, b := range n.oneOf {
			if schemaEqual(b.properties[key].constVal, val) {
				b.check(v, path, errs)
				return
			}
		}
		add(path+"."+key, "must be one of %s", schemaLiterals(n.constsOf(key)))
		return
	}
	var matched int
	for _, b := range n.oneOf {
		if len(b.validate(v, path)) == 0 {
			matched++
		}
	}
	if matched == 1 {
		return
	}
	// Report against the one branch whose required fields are all present,
	// when exactly one is: that is the form the caller meant.
	if isObj && matched == 0 {
		var cand []*schemaNode
		for _, b := range n.oneOf {
			all := true
			for _, r := range b.required {
				if _, ok := obj[r]; !ok {
					all = false
				}
			}
			if all {
				cand = append(cand, b)
			}
		}
		if len(cand) == 1 {
			cand[0].check(v, path, errs)
			return
		}
	}
	add(path, "must take exactly one of the forms %s", schemaForms(n.oneOf))
}

func (n *schemaNode) constsOf(key string) []any {
	var out []any
	for _, b := range n.oneOf {
		out = append(out, b.properties[key].constVal)
	}
	return out
}

// schemaForms summarises object branches as {a, b?} for a message.
func schemaForms(branches []*schemaNode) string {
	var parts []string
	for _, b := range branches {
		if b.typ != "object" && b.properties == nil {
			parts = append(parts, b.describeType())
			continue
		}
		req := map[string]bool{}
		for _, r := range b.required {
			req[r] = true
		}
		fs := append([]string(nil), b.required...)
		for _, k := range b.propOrder {
			if !req[k] {
				fs = append(fs, k+"?")
			}
		}
		parts = append(parts, "{"+strings.Join(fs, ", ")+"}")
	}
	return strings.Join(parts, " or ")
}

func schemaTypeMatches(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		// Only plain integer literals: the typed decode into int accepts
		// nothing else, and 64 bits is plenty for every limit we set.
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(n.String(), 10, 64)
		return err == nil
	}
	return false
}

func (n *schemaNode) describeType() string {
	switch n.typ {
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		if r := n.describeRange(); r != "" {
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

func (n *schemaNode) describeRange() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch {
	case n.minimum != nil && n.maximum != nil:
		return "from " + f(*n.minimum) + " to " + f(*n.maximum)
	case n.minimum != nil:
		return "at least " + f(*n.minimum)
	case n.maximum != nil:
		return "at most " + f(*n.maximum)
	}
	return ""
}

func schemaEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case string, bool, nil:
		return a == b
	}
	// Enums and consts here are scalars; compound values never match.
	return false
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

func schemaSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The helpers below build schemas as plain maps; Definitions marshals them
// once, and both the renderings and the validator read that JSON.

type schemaMap = map[string]any

// schemaObject builds a closed object schema.
func schemaObject(props schemaMap, required ...string) schemaMap {
	o := schemaMap{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func schemaString(desc string, minLen, maxLen int) schemaMap {
	o := schemaMap{"type": "string", "maxLength": maxLen}
	if minLen > 0 {
		o["minLength"] = minLen
	}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func schemaEnum(desc string, vals ...string) schemaMap {
	o := schemaMap{"type": "string", "enum": vals}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func schemaInteger(desc string, minV, maxV int) schemaMap {
	o := schemaMap{"type": "integer", "minimum": minV, "maximum": maxV}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func schemaNumber(desc string, minV, maxV float64) schemaMap {
	o := schemaMap{"type": "number", "minimum": minV, "maximum": maxV}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func schemaBool(desc string) schemaMap {
	o := schemaMap{"type": "boolean"}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

// schemaWith returns o with extra keywords set.
func schemaWith(o schemaMap, kv ...any) schemaMap {
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}
