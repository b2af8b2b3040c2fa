// Package tokencount counts tokens the way a model's tokenizer does, for the
// benchmarks of test/tokens_test.go and test/peers: o200k_base, the
// encoding of OpenAI's GPT-4o and later models, loaded from the copy
// embedded in github.com/pkoukk/tiktoken-go-loader (no download). The
// product's own estimate (contract.SizeOf: a token per four characters)
// stays what answers carry; this is only for measuring it.
package tokencount

import (
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

// O200K counts text's tokens in o200k_base.
func O200K(text string) (int, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, err = tiktoken.GetEncoding("o200k_base")
	})
	if err != nil {
		return 0, err
	}
	return len(enc.Encode(text, nil, nil)), nil
}
