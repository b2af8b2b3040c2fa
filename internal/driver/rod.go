package driver

import (
	"github.com/go-rod/rod"
	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/defaults"
	"github.com/go-rod/rod/lib/utils"
)

// rod's lib/defaults package, at init, registers a "-rod" flag on the global
// flag set and reads options from os.Args ("-rod=show,trace,slow=1s,monitor,
// url=ws://...,cdp,bin=...,dir=..."), unless DISABLE_ROD_FLAG is in the
// environment. Those options become the defaults of rod.New (control URL,
// slow motion, input tracing, a monitor web server showing every page),
// of the CDP client's logger ("cdp" logs every message, typed secrets
// included) and of rod's launcher (which downloads a browser when it finds
// none). This program sets what it needs itself instead of relying on the
// environment: the defaults are put back here, after rod's init, and newRod
// sets every option explicitly. The launcher is never used: Chrome is started
// by internal/chrome or a provider, and rod only gets a connected websocket.
//
// What cannot be undone here: an unknown "-rod=" option on the command line
// makes rod's init panic before any of this code runs.
func init() { defaults.Reset() }

// cdpLog is given every CDP request and event of the connections made
// after it is set (rod's *cdp.Request, *cdp.Response, *cdp.Event). Quiet: a
// message may hold a typed secret. BenchmarkToolCost counts them by method.
var cdpLog utils.Logger = utils.LoggerQuiet

// newRod is a rod browser over ws with every option rod would otherwise take
// from its package defaults set explicitly.
func newRod(ws *rodcdp.WebSocket) *rod.Browser {
	client := rodcdp.New().Logger(cdpLog).Start(ws)
	return rod.New().
		ControlURL(""). // the client below is the connection; never launch or download
		SlowMotion(0).
		Trace(false).
		Monitor("").
		Logger(utils.LoggerQuiet).
		Client(client).
		NoDefaultDevice()
}
