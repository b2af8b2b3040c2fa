package devstack

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// ErrPortTaken is returned when an address the dev stack needs is in use.
var ErrPortTaken = errors.New("port already in use")

// PortTakenError names the address and how to get out of the way.
type PortTakenError struct {
	Address string
	Flag    string
}

func (e *PortTakenError) Error() string {
	hint := "stop whatever listens there"
	if e.Flag != "" {
		hint += fmt.Sprintf(", or pick another port with --%s", e.Flag)
	}
	return fmt.Sprintf("%s is already in use: %s (is another `durable-browser dev` or `temporal server start-dev` running?)", e.Address, hint)
}

func (e *PortTakenError) Unwrap() error { return ErrPortTaken }

// CheckPortFree reports a *PortTakenError when addr cannot be bound.
func CheckPortFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return &PortTakenError{Address: addr}
		}
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return l.Close()
}

// FreePort returns a currently free loopback TCP port. It picks from below
// the kernel's ephemeral range, so a browser or an outgoing connection is
// unlikely to take it before the caller binds it.
func FreePort() (int, error) {
	ports, err := internalPorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
