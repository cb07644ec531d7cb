package redact

import (
	"bytes"
	"math/bits"
	"regexp"
	"sort"
	"strings"
)

// Edit is one credential found by Scan: bytes [Start, End) of the scanned
// text are replaced by Marker(Kind).
type Edit struct {
	Start, End int
	Kind       string
}

// shape is a rule that finds a credential by what it looks like, wherever
// it sits.
type shape struct {
	kind string
	// triggers are substrings of which one must occur before the regexp
	// runs (lower case and matched ASCII case-insensitively when fold):
	// every match holds one, and the more of the text's ordinary words
	// they leave out ("gh" was in "high" and "right"), the less often the
	// regexp runs.
	triggers []string
	fold     bool
	// needs, when set, is a byte every match contains: without it in the
	// text the regexp cannot match and does not run (every URL has the
	// "://" trigger, few have user-info).
	needs byte
	re    *regexp.Regexp
	// leads says every match starts with one of triggers (after the
	// regexp's leading \b), or with one of starts when set: shorter
	// words, each a prefix of triggers, that the anchored regexp is tried
	// at.
	leads  bool
	starts []string
	// group selects the submatch that is the credential; 0 is the whole
	// match.
	group int
	// keep reports a match that is not a credential after all.
	keep func(m []byte) bool
	// at is re without its leading \b, anchored: for a rule whose every
	// match starts with a trigger word at a word boundary, re runs only
	// where a trigger word starts (see find). nil for the others.
	at *regexp.Regexp
}

// init compiles the anchored form of each rule whose regexp starts with
// \b and whose matches all start with a trigger word. A regexp that
// starts with \b has no literal prefix for the regexp package to skip
// to, so over a whole body it tried a match at every byte: 15–250 ns a
// byte, 0.5–6 ms for a 27 KB stream that only held a trigger word.
func init() {
	for i := range shapes {
		r := &shapes[i]
		src, flags := r.re.String(), ""
		if rest, ok := strings.CutPrefix(src, "(?i)"); ok {
			src, flags = rest, "(?i)"
		}
		if rest, ok := strings.CutPrefix(src, `\b`); ok && r.leads {
			r.at = regexp.MustCompile(flags + `^(?:` + rest + `)`)
			if r.starts == nil {
				r.starts = r.triggers
			}
		}
	}
}

