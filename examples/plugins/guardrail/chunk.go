package guardrail

// chunkTexts is appendTexts, without all, for the common shapes of a
// streamed chunk: a chat-completions chunk
//
//	{"id":…,"object":…,"created":…,"model":…,"choices":[{"index":0,"delta":{"role":…,"content":…},"finish_reason":null}]}
//
// and a messages-style delta ({"type":…,"index":0,"delta":{"type":…,"text":…}}).
// It knows which of their members hold text, so it skips the walker's
// bookkeeping for putting an object's texts in key order: each frame's
// JSON was walked member by member, every member recorded and the keys
// compared. It declines (ok false, out as it was) on anything else: white
// space, an escaped or unknown key, a repeated key, a value of another
// type, or data that is not JSON; the walker then decides. So it changes
// no result, only the cost (FuzzChunkTexts checks it against the walker).
func chunkTexts(out []string, data []byte) (_ []string, ok bool) {
	n := len(out)
	c := chunk{data: data, out: out}
	if !c.object(levelTop) || c.i != len(data) {
		clear(c.out[n:]) // hold no view of data
		return c.out[:n], false
	}
	return c.out, true
}

// chunk is one pass of chunkTexts over data.
type chunk struct {
	data []byte
	i    int
	out  []string
}

// The objects chunkTexts knows: the chunk itself, an element of choices,
// and a delta.
const (
	levelTop = iota
	levelChoice
	levelDelta
)

// deltaText returns the place of a delta's text-bearing key among them
// in sorted order, the order the walker gives their texts in; -1 for
// another key.
func deltaText(key string) int {
	switch key {
	case "content":
		return 0
	case "partial_json":
		return 1
	case "reasoning_content":
		return 2
	case "text":
		return 3
	case "thinking":
		return 4
	}
	return -1
}

// deltaTexts is how many text-bearing keys a delta has.
const deltaTexts = 5

// object reads the object at c.i, one of level; a delta's texts go out in
// key order once it is read.
func (c *chunk) object(level int) bool {
	if !c.eat('{') {
		return false
	}
	if c.eat('}') {
		return true
	}
	var seen uint32
	var texts [deltaTexts]string
	var has uint8 // which of texts are set
	for {
		key, ok := c.key()
		if !ok || !c.eat(':') {
			return false
		}
		var bit uint32
		switch level {
		case levelTop:
			bit, ok = c.top(key)
		case levelChoice:
			bit, ok = c.choice(key)
		default:
			var t int
			if bit, t, ok = c.delta(key, &texts); ok && t >= 0 {
				has |= 1 << t
			}
		}
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		if c.eat('}') {
			break
		}
		if !c.eat(',') {
			return false
		}
	}
	for t := range texts {
		if has&(1<<t) != 0 {
			c.out = append(c.out, texts[t])
		}
	}
	return true
}

// top reads the value of a chunk's member key and returns the key's bit
// (0: unknown). The texts are under choices or delta, never both (the
// walker would order them by key: declined).
func (c *chunk) top(key string) (uint32, bool) {
	switch key {
	case "choices":
		return 1<<0 | 1<<1, c.choices()
	case "delta":
		return 1<<1 | 1<<2, c.object(levelDelta)
	case "id":
		return 1 << 3, c.nullOrString()
	case "object":
		return 1 << 4, c.nullOrString()
	case "model":
		return 1 << 5, c.nullOrString()
	case "type":
		return 1 << 6, c.nullOrString()
	case "system_fingerprint":
		return 1 << 7, c.nullOrString()
	case "service_tier":
		return 1 << 8, c.nullOrString()
	case "obfuscation":
		return 1 << 9, c.nullOrString()
	case "created":
		return 1 << 10, c.number()
	case "index":
		return 1 << 11, c.number()
	case "usage":
		return 1 << 12, c.null() // a usage object: the walker
	}
	return 0, false
}

// choices reads the choices array.
func (c *chunk) choices() bool {
	if !c.eat('[') {
		return false
	}
	if c.eat(']') {
		return true
	}
	for {
		if !c.object(levelChoice) {
			return false
		}
		if c.eat(']') {
			return true
		}
		if !c.eat(',') {
			return false
		}
	}
}

// choice reads the value of a choice's member key.
func (c *chunk) choice(key string) (uint32, bool) {
	switch key {
	case "index":
		return 1 << 0, c.number()
	case "delta":
		return 1 << 1, c.null() || c.object(levelDelta)
	case "finish_reason":
		return 1 << 2, c.nullOrString()
	case "logprobs":
		return 1 << 3, c.null()
	}
	return 0, false
}

// delta reads the value of a delta's member key; t is the index in
// deltaTexts of the text it set in texts, or -1.
func (c *chunk) delta(key string, texts *[deltaTexts]string) (bit uint32, t int, ok bool) {
	if t := deltaText(key); t >= 0 {
		if c.null() {
			return 1 << t, -1, true
		}
		texts[t], ok = c.string()
		return 1 << t, t, ok
	}
	switch key {
	case "role":
		bit = 1 << 8
	case "refusal":
		bit = 1 << 9
	case "reasoning":
		bit = 1 << 10
	case "type":
		bit = 1 << 11
	case "signature":
		bit = 1 << 12
	default:
		return 0, -1, false
	}
	return bit, -1, c.nullOrString()
}

// eat reads c, if it is next.
func (c *chunk) eat(b byte) bool {
	if c.i < len(c.data) && c.data[c.i] == b {
		c.i++
		return true
	}
	return false
}

// key reads an object key that is plain (ASCII, no escapes).
func (c *chunk) key() (string, bool) {
	if c.i >= len(c.data) || c.data[c.i] != '"' {
		return "", false
	}
	end, plain, ok := scanString(c.data, c.i)
	if !ok || !plain {
		return "", false
	}
	k := view(c.data[c.i+1 : end-1])
	c.i = end
	return k, true
}

// string reads a string value: a view of data when plain, else decoded.
func (c *chunk) string() (string, bool) {
	if c.i >= len(c.data) || c.data[c.i] != '"' {
		return "", false
	}
	end, plain, ok := scanString(c.data, c.i)
	if !ok {
		return "", false
	}
	s := view(c.data[c.i+1 : end-1])
	if !plain {
		s = jsonString(c.data[c.i:end])
	}
	c.i = end
	return s, true
}

// nullOrString reads null or a string it does not keep.
func (c *chunk) nullOrString() bool {
	if c.null() {
		return true
	}
	if c.i >= len(c.data) || c.data[c.i] != '"' {
		return false
	}
	end, _, ok := scanString(c.data, c.i)
	c.i = end
	return ok
}

// null reads the literal null, if it is next.
func (c *chunk) null() bool {
	if len(c.data)-c.i >= 4 && string(c.data[c.i:c.i+4]) == "null" {
		c.i += 4
		return true
	}
	return false
}

// number reads a number.
func (c *chunk) number() bool {
	end, ok := validNumber(c.data, c.i)
	c.i = end
	return ok
}
