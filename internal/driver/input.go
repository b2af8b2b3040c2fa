package driver

import (
	"context"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
)

func (b *Browser) click(page cdp, x, y float64, btn proto.InputMouseButton, n int) error {
	if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y}).Call(page); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMousePressed, X: x, Y: y, Button: btn, ClickCount: i}).Call(page); err != nil {
			return err
		}
		if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: btn, ClickCount: i}).Call(page); err != nil {
			return err
		}
	}
	return nil
}

func (b *Browser) typeText(ctx context.Context, page cdp, text string, delay time.Duration) error {
	for _, ch := range text {
		k := input.Key(ch)
		if ch != '\n' && knownKey(k) {
			info := k.Info()
			s := string(ch)
			if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyDown, Key: s, Code: info.Code,
				Text: s, UnmodifiedText: s, WindowsVirtualKeyCode: info.KeyCode}).Call(page); err != nil {
				return err
			}
			if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: s, Code: info.Code,
				WindowsVirtualKeyCode: info.KeyCode}).Call(page); err != nil {
				return err
			}
		} else if ch == '\n' {
			if err := b.press(page, combo{key: input.Enter}); err != nil {
				return err
			}
		} else if err := (proto.InputInsertText{Text: string(ch)}).Call(page); err != nil {
			return err
		}
		if delay > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
		}
	}
	return nil
}

func modBit(k input.Key) int {
	switch k {
	case input.AltLeft:
		return 1
	case input.ControlLeft:
		return 2
	case input.MetaLeft:
		return 4
	case input.ShiftLeft:
		return 8
	}
	return 0
}

func (b *Browser) press(page cdp, c combo) error {
	mods := 0
	for _, m := range c.mods {
		info := m.Info()
		mods |= modBit(m)
		if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeRawKeyDown, Key: info.Key, Code: info.Code,
			WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
			return err
		}
	}
	info := c.key.Info()
	text := ""
	if mods&^8 == 0 { // only Shift (or nothing) types text
		switch {
		case c.key == input.Enter:
			text = "\r"
		case len([]rune(info.Key)) == 1:
			text = info.Key
			if mods&8 != 0 {
				if sk, ok := c.key.Shift(); ok {
					text = sk.Info().Key
				} else {
					text = strings.ToUpper(text)
				}
			}
		}
	}
	typ := proto.InputDispatchKeyEventTypeKeyDown
	if text == "" {
		typ = proto.InputDispatchKeyEventTypeRawKeyDown
	}
	if err := (proto.InputDispatchKeyEvent{Type: typ, Key: info.Key, Code: info.Code, Text: text, UnmodifiedText: text,
		WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
		return err
	}
	if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: info.Key, Code: info.Code,
		WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
		return err
	}
	for i := len(c.mods) - 1; i >= 0; i-- {
		m := c.mods[i]
		info := m.Info()
		mods &^= modBit(m)
		if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: info.Key, Code: info.Code,
			WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
			return err
		}
	}
	return nil
}

func intp(n int) *int { return &n }