var shapes = []shape{
	{kind: "private_key", triggers: []string{"PRIVATE KEY"},
		re: regexp.MustCompile(`-----BEGIN[A-Z ]*PRIVATE KEY[A-Z ]*-----(?s:.*?-----END[A-Z ]*PRIVATE KEY[A-Z ]*-----|[A-Za-z0-9+/=\\\s:,-]*)`)},
	{kind: "jwt", leads: true, triggers: []string{"eyJ"},
		re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`)},
	{kind: "bearer", leads: true, triggers: spaced("bearer"), starts: []string{"bearer"}, fold: true,
		re:   regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*`),
		keep: notBearerCredential},
	{kind: "basic", leads: true, triggers: spaced("basic"), starts: []string{"basic"}, fold: true,
		re:   regexp.MustCompile(`(?i)\bbasic\s+[A-Za-z0-9+/]{4,}={0,2}`),
		keep: notBasicCredential},
	{kind: "anthropic_key", leads: true, triggers: []string{"sk-ant-"},
		re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{8,}`)},
	{kind: "openai_key", leads: true, triggers: []string{"sk-"},
		re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`)},
	{kind: "stripe_key", leads: true, triggers: []string{"rk_live_", "sk_live_", "rk_test_", "sk_test_"},
		re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: "github_token", leads: true, triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{kind: "gitlab_token", leads: true, triggers: []string{"glpat-"},
		re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{kind: "slack_token", leads: true, triggers: []string{"xox"},
		re: regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`)},
	{kind: "aws_access_key", leads: true, triggers: []string{"AKIA", "ASIA"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{kind: "google_api_key", leads: true, triggers: []string{"AIza"},
		re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{kind: "google_oauth", leads: true, triggers: []string{"ya29."},
		re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-]{20,}`)},
	{kind: "huggingface_token", leads: true, triggers: []string{"hf_"},
		re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)},
	// Telegram bot tokens: in a path (/bot123:TOKEN/getMe) whatever their
	// length, elsewhere by their usual shape.
	{kind: "bot_token", triggers: []string{"/bot"},
		re: regexp.MustCompile(`/bot(\d+:[^/\s?#"'&<>\\]+)`), group: 1},
	{kind: "bot_token", triggers: []string{":AA"},
		re: regexp.MustCompile(`\b\d{6,12}:AA[A-Za-z0-9_-]{30,}`)},
	{kind: "webhook", triggers: []string{"hooks.slack.com"},
		re: regexp.MustCompile(`hooks\.slack\.com/services/([A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+)`), group: 1},
	{kind: "webhook", triggers: []string{"/api/webhooks/"},
		re: regexp.MustCompile(`/api/webhooks/\d+/([A-Za-z0-9_\-]{20,})`), group: 1},
	// URL user-info: the password of user:password@, and a token used as
	// the user name (https://TOKEN@host).
	{kind: "password", triggers: []string{"://"}, needs: '@',
		re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@"'\\]*:([^/\s@"'\\]+)@`), group: 1},
	{kind: "userinfo", triggers: []string{"://"}, needs: '@',
		re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://([^/\s:@"'<>\\]{16,})@`), group: 1,
		keep: func(m []byte) bool { return !secretShaped(m) }},
}

// spaced returns word followed by each byte \s matches in a regexp: the
// credential schemes' trigger words, which the regexps want followed by
// white space.
func spaced(word string) []string {
	var out []string
	for _, c := range "\t\n\f\r " {
		out = append(out, word+string(c))
	}
	return out
}

// Scan finds the credentials in b and returns them sorted by offset,
// without overlaps. b may be any bytes: JSON, an event stream, a form, a
// log line or binary data with text in it; nothing is decoded as a whole,
// so a body that does not parse is still searched. Scan finds:
//
//   - values with the shape of a credential anywhere (see the shape rules:
//     JWTs, sk-…, ghp_…, AWS key ids, PEM private keys, bearer and Basic
//     credentials, bot tokens in paths, URL user-info);
//   - JSON string values ("key": "…", also inside a JSON string as
//     \"key\": \"…\", and 'key': '…') whose key names a credential,
//     parsed to their closing quote whatever they contain;
//   - key=value (query strings, forms, logs; names percent-decoded) and
//     key: value pairs whose key names a credential.
//
// A key that only may name a credential ("token", "key") has its value
// redacted only when the value looks like one, so a logprobs token "I'm"
// stays.
func Scan(b []byte) []Edit {
	es := scanShapes(b, nil)
	es = quotedPairs(b, es)
	es = barePairs(b, es, pairsAll)
	return merge(dropMarkers(b, es))
}

var markerPrefix = []byte("[REDACTED:")

