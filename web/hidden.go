package web

import (
	"strconv"
	"strings"
)

// visuallyHidden reports an inline style that keeps an element's text from
// its reader without display:none: text of a pixel or less, full
// transparency, a scale of zero, a position or indent far off the screen,
// a clip to nothing, or a colour the same as the element's own background.
// Such text reaches no reader, only a program that reads the markup, so
// it is dropped like hidden elements (issue 12: hidden text addressed to a
// model is hostile in itself).
func visuallyHidden(style string) bool {
	decls := map[string]string{}
	for _, decl := range strings.Split(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important")))
		decls[prop] = strings.TrimSpace(val)
	}
	if v, ok := decls["font-size"]; ok && tinyLength(v) {
		return true
	}
	if v, ok := decls["opacity"]; ok {
		if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64); err == nil && (f < 0.05 || strings.HasSuffix(v, "%") && f < 5) {
			return true
		}
	}
	if v, ok := decls["transform"]; ok && (strings.Contains(v, "scale(0)") || strings.Contains(v, "scale(0,") || strings.Contains(v, "scale(0 ")) {
		return true
	}
	if p := decls["position"]; p == "absolute" || p == "fixed" {
		for _, side := range []string{"left", "top", "right", "bottom"} {
			if farOff(decls[side]) {
				return true
			}
		}
	}
	if farOff(decls["text-indent"]) {
		return true
	}
	if v, ok := decls["clip"]; ok && decls["position"] != "" && clippedToNothing(v) {
		return true
	}
	if v, ok := decls["clip-path"]; ok && (v == "inset(50%)" || v == "inset(100%)" || strings.HasPrefix(v, "circle(0")) {
		return true
	}
	if c, ok := decls["color"]; ok {
		bg := decls["background-color"]
		if bg == "" {
			bg = decls["background"]
		}
		if bg != "" && normColor(c) == normColor(bg) {
			return true
		}
	}
	return false
}

// cssLength parses a CSS length into its number and unit.
func cssLength(v string) (float64, string, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] == '-' || v[i] == '+' || v[i] == '.' || v[i] >= '0' && v[i] <= '9') {
		i++
	}
	f, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return 0, "", false
	}
	return f, strings.TrimSpace(v[i:]), true
}

// tinyLength reports a font size no reader can read: at most 1.5 pixels
// or points, a tenth of an em, or zero in any unit.
func tinyLength(v string) bool {
	f, unit, ok := cssLength(v)
	if !ok {
		return false
	}
	switch unit {
	case "px", "pt":
		return f <= 1.5
	case "em", "rem", "vw", "vh", "ex", "ch":
		return f <= 0.1
	case "%":
		return f <= 10
	case "":
		return f == 0
	}
	return false
}

// farOff reports an offset that moves text off any screen.
func farOff(v string) bool {
	f, unit, ok := cssLength(v)
	if !ok {
		return false
	}
	switch unit {
	case "px", "pt":
		return f <= -500
	case "em", "rem":
		return f <= -50
	case "%", "vw", "vh":
		return f <= -100
	}
	return false
}

// clippedToNothing reports clip: rect(…) with an area of a pixel or less.
func clippedToNothing(v string) bool {
	inner, ok := strings.CutPrefix(v, "rect(")
	if !ok {
		return false
	}
	parts := strings.FieldsFunc(strings.TrimSuffix(inner, ")"), func(r rune) bool { return r == ',' || r == ' ' })
	if len(parts) != 4 {
		return false
	}
	var n [4]float64
	for i, p := range parts {
		f, _, ok := cssLength(p)
		if !ok {
			return false
		}
		n[i] = f
	}
	// rect(top, right, bottom, left)
	return n[2]-n[0] <= 1 && n[1]-n[3] <= 1
}

// normColor gives the common spellings of a few colours one form.
func normColor(c string) string {
	c = strings.ReplaceAll(strings.TrimSpace(c), " ", "")
	switch c {
	case "white", "#fff", "#ffffff", "rgb(255,255,255)", "#fffffe":
		return "white"
	case "black", "#000", "#000000", "rgb(0,0,0)":
		return "black"
	}
	return c
}
