package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
)

// Client reads the API of an abctl serve at Base (its URL, with the token
// in it when the API asks for one): the TUI's Live tab is built on it.
type Client struct {
	Base string
}

// Exchanges lists the finished exchanges serve keeps.
func (c Client) Exchanges(ctx context.Context) ([]Summary, error) {
	var list struct {
		Exchanges []Summary `json:"exchanges"`
	}
	if err := c.getJSON(ctx, c.Base+PathExchanges, &list); err != nil {
		return nil, err
	}
	return list.Exchanges, nil
}

// Detail is the part of serve's exchange detail a viewer shows.
type Detail struct {
	Exchange Summary       `json:"exchange"`
	Trace    replay.Report `json:"trace"`
	Request  struct {
		Body *Body `json:"body"`
	} `json:"request"`
	Upstream *struct {
		Body   *Body `json:"body"`
		Chunks []struct {
			Body
		} `json:"chunks"`
	} `json:"upstream"`
}

// Detail reads exchange id.
func (c Client) Detail(ctx context.Context, id uint64) (*Detail, error) {
	var d Detail
	if err := c.getJSON(ctx, fmt.Sprintf("%s%s/%d", c.Base, PathExchanges, id), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Fixture reads exchange id as a fixture file.
func (c Client) Fixture(ctx context.Context, id uint64) ([]byte, error) {
	return getBounded(ctx, fmt.Sprintf("%s%s/%d/fixture", c.Base, PathExchanges, id))
}

// Bytes are the body as sent: its text, or its base64 as is (a viewer
// quotes it).
func (b *Body) Bytes() []byte {
	if b == nil {
		return nil
	}
	if b.Text != nil {
		return []byte(*b.Text)
	}
	return []byte(b.Base64)
}

// Subscriber receives what Subscribe reads; a false return ends the
// subscription.
type Subscriber struct {
	// Arrived gets the exchanges serve keeps, once per connection, then
	// each exchange as it finishes.
	Arrived func([]Summary) bool
	// Missed gets the number of events serve says the subscriber missed.
	Missed func(uint64) bool
}

// Subscribe follows serve's event stream and hands s the exchanges it
// keeps and then every exchange that finishes (a viewer drops repeats by
// id). When serve cuts the stream because the subscriber fell behind
// (overflow), it reconnects at once, resuming after the last event it had
// (Last-Event-ID). It returns why the stream ended, nil when s ended it.
func (c Client) Subscribe(ctx context.Context, s Subscriber) error {
	lastID := ""
	for {
		again, err := c.stream(ctx, &lastID, s)
		if !again {
			return err
		}
	}
}

// maxEventLine bounds one line of the event stream the tab reads: an
// endless line must not take the terminal's memory.
const maxEventLine = 4 << 20

// stream reads one subscription, resuming after *lastID when set. It
// reports whether to reconnect (serve sent overflow) and otherwise why
// the stream ended; nil error means the subscriber is gone.
func (c Client) stream(ctx context.Context, lastID *string, sub Subscriber) (bool, error) {
	base := c.Base
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+PathEvents, nil)
	if err != nil {
		return false, err
	}
	if *lastID != "" {
		req.Header.Set("Last-Event-ID", *lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s%s: %s", base, PathEvents, resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	// The first block is serve's "subscribed" comment.
	if _, err := readLine(r); err != nil {
		return false, err
	}
	list, err := c.Exchanges(ctx)
	if err != nil {
		return false, err
	}
	if !sub.Arrived(list) {
		return false, nil
	}
	var name, id string
	for {
		line, err := readLine(r)
		if err != nil {
			return false, fmt.Errorf("event stream ended: %w", err)
		}
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && name == "exchange_finished":
			var s Summary
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &s) == nil && !sub.Arrived([]Summary{s}) {
				return false, nil
			}
		case strings.HasPrefix(line, "data: ") && name == "missed":
			var m struct {
				Missed uint64 `json:"missed"`
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil && !sub.Missed(m.Missed) {
				return false, nil
			}
		case strings.HasPrefix(line, "data: ") && name == "overflow":
			return true, nil
		case strings.HasPrefix(line, "data: ") && name == "shutdown":
			return false, errors.New("serve sent shutdown")
		case line == "":
			if id != "" {
				*lastID = id
			}
			name, id = "", ""
		}
	}
}

// readLine reads one line of at most maxEventLine bytes, without its end.
func readLine(r *bufio.Reader) (string, error) {
	var long []byte
	for {
		b, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(long)+len(b) > maxEventLine {
				return "", fmt.Errorf("an event line is longer than %d MiB; serve sends no such line", maxEventLine>>20)
			}
			long = append(long, b...)
			continue
		}
		if err != nil {
			return "", err
		}
		if long != nil {
			b = append(long, b...)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

// getJSON reads url and decodes its JSON into v.
func (Client) getJSON(ctx context.Context, url string, v any) error {
	data, err := getBounded(ctx, url)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	return nil
}

// getBounded reads url, bounded by the fixture size limit; an API error answer is
// returned as its message.
func getBounded(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, fixture.MaxFile()+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > fixture.MaxFile() {
		// Said so, rather than as the JSON error of a cut document.
		return nil, fmt.Errorf("%s: the answer is larger than %d MiB, the most the TUI reads (ABKIT_MAX_BODY raises it, docs/limits.md)", redact.URL(url), fixture.MaxFile()>>20)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, errors.New(e.Error)
		}
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return data, nil
}
