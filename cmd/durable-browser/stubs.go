package main

import (
	"context"
	"errors"
)

var errTODO = errors.New("not built yet")

func runSessions(ctx context.Context, env *cliEnv, args []string) error  { return errTODO }
func runHandoff(ctx context.Context, env *cliEnv, args []string) error   { return errTODO }
func runApprovals(ctx context.Context, env *cliEnv, args []string) error { return errTODO }
func runEvidence(ctx context.Context, env *cliEnv, args []string) error  { return errTODO }
func runTools(ctx context.Context, env *cliEnv, args []string) error     { return errTODO }
