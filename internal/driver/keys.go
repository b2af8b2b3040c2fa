package driver

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-rod/rod/lib/input"
)

// namedKeys maps the key names a press action accepts to rod's US layout keys.
var namedKeys = map[string]input.Key{
	"enter": input.Enter, "tab": input.Tab, "escape": input.Escape, "esc": input.Escape,
	"backspace": input.Backspace, "delete": input.Delete, "insert": input.Insert,
	"space": input.Space, " ": input.Space,
	"arrowup": input.ArrowUp, "arrowdown": input.ArrowDown, "arrowleft": input.ArrowLeft, "arrowright": input.ArrowRight,
	"up": input.ArrowUp, "down": input.ArrowDown, "left": input.ArrowLeft, "right": input.ArrowRight,
	"home": input.Home, "end": input.End, "pageup": input.PageUp, "pagedown": input.PageDown,
	"f1": input.F1, "f2": input.F2, "f3": input.F3, "f4": input.F4, "f5": input.F5, "f6": input.F6,
	"f7": input.F7, "f8": input.F8, "f9": input.F9, "f10": input.F10, "f11": input.F11, "f12": input.F12,
}

var modifierKeys = map[string]input.Key{
	"control": input.ControlLeft, "ctrl": input.ControlLeft,
	"shift": input.ShiftLeft, "alt": input.AltLeft, "option": input.AltLeft,
	"meta": input.MetaLeft, "cmd": input.MetaLeft, "command": input.MetaLeft,
}

// combo is a parsed key press: modifiers held while key is pressed.
type combo struct {
	mods []input.Key
	key  input.Key
}

// parseCombo reads "Enter", "a", "Control+A", "Shift+Tab".
func parseCombo(s string) (combo, error) {
	if s == "" {
		return combo{}, fmt.Errorf("press needs \"key\", like \"Enter\" or \"Control+A\"")
	}
	if len(s) > 40 {
		return combo{}, fmt.Errorf("key %q is too long; use a key name like \"Enter\" or a combo like \"Control+A\"", truncate(s, 20))
	}
	parts := strings.Split(s, "+")
	if s == "+" || strings.HasSuffix(s, "++") {
		parts = append(parts[:len(parts)-2], "+")
	}
	var c combo
	for i, p := range parts {
		last := i == len(parts)-1
		lp := strings.ToLower(p)
		if !last {
			m, ok := modifierKeys[lp]
			if !ok {
				return combo{}, fmt.Errorf("%q in %q is not a modifier; use Control, Shift, Alt or Meta", truncate(p, 20), truncate(s, 40))
			}
			c.mods = append(c.mods, m)
			continue
		}
		if k, ok := namedKeys[lp]; ok {
			c.key = k
		} else if utf8.RuneCountInString(p) == 1 {
			r, _ := utf8.DecodeRuneInString(p)
			if len(c.mods) > 0 && r >= 'A' && r <= 'Z' {
				r = r - 'A' + 'a' // Control+A means the A key, not Shift+a
			}
			k := input.Key(r)
			if !knownKey(k) {
				return combo{}, fmt.Errorf("key %q is not on the US keyboard; use fill or type for text", p)
			}
			c.key = k
		} else {
			return combo{}, fmt.Errorf("unknown key %q; use a single character or Enter, Tab, Escape, Backspace, Delete, Space, Arrow{Up,Down,Left,Right}, Home, End, PageUp, PageDown, F1-F12", truncate(p, 20))
		}
	}
	return c, nil
}

// knownKey reports whether rod's layout knows k; Info panics on unknown keys.
func knownKey(k input.Key) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return k.Info().Code != ""
}
