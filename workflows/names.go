package workflows

import (
	"github.com/durable-browser/durable-browser/contract"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// SearchAttributeTypes maps each custom search attribute to its type, for
// `dev` and operators to register (operatorservice AddSearchAttributes).
var SearchAttributeTypes = map[string]enumspb.IndexedValueType{
	contract.SearchAttrTag:      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	contract.SearchAttrProvider: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	contract.SearchAttrState:    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

var (
	saTag      = temporal.NewSearchAttributeKeyKeyword(contract.SearchAttrTag)
	saProvider = temporal.NewSearchAttributeKeyKeyword(contract.SearchAttrProvider)
	saState    = temporal.NewSearchAttributeKeyKeyword(contract.SearchAttrState)
)
