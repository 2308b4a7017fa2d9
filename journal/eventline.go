package journal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
)

// EventLine is one line of the event stream Serve answers on EventsPath
// (newline-delimited JSON), for a program in any language: one journal
// record, or, as the last line, why the stream ended early.
//
//	{"position":12,"pod":"0b5c...","seq":4,"time":"2026-12-05T08:00:01.5Z","event":"ContainerStarted",
//	 "description":"name=app attempt=1 ...","data":{"containerStarted":{...}}}
type EventLine struct {
	// Position is the record's place in the log: the cursor (see Record).
	Position uint64 `json:"position,omitempty"`
	// Pod is the pod's UID; Seq the event's place in the pod's stream.
	Pod string `json:"pod,omitempty"`
	Seq uint64 `json:"seq,omitempty"`
	// Time is when the event was journaled (RFC 3339, UTC).
	Time string `json:"time,omitempty"`
	// Event is the event's kind (PodAccepted, ContainerStarted, ...);
	// Description its fields as text; Data the event as protobuf JSON
	// (proto/actorlet/v1/events.proto, message Event).
	Event       string          `json:"event,omitempty"`
	Description string          `json:"description,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	// Damage says why the record cannot be read (see Record.Damage).
	Damage string `json:"damage,omitempty"`
	// Error, on the last line only, says why the node ended the stream
	// (ErrClosed: the node is stopping). The client resumes from the
	// position after the last record it handled.
	Error string `json:"error,omitempty"`
}

// NewEventLine is the line of rec.
func NewEventLine(rec Record) EventLine {
	l := EventLine{Position: rec.Position, Pod: rec.PodUID, Seq: rec.Seq, Damage: rec.Damage}
	if e := rec.Envelope; e != nil {
		l.Time = time.Unix(0, e.TimeUnixNano).UTC().Format(time.RFC3339Nano)
		l.Event = e.Event.Name()
		l.Description = e.Event.Describe(time.Time{})
		if data, err := protojson.Marshal(e.Event); err == nil {
			l.Data = data
		} else {
			l.Damage = fmt.Sprintf("event does not encode as JSON: %v", err)
		}
	}
	return l
}

// lineEncoder writes one JSON object per line.
type lineEncoder struct{ enc *json.Encoder }

func newLineEncoder(w io.Writer) *lineEncoder { return &lineEncoder{enc: json.NewEncoder(w)} }

func (e *lineEncoder) encode(l EventLine) error { return e.enc.Encode(l) }

// ErrStreamEnded: the node ended a followed event stream (it is stopping);
// follow again from the position after the last line handled.
var ErrStreamEnded = errors.New("the node ended the event stream")

// ReadEvents reads the event stream of the node serving dir/SocketName from
// position from and calls fn with each line, in log order. Without follow it
// returns nil after the last record committed; with follow it goes on until
// ctx ends (ctx's error), fn fails (its error), or the node ends the stream
// (ErrStreamEnded, with the node's reason).
func ReadEvents(ctx context.Context, dir string, from uint64, follow bool, fn func(EventLine) error) error {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}}
	if follow {
		q.Set("follow", "1")
	}
	resp, err := socketGet(ctx, dir, EventsPath+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("read the event stream of the node in %s: %w", dir, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20) // a PodAccepted holds its pod
	for sc.Scan() {
		var l EventLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("read the event stream of the node in %s: line %q: %w", dir, sc.Bytes(), err)
		}
		if l.Error != "" {
			return fmt.Errorf("read the event stream of the node in %s: %w: %s", dir, ErrStreamEnded, l.Error)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read the event stream of the node in %s: %w", dir, err)
	}
	if follow {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read the event stream of the node in %s: %w", dir, ErrStreamEnded)
	}
	return nil
}
