package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds the styles. With colour off (NO_COLOR) only attributes that
// are not colour remain (bold, reverse), so the selection stays visible.
type theme struct {
	title, dim, sel, tabOn, tabOff, bar, good, bad, warn, accent lipgloss.Style
}

func newTheme(colour, dark bool) theme {
	plain := lipgloss.NewStyle()
	t := theme{
		title: plain.Bold(true), dim: plain, sel: plain.Reverse(true),
		tabOn: plain.Bold(true).Reverse(true), tabOff: plain, bar: plain.Reverse(true),
		good: plain, bad: plain.Bold(true), warn: plain, accent: plain.Bold(true),
	}
	if !colour {
		return t
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, dk string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dk)) }
	t.dim = plain.Foreground(c("#6c6c6c", "#8a8a8a"))
	t.sel = plain.Background(c("#d0d7ff", "#3a3f66")).Foreground(c("#000000", "#ffffff"))
	t.tabOn = plain.Bold(true).Background(c("#5f5fd7", "#7d7dff")).Foreground(c("#ffffff", "#000000"))
	t.tabOff = plain.Foreground(c("#444444", "#bcbcbc"))
	t.bar = plain.Background(c("#e4e4e4", "#303030")).Foreground(c("#1c1c1c", "#e4e4e4"))
	t.good = plain.Foreground(c("#008700", "#5fd75f"))
	t.bad = plain.Bold(true).Foreground(c("#d70000", "#ff5f5f"))
	t.warn = plain.Foreground(c("#af5f00", "#ffaf00"))
	t.accent = plain.Bold(true).Foreground(c("#5f5fd7", "#8787ff"))
	return t
}
