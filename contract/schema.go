package contract

// The helpers below build schemas as plain maps; Definitions marshals them
// once; the renderings and compileTool both read that JSON.

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
