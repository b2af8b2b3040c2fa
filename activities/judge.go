package activities

import (
	"context"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/pagejudge"
)

// Judge is the rule-based page judge (page.judge), served when the host
// brings none of its own.
func (a *Activities) Judge(_ context.Context, req contract.JudgeRequest) (*contract.JudgeResult, error) {
	res := pagejudge.JudgeAll(req)
	return &res, nil
}
