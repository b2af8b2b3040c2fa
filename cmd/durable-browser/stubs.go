package main

import "errors"

var errTODO = errors.New("not built yet")
