package limits

import "fmt"

// CheckJSONDepth refuses a JSON document nested deeper than JSONDepth,
// scanning its bytes once (strings skipped) before any decoder recurses
// into it. Malformed JSON is left to the decoder to report.
func CheckJSONDepth(name string, data []byte) error {
	depth, line, max := 0, 1, JSONDepth.Int()
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '\n':
			line++
		case '[', '{':
			depth++
			if depth > max {
				return JSONDepth.Error(fmt.Sprintf("%s:%d", name, line), "JSON nesting depth", -1, "no HAR export or baseline nests this deep; check the file is what you meant")
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