// dropMarkers removes edits that touch a marker already in b, so
// redacting redacted text changes nothing.
func dropMarkers(b []byte, es []Edit) []Edit {
	if len(es) == 0 || !bytes.Contains(b, markerPrefix) {
		return es
	}
	var spans [][2]int
	for off := 0; ; {
		i := bytes.Index(b[off:], markerPrefix)
		if i < 0 {
			break
		}
		s := off + i
		e := bytes.IndexByte(b[s:], ']')
		if e < 0 {
			break
		}
		spans = append(spans, [2]int{s, s + e + 1})
		off = s + e + 1
	}
	sortEdits(es)
	out := es[:0]
	k := 0
	for _, e := range es {
		for k < len(spans) && spans[k][1] <= e.Start {
			k++
		}
		// spans are disjoint and sorted: only the first that does not end
		// before e starts can overlap it, or the next ones up to e.End.
		keep := true
		for j := k; j < len(spans) && spans[j][0] < e.End; j++ {
			if e.Start < spans[j][1] {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

// scanShapes adds the matches of the shape rules whose trigger words
// occur in b, found for all rules in one pass.
func scanShapes(b []byte, es []Edit) []Edit {
	for tr := triggeredShapes(b); tr != 0; tr &= tr - 1 {
		es = shapes[bits.TrailingZeros64(tr)].find(b, es)
	}
	return es
}

// find adds the matches of r in b, whose trigger words b holds.
func (r *shape) find(b []byte, es []Edit) []Edit {
	if r.needs != 0 && bytes.IndexByte(b, r.needs) < 0 {
		return es
	}
	for _, m := range r.matches(b) {
		s, e := m[2*r.group], m[2*r.group+1]
		if s < 0 || s == e {
			continue
		}
		if r.keep != nil && r.keep(b[s:e]) {
			continue
		}
		if isMarker(b[s:e]) {
			continue
		}
		es = append(es, Edit{Start: s, End: e, Kind: r.kind})
	}
	return es
}

// matches returns what r.re.FindAllSubmatchIndex(b, -1) returns. A rule
// with an anchored form tries it only where one of its trigger words
// starts at a word boundary, in order, going on after each match as
// FindAll does: every match of re starts at such a place, and the
// leftmost-first match starting there is the anchored one.
func (r *shape) matches(b []byte) [][]int {
	if r.at == nil {
		return r.re.FindAllSubmatchIndex(b, -1)
	}
	var out [][]int
	next := make([]int, len(r.starts)) // each word's next start, -1: none
	for k := range next {
		next[k] = r.index(b, 0, k)
	}
	for pos := 0; ; {
		p := -1
		for k, q := range next {
			if q >= 0 && q < pos {
				q = r.index(b, pos, k)
				next[k] = q
			}
			if q >= 0 && (p < 0 || q < p) {
				p = q
			}
		}
		if p < 0 {
			return out
		}
		pos = p + 1
		if p > 0 && isWordByte(b[p-1]) {
			continue // no \b before the word
		}
		m := r.at.FindSubmatchIndex(b[p:])
		if m == nil {
			continue
		}
		for j := range m {
			if m[j] >= 0 {
				m[j] += p
			}
		}
		out = append(out, m)
		pos = max(pos, m[1])
	}
}

// index returns where start word k of r next starts in b at or after
// from, or -1.
func (r *shape) index(b []byte, from, k int) int {
	t := r.starts[k]
	var i int
	if r.fold {
		i = indexFold(b[from:], t)
	} else {
		i = bytes.Index(b[from:], []byte(t))
	}
	if i < 0 {
		return -1
	}
	return from + i
}

// indexFold returns the first index of the lower-case ASCII needle in b,
// ignoring ASCII case, or -1. It skips to each place its first byte, in
// either case, occurs (bytes.IndexByte).
func indexFold(b []byte, needle string) int {
	n := len(needle)
	lo, up := needle[0], needle[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -2, -2 // -2: not looked for yet
	for from := 0; from+n <= len(b); {
		if nextLo != -1 && nextLo < from {
			if nextLo = bytes.IndexByte(b[from:], lo); nextLo >= 0 {
				nextLo += from
			}
		}
		if nextUp != -1 && nextUp < from {
			if nextUp = bytes.IndexByte(b[from:], up); nextUp >= 0 {
				nextUp += from
			}
		}
		i := nextLo
		if i < 0 || (nextUp >= 0 && nextUp < i) {
			i = nextUp
		}
		if i < 0 || i+n > len(b) {
			return -1
		}
		j := 1
		for ; j < n && lower(b[i+j]) == needle[j]; j++ {
		}
		if j == n {
			return i
		}
		from = i + 1
	}
	return -1
}

// isWordByte reports an ASCII word byte, as \b sees them.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// merge sorts edits and joins overlapping ones. At equal ranges the edit
// found first wins, so a shape's kind (openai_key) beats the key's name.
func merge(es []Edit) []Edit {
	if len(es) < 2 {
		return es
	}
	sortEdits(es)
	out := es[:1]
	for _, e := range es[1:] {
		last := &out[len(out)-1]
		if e.Start < last.End {
			if e.End > last.End {
				last.End = e.End
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// sortEdits orders edits by start, longest first; equal edits keep their
// order.
func sortEdits(es []Edit) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Start != es[j].Start {
			return es[i].Start < es[j].Start
		}
		return es[i].End > es[j].End
	})
}

// Apply returns b with every edit replaced by its marker. es must be sorted
// and not overlap, as Scan returns them. With no edits it returns b.
func Apply(b []byte, es []Edit) []byte {
	if len(es) == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+len(es)*16)
	prev := 0
	for _, e := range es {
		out = append(out, b[prev:e.Start]...)
		out = append(out, Marker(e.Kind)...)
		prev = e.End
	}
	return append(out, b[prev:]...)
}

// Rebound maps chunk boundaries of the original text (each chunk's end
// offset, ascending) to the text Apply returns for es. A boundary that
// falls inside a credential moves to just after its marker, so the marker
// is never cut and no part of the credential survives in either chunk;
// spanned counts the boundaries that moved that way. A chunk may become
// empty as a result.
func Rebound(ends []int, es []Edit) (out []int, spanned int) {
	out = make([]int, len(ends))
	delta, k := 0, 0
	for i, p := range ends {
		for k < len(es) && es[k].End <= p {
			delta += len(Marker(es[k].Kind)) - (es[k].End - es[k].Start)
			k++
		}
		if k < len(es) && es[k].Start < p {
			// Inside es[k]: after its marker.
			out[i] = es[k].Start + delta + len(Marker(es[k].Kind))
			spanned++
			continue
		}
		out[i] = p + delta
	}
	return out, spanned
}

func isMarker(v []byte) bool {
	return bytes.HasPrefix(v, []byte("[REDACTED:")) && bytes.IndexByte(v, ']') == len(v)-1
}

// keyTriggers are the substrings one of which every credential key name
// holds; names without one are skipped before any further work.
var keyTriggers = []string{"key", "token", "secret", "pass", "pwd", "auth", "cookie", "credential", "sig"}

func keyTriggered(k []byte) bool { return keyTriggerSet.any(k) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// quotedPairs finds "key": value, 'key': 'value' and, inside a JSON
// string, \"key\": \"value\", at every colon of b.
func quotedPairs(b []byte, es []Edit) []Edit {
	for off := 0; off < len(b); {
		i := bytes.IndexByte(b[off:], ':')
		if i < 0 {
			break
		}
		c := off + i
		off = c + 1
		j := c - 1
		for j >= 0 && isSpace(b[j]) {
			j--
		}
		if j < 0 || (b[j] != '"' && b[j] != '\'') {
			continue
		}
		q := b[j]
		esc := q == '"' && j > 0 && b[j-1] == '\\'
		kend := j
		if esc {
			kend = j - 1
		}
		k := kend - 1
		for k >= 0 && kend-k <= 64 && b[k] != q && b[k] != '\n' {
			k--
		}
		if k < 0 || b[k] != q || kend-k > 64 {
			continue
		}
		if esc != (k > 0 && b[k-1] == '\\') {
			continue
		}
		key := b[k+1 : kend]
		if esc && bytes.IndexByte(key, '\\') >= 0 {
			continue
		}
		if !keyTriggered(key) {
			continue
		}
		nd := keyNeed(string(key), false)
		if nd == notSecret {
			continue
		}
		v := off
		for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
			v++
		}
		if v >= len(b) {
			continue
		}
		switch {
		case esc:
			if v+1 < len(b) && b[v] == '\\' && b[v+1] == '"' {
				s := v + 2
				e := escapedStringEnd(b, s)
				if valueIsSecret(nd, b[s:e]) {
					es = append(es, Edit{Start: s, End: e, Kind: kindOf(string(key))})
				}
				off = max(off, e)
			}
		case b[v] == q:
			s := v + 1
			e := stringEnd(b, s, q)
			if valueIsSecret(nd, b[s:e]) && !fetchCredentialsMode(key, b[s:e]) {
				es = append(es, Edit{Start: s, End: e, Kind: kindOf(string(key))})
			}
			off = max(off, e)
		case b[v] == '[' && q == '"':
			// A list of credentials: every string in it.
			var e int
			es, e = listStrings(b, v, nd, kindOf(string(key)), es)
			off = max(off, e)
		}
	}
	return es
}

// stringEnd returns the offset of the quote closing a string that starts
// at s, honouring backslash escapes. An unterminated string (a body cut
// short) ends at the line's end or b's.
func stringEnd(b []byte, s int, q byte) int {
	for i := s; i < len(b); i++ {
		switch b[i] {
		case '\\':
			// A backslash escapes no line end: a string is never taken to
			// run past its line, or an unclosed "…\ would hide the
			// credential pairs on the lines after it (FuzzRedactPlanted).
			if i+1 < len(b) && b[i+1] != '\n' {
				i++
			}
		case q:
			return i
		case '\n':
			return i
		}
	}
	return len(b)
}

// escapedStringEnd returns the offset of the backslash of the \" that
// closes a string nested in a JSON string and starting at s: a quote
// preceded by 4n+1 backslashes (4n+3 is a quote inside the nested string).
func escapedStringEnd(b []byte, s int) int {
	for i := s; i < len(b); i++ {
		if b[i] == '\n' {
			return i
		}
		if b[i] != '"' {
			continue
		}
		n := 0
		for k := i - 1; k >= s && b[k] == '\\'; k-- {
			n++
		}
		if n%4 == 1 {
			return i - 1
		}
		if n == 0 {
			// The enclosing string ends here.
			return i
		}
	}
	return len(b)
}

// listStrings adds every string value of the JSON array opening at v and
// returns where the array ends.
func listStrings(b []byte, v int, nd need, kind string, es []Edit) ([]Edit, int) {
	depth := 0
	for i := v; i < len(b); i++ {
		switch b[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return es, i
			}
		case '"':
			e := stringEnd(b, i+1, '"')
			if valueIsSecret(nd, b[i+1:e]) {
				es = append(es, Edit{Start: i + 1, End: e, Kind: kind})
			}
			i = e
		}
	}
	return es, len(b)
}

// fetchCredentialsMode reports a "credentials" member holding one of the
// Fetch API's modes (omit, include, same-origin): a request option, in
// JSON and in code, never a credential.
func fetchCredentialsMode(key, v []byte) bool {
	if !bytes.EqualFold(key, []byte("credentials")) {
		return false
	}
	switch string(v) {
	case "omit", "include", "same-origin":
		return true
	}
	return false
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '%'
}

// pairMode says which unquoted pairs barePairs reads.
type pairMode uint8

const (
	// pairsAll: key=value and key: value anywhere (text of unknown type).
	pairsAll pairMode = iota
	// pairsForm: key=value only (a form body).
	pairsForm
	// pairsURL: only the query parameters of URLs (in JSON or code).
	pairsURL
)

// barePairs finds key=value (query strings, forms, logs) and key: value
// (logs, YAML) with an unquoted key naming a credential, as mode allows.
func barePairs(b []byte, es []Edit, mode pairMode) []Edit {
	var seps separators
	seps.colon = mode == pairsAll
	for off := 0; off < len(b); {
		c := seps.next(b, off)
		if c < 0 {
			break
		}
		off = c + 1
		k := c
		for k > 0 && c-k < 64 && isKeyByte(b[k-1]) {
			k--
		}
		if k == c || (k > 0 && isKeyByte(b[k-1])) {
			continue
		}
		key := b[k:c]
		if !keyTriggered(key) {
			continue
		}
		inQuery := b[c] == '=' && (k == 0 || b[k-1] == '?' || b[k-1] == '&' || b[k-1] == ';')
		if mode == pairsURL && (k == 0 || !inQuery || !inURL(b, k)) {
			continue
		}
		nd := keyNeed(string(key), inQuery)
		if nd == notSecret {
			continue
		}
		if nd == needSecretShape && b[c] == '=' {
			// token=… in running text: one opaque word is enough.
			nd = needOpaque
		}
		v := c + 1
		if b[c] == ':' {
			if v < len(b) && b[v] == '/' {
				continue // a URL scheme
			}
			for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
				v++
			}
		}
		if v >= len(b) {
			continue
		}
		var s, e int
		switch {
		case b[v] == '"' || b[v] == '\'':
			s = v + 1
			e = stringEnd(b, s, b[v])
		case b[c] == '=':
			s = v
			e = s
			for e < len(b) && !valueEnd(b[e], inQuery || nd == anyValue) {
				e++
			}
		default:
			// key: value. A credential name takes the rest of the line
			// (multi-word passwords); a generic one a single word.
			s = v
			e = s
			for e < len(b) && b[e] != '\n' && b[e] != '\r' && b[e] != '"' && b[e] != '\\' && b[e] != '<' &&
				(nd == anyValue || (b[e] != ' ' && b[e] != '\t' && b[e] != ',' && b[e] != ';')) {
				e++
			}
			for e > s && (b[e-1] == ' ' || b[e-1] == '\t') {
				e--
			}
		}
		if valueIsSecret(nd, b[s:e]) && !fetchCredentialsMode(key, b[s:e]) {
			es = append(es, Edit{Start: s, End: e, Kind: kindOf(string(key))})
			// The value is gone whatever it holds: go on after it.
			off = max(off, e)
		}
	}
	return es
}

// separators finds the '=' (and, when colon is set, ':') of a text in
// order, each byte kind with bytes.IndexByte and its next place kept:
// bytes.IndexAny tests every byte against a set, and a stream's lines
// have many colons and few or no '='.
type separators struct {
	colon       bool
	eq, col     int // the next '=' and ':' at or after the last from, -1 none
	eqOK, colOK bool
}

// next returns the first separator at or after from, or -1.
func (s *separators) next(b []byte, from int) int {
	s.eq, s.eqOK = nextByte(b, from, '=', s.eq, s.eqOK)
	if !s.colon {
		return s.eq
	}
	s.col, s.colOK = nextByte(b, from, ':', s.col, s.colOK)
	switch {
	case s.eq < 0:
		return s.col
	case s.col < 0:
		return s.eq
	}
	return min(s.eq, s.col)
}

// nextByte returns where c is next in b at or after from, given the last
// answer at (valid when ok), searching again only when at is before from.
func nextByte(b []byte, from int, c byte, at int, ok bool) (int, bool) {
	if ok && (at < 0 || at >= from) {
		return at, true
	}
	i := bytes.IndexByte(b[from:], c)
	if i >= 0 {
		i += from
	}
	return i, true
}

// valueEnd reports whether c ends a key=value value; wide (query strings
// and credential names) lets punctuation be part of the value, angle
// brackets included: "api_key=<x…" kept the whole value when '<' ended it
// (FuzzRedactPlanted), and a credential's tail must never survive.
func valueEnd(c byte, wide bool) bool {
	switch c {
	case '&', ' ', '\t', '\r', '\n', '"', '\'', '\\', '#':
		return true
	case ',', ';', ')', '}', ']', '<', '>':
		return !wide
	}
	return c < 0x20
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
