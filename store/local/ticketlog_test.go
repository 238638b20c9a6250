package local

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// tlT0 starts a segment of the default span.
var tlT0 = time.Unix(1_767_225_600, 0).UTC()

func openTicketLog(t testing.TB, dir string, o TicketLogOptions) *TicketLog {
	t.Helper()
	l, err := OpenTicketLog(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// ticketAt is the encoded ticket of a quote issued at at, with some
// calldata (tickets run 1–2 KiB) and, when address is set, a deposit
// target.
func ticketAt(t testing.TB, at time.Time, address, memo string) store.EncodedTicket {
	t.Helper()
	r := &quote.Route{Tool: "sbx-arcbridge", DepositAddress: address, DepositMemo: memo,
		Tx: &quote.TxRequest{To: "0xrouter", Data: bytes.Repeat([]byte{0xab}, 400), ChainID: 42161, GasLimit: 300000}}
	enc, err := store.EncodeTicket(issued(at, r))
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func put(t testing.TB, l *TicketLog, ts ...store.EncodedTicket) {
	t.Helper()
	if err := l.PutTickets(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
}

// wantTicket checks that l serves enc's ticket, decoded as it was encoded.
func wantTicket(t testing.TB, l *TicketLog, enc store.EncodedTicket) {
	t.Helper()
	got, err := l.Ticket(context.Background(), enc.ID)
	if err != nil {
		t.Fatalf("Ticket(%s): %v", enc.ID, err)
	}
	want, err := store.DecodeTicket(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Ticket(%s) = %+v\nwant %+v", enc.ID, got, want)
	}
}

func wantNoTicket(t testing.TB, l *TicketLog, id string) {
	t.Helper()
	if got, err := l.Ticket(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Ticket(%q) = %+v, %v; want store.ErrNotFound", id, got, err)
	}
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, ticketLogDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// Tickets are found by id whichever segment and batch they went to; an id
// never issued, malformed or of a span with no segment is not found.
func TestTicketLogPutGet(t *testing.T) {
	dir := t.TempDir()
	l := openTicketLog(t, dir, TicketLogOptions{})
	var all []store.EncodedTicket
	for _, batch := range [][]time.Duration{{0, 3 * time.Second, 9 * time.Second, 10 * time.Second, 25 * time.Second}, {2 * time.Second, 29 * time.Second}} {
		var ts []store.EncodedTicket
		for _, d := range batch {
			ts = append(ts, ticketAt(t, tlT0.Add(d), "", ""))
		}
		put(t, l, ts...)
		all = append(all, ts...)
	}
	for _, enc := range all {
		wantTicket(t, l, enc)
	}
	if got, want := segmentFiles(t, dir), []string{"1767225600-1767225610.seg", "1767225610-1767225620.seg", "1767225620-1767225630.seg"}; !slices.Equal(got, want) {
		t.Fatalf("segment files %v, want %v", got, want)
	}
	known := all[0].ID
	for _, tt := range []struct{ name, id string }{
		{"malformed", "nope"},
		{"empty", ""},
		{"upper-case hex", strings.ToUpper(known[:3]) + strings.ToUpper(known[3:])},
		{"never issued, in a kept segment", quote.NewID(tlT0.Add(time.Second))},
		{"never issued, no segment", quote.NewID(tlT0.Add(time.Hour))},
		{"another id's random part at another second", known[:3] + quote.NewID(tlT0.Add(time.Second))[3:13] + known[13:]},
	} {
		t.Run(tt.name, func(t *testing.T) { wantNoTicket(t, l, tt.id) })
	}
}

// An intents quote is found by its deposit target, the latest quote's
// where two share one, before and after a reopen.
func TestTicketLogQuoteByDeposit(t *testing.T) {
	dir := t.TempDir()
	l := openTicketLog(t, dir, TicketLogOptions{})
	first := ticketAt(t, tlT0, "0xdepA", "")
	memo := ticketAt(t, tlT0.Add(time.Second), "dep<&>", "memo\n")
	plain := ticketAt(t, tlT0.Add(2*time.Second), "", "")
	again := ticketAt(t, tlT0.Add(15*time.Second), "0xdepA", "")
	put(t, l, first, memo, plain)
	put(t, l, again)
	check := func(t *testing.T, l *TicketLog) {
		for _, tt := range []struct {
			name, address, memo, want string
		}{
			{"by address", "0xdepA", "", again.ID},
			{"by address and memo", "dep<&>", "memo\n", memo.ID},
			{"memo missing", "dep<&>", "", ""},
			{"memo where none", "0xdepA", "m", ""},
			{"unknown address", "0xnone", "", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				id, err := l.QuoteByDeposit(context.Background(), tt.address, tt.memo)
				if tt.want == "" {
					if !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("QuoteByDeposit = %q %v, want store.ErrNotFound", id, err)
					}
					return
				}
				if err != nil || id != tt.want {
					t.Fatalf("QuoteByDeposit = %q %v, want %s", id, err, tt.want)
				}
			})
		}
	}
	t.Run("open", func(t *testing.T) { check(t, l) })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("reopened", func(t *testing.T) { check(t, openTicketLog(t, dir, TicketLogOptions{})) })
}

// A sweep deletes exactly the segments whose whole span is before its
// bound: their files and their tickets, and nothing else.
func TestTicketLogSweep(t *testing.T) {
	dir := t.TempDir()
	l := openTicketLog(t, dir, TicketLogOptions{})
	byOffset := map[int]store.EncodedTicket{}
	for _, s := range []int{0, 9, 10, 19, 20, 35} {
		byOffset[s] = ticketAt(t, tlT0.Add(time.Duration(s)*time.Second), "0xdep"+strconv.Itoa(s), "")
		put(t, l, byOffset[s])
	}
	for _, step := range []struct {
		before time.Time
		kept   []int
		files  int
	}{
		{tlT0.Add(9 * time.Second), []int{0, 9, 10, 19, 20, 35}, 4},
		{tlT0.Add(19*time.Second + 999*time.Millisecond), []int{10, 19, 20, 35}, 3},
		{tlT0.Add(30 * time.Second), []int{35}, 1},
		{tlT0.Add(30 * time.Second), []int{35}, 1},
		{tlT0.Add(time.Hour), nil, 0},
	} {
		if err := l.SweepTickets(context.Background(), step.before); err != nil {
			t.Fatal(err)
		}
		for s, enc := range byOffset {
			if slices.Contains(step.kept, s) {
				wantTicket(t, l, enc)
				if id, err := l.QuoteByDeposit(context.Background(), "0xdep"+strconv.Itoa(s), ""); err != nil || id != enc.ID {
					t.Fatalf("sweep before %v: deposit of ticket at +%ds: %q %v", step.before, s, id, err)
				}
			} else {
				wantNoTicket(t, l, enc.ID)
			}
		}
		if got := segmentFiles(t, dir); len(got) != step.files {
			t.Fatalf("sweep before %v left %v, want %d files", step.before, got, step.files)
		}
	}
	// A late ticket for a swept span makes its segment again.
	late := ticketAt(t, tlT0, "", "")
	put(t, l, late)
	wantTicket(t, l, late)
}

// A reopened log serves what was written before, having deleted the
// segments past its horizon, and appends after what it found.
func TestTicketLogReopen(t *testing.T) {
	dir := t.TempDir()
	l := openTicketLog(t, dir, TicketLogOptions{})
	old := ticketAt(t, tlT0, "0xold", "")
	kept := []store.EncodedTicket{ticketAt(t, tlT0.Add(10*time.Second), "0xdep", "m"), ticketAt(t, tlT0.Add(11*time.Second), "", ""),
		ticketAt(t, tlT0.Add(22*time.Second), "", "")}
	put(t, l, append([]store.EncodedTicket{old}, kept...)...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.PutTickets(context.Background(), kept); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("PutTickets after Close = %v", err)
	}
	if _, err := l.Ticket(context.Background(), kept[0].ID); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Ticket after Close = %v", err)
	}
	// Now-Horizon falls in the second segment: the first ended before it.
	opts := TicketLogOptions{Horizon: time.Minute, Now: func() time.Time { return tlT0.Add(75 * time.Second) }}
	l = openTicketLog(t, dir, opts)
	wantNoTicket(t, l, old.ID)
	if _, err := l.QuoteByDeposit(context.Background(), "0xold", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deposit of a deleted segment: %v", err)
	}
	for _, enc := range kept {
		wantTicket(t, l, enc)
	}
	if id, err := l.QuoteByDeposit(context.Background(), "0xdep", "m"); err != nil || id != kept[0].ID {
		t.Fatalf("deposit after reopen: %q %v", id, err)
	}
	if got := segmentFiles(t, dir); len(got) != 2 {
		t.Fatalf("segments after reopen %v, want the two within the horizon", got)
	}
	more := ticketAt(t, tlT0.Add(12*time.Second), "", "")
	put(t, l, more)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTicketLog(t, dir, opts)
	for _, enc := range append(kept, more) {
		wantTicket(t, l, enc)
	}
}

// A record torn by a crash at the end of a segment is cut on open; the
// records before it are served and the next append follows them.
func TestTicketLogTornTail(t *testing.T) {
	frame := appendFrame(nil, ticketAt(t, tlT0, "", "").Record())
	for _, tt := range []struct {
		name string
		tail []byte
	}{
		{"part of a header", frame[:5]},
		{"header and part of the payload", frame[:len(frame)/2]},
		{"all but the last byte", frame[:len(frame)-1]},
		{"zeroes, as a lost page reads", make([]byte, 4096)},
		{"a length past the end", append([]byte{0, 0, 16, 0, 1, 2, 3, 4}, frame[8:100]...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openTicketLog(t, dir, TicketLogOptions{})
			ts := []store.EncodedTicket{ticketAt(t, tlT0, "", ""), ticketAt(t, tlT0.Add(time.Second), "", ""), ticketAt(t, tlT0.Add(2*time.Second), "", "")}
			put(t, l, ts...)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, ticketLogDir, segmentName(tlT0.Unix(), tlT0.Unix()+10))
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tt.tail); err != nil {
				t.Fatal(err)
			}
			must(t, f.Close())

			l = openTicketLog(t, dir, TicketLogOptions{})
			for _, enc := range ts {
				wantTicket(t, l, enc)
			}
			if st2, err := os.Stat(path); err != nil || st2.Size() != st.Size() {
				t.Fatalf("segment after open: %v %v, want cut back to %d bytes", st2.Size(), err, st.Size())
			}
			next := ticketAt(t, tlT0.Add(3*time.Second), "", "")
			put(t, l, next)
			must(t, l.Close())
			l = openTicketLog(t, dir, TicketLogOptions{})
			for _, enc := range append(ts, next) {
				wantTicket(t, l, enc)
			}
		})
	}
}

// A record damaged on disk is never served: while open, its read fails its
// checksum; on reopen, a damaged payload is skipped and the records after
// it kept, while a damaged length ends the segment there.
func TestTicketLogCorruptRecord(t *testing.T) {
	for _, tt := range []struct {
		name string
		// at is the byte of the second record to flip, from its start.
		at int
		// keptAfterReopen tells which of the three tickets a reopen finds.
		keptAfterReopen []bool
	}{
		{"payload", frameHeaderSize + 40, []bool{true, false, true}},
		{"checksum", 5, []bool{true, false, true}},
		{"length", 2, []bool{true, false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openTicketLog(t, dir, TicketLogOptions{})
			ts := []store.EncodedTicket{ticketAt(t, tlT0, "", ""), ticketAt(t, tlT0.Add(time.Second), "0xdep", ""), ticketAt(t, tlT0.Add(2*time.Second), "", "")}
			put(t, l, ts...)
			path := filepath.Join(dir, ticketLogDir, segmentName(tlT0.Unix(), tlT0.Unix()+10))
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(frameHeaderSize + len(ts[0].Record()) + tt.at)
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, at); err != nil {
				t.Fatal(err)
			}
			b[0] ^= 0x40
			if _, err := f.WriteAt(b, at); err != nil {
				t.Fatal(err)
			}
			must(t, f.Close())

			_, err = l.Ticket(context.Background(), ts[1].ID)
			if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("damaged ticket: %v, want store.ErrNotFound naming the damage", err)
			}
			if _, err := l.QuoteByDeposit(context.Background(), "0xdep", ""); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("deposit of a damaged ticket: %v", err)
			}
			wantTicket(t, l, ts[0])
			wantTicket(t, l, ts[2])
			must(t, l.Close())

			l = openTicketLog(t, dir, TicketLogOptions{})
			for i, enc := range ts {
				if tt.keptAfterReopen[i] {
					wantTicket(t, l, enc)
				} else {
					wantNoTicket(t, l, enc.ID)
				}
			}
		})
	}
}

// Once the writer has moved a span past a segment, its index turns into
// sorted slices; a late ticket, or one written again, is still found.
func TestTicketLogSealing(t *testing.T) {
	l := openTicketLog(t, t.TempDir(), TicketLogOptions{})
	var ts []store.EncodedTicket
	for i := range 50 {
		ts = append(ts, ticketAt(t, tlT0.Add(time.Duration(i%10)*time.Second), "0xdep"+string(rune('a'+i%26)), ""))
	}
	put(t, l, ts...)
	seg := l.segs[0]
	if len(seg.recent) != 50 || len(seg.sorted) != 0 {
		t.Fatalf("open segment: %d in maps, %d sorted", len(seg.recent), len(seg.sorted))
	}
	put(t, l, ticketAt(t, tlT0.Add(19*time.Second), "", ""))
	if len(seg.recent) != 50 {
		t.Fatal("a segment was sealed before the writer moved a span past it")
	}
	put(t, l, ticketAt(t, tlT0.Add(20*time.Second), "", ""))
	if len(seg.recent) != 0 || len(seg.sorted) != 50 || len(seg.sortedDeps) != 26 {
		t.Fatalf("sealed segment: %d in maps, %d sorted, %d deposits", len(seg.recent), len(seg.sorted), len(seg.sortedDeps))
	}
	late := ticketAt(t, tlT0.Add(5*time.Second), "0xdepa", "")
	put(t, l, late, ts[3])
	for _, enc := range append(ts, late) {
		wantTicket(t, l, enc)
	}
	if id, err := l.QuoteByDeposit(context.Background(), "0xdepa", ""); err != nil || id != late.ID {
		t.Fatalf("deposit of a late ticket: %q %v", id, err)
	}
	if len(seg.recent) != 0 {
		t.Fatal("late tickets were not merged in at once")
	}
	if len(seg.sorted) != 51 {
		t.Fatalf("%d sorted after the late tickets, want 51 (one written twice)", len(seg.sorted))
	}
}

// Readers find every ticket the writer has put while it appends across
// segments and sweeps old ones; run under -race.
func TestTicketLogConcurrentReaders(t *testing.T) {
	l := openTicketLog(t, t.TempDir(), TicketLogOptions{})
	const batches, perBatch, readers = 120, 10, 4
	all := make([]store.EncodedTicket, 0, batches*perBatch)
	for b := range batches {
		for i := range perBatch {
			addr := ""
			if i == 0 {
				addr = "0xdep" + quote.NewID(tlT0)[20:]
			}
			all = append(all, ticketAt(t, tlT0.Add(time.Duration(b)*time.Second/4), addr, ""))
		}
	}
	var published, reads atomic.Int64 // tickets put so far, tickets read
	var sweptBefore atomic.Int64
	sweptBefore.Store(tlT0.Unix())
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			ctx := context.Background()
			for {
				select {
				case <-done:
					return
				default:
				}
				n := published.Load()
				if n == 0 {
					runtime.Gosched()
					continue
				}
				enc := all[rand.Int64N(n)]
				at, _ := quote.IssuedAt(enc.ID)
				got, err := l.Ticket(ctx, enc.ID)
				swept := errors.Is(err, store.ErrNotFound) && at.Unix() < sweptBefore.Load()
				if !swept && (err != nil || got.ID != enc.ID) {
					errs <- err
					return
				}
				reads.Add(1)
				if addr := enc.DepositKey(); addr != "" {
					tk, _ := store.DecodeTicket(enc)
					id, err := l.QuoteByDeposit(ctx, tk.DepositAddress, "")
					swept := errors.Is(err, store.ErrNotFound) && at.Unix() < sweptBefore.Load()
					if !swept && (err != nil || id != enc.ID) {
						errs <- err
						return
					}
				}
			}
		})
	}
	for b := range batches {
		if err := l.PutTickets(context.Background(), all[b*perBatch:(b+1)*perBatch]); err != nil {
			t.Fatal(err)
		}
		published.Store(int64((b + 1) * perBatch))
		if b%20 == 19 {
			before := tlT0.Add(time.Duration(b)*time.Second/4 - 12*time.Second)
			sweptBefore.Store(before.Unix())
			if err := l.SweepTickets(context.Background(), before); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Millisecond)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("reader: %v", err)
	}
	if reads.Load() < readers {
		t.Fatalf("readers read %d tickets", reads.Load())
	}
}

// The id is read from a record at a fixed place when store.EncodeTicket wrote
// it, and by decoding otherwise; a deposit target is read only from a
// record that names one.
func TestTicketRecordFields(t *testing.T) {
	enc := ticketAt(t, tlT0, "dep\"x", "m")
	if !bytes.HasPrefix(enc.Record(), []byte(recordIDPrefix+enc.ID+`"`)) {
		t.Fatalf("store.EncodeTicket no longer starts with the id: %.60s", enc.Record())
	}
	for _, tt := range []struct {
		name, payload, id, deposit string
	}{
		{"store.EncodeTicket's", string(enc.Record()), enc.ID, string(depositKey("dep\"x", "m"))},
		{"members in another order", `{"depositAddress":"0xd","id":"` + enc.ID + `","v":1}`, enc.ID, string(depositKey("0xd", ""))},
		{"no deposit", `{"v":1,"id":"` + enc.ID + `","tool":"\"depositAddress\":"}`, enc.ID, ""},
		{"not JSON", `{"v":1,"id":"qt_`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := recordID([]byte(tt.payload)); got != tt.id {
				t.Errorf("recordID = %q, want %q", got, tt.id)
			}
			if got := string(recordDeposit([]byte(tt.payload))); got != tt.deposit {
				t.Errorf("recordDeposit = %q, want %q", got, tt.deposit)
			}
		})
	}
}

// Files that are not segments are left alone; spans are whole seconds.
func TestOpenTicketLogOptions(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, ticketLogDir), 0o700))
	for _, name := range []string{"README", "x.seg", "20-10.seg", "10-20.seg.tmp"} {
		must(t, os.WriteFile(filepath.Join(dir, ticketLogDir, name), []byte("x"), 0o600))
	}
	l := openTicketLog(t, dir, TicketLogOptions{Horizon: time.Second})
	must(t, l.Close())
	if got := segmentFiles(t, dir); len(got) != 4 {
		t.Fatalf("files after open: %v", got)
	}
	for _, span := range []time.Duration{time.Millisecond, -time.Second, 24 * time.Hour} {
		if _, err := OpenTicketLog(dir, TicketLogOptions{Span: span}); err == nil {
			t.Errorf("span %v accepted", span)
		}
	}
	l = openTicketLog(t, dir, TicketLogOptions{Span: time.Minute})
	enc := ticketAt(t, tlT0.Add(30*time.Second), "", "")
	put(t, l, enc)
	wantTicket(t, l, enc)
	if !slices.Contains(segmentFiles(t, dir), segmentName(tlT0.Unix(), tlT0.Unix()+60)) {
		t.Fatalf("minute segment missing: %v", segmentFiles(t, dir))
	}
	// Reopened with another span, a new segment fills only the gap the old
	// ones leave.
	must(t, l.Close())
	l = openTicketLog(t, dir, TicketLogOptions{Span: 25 * time.Second})
	after := ticketAt(t, tlT0.Add(61*time.Second), "", "")
	put(t, l, after)
	wantTicket(t, l, after)
	wantTicket(t, l, enc)
	if !slices.Contains(segmentFiles(t, dir), segmentName(tlT0.Unix()+60, tlT0.Unix()+75)) {
		t.Fatalf("segment after the minute one: %v", segmentFiles(t, dir))
	}
}

// BenchmarkTicketLogIndex reports the index's bytes per ticket while a
// segment takes tickets (maps) and once sealed (sorted slices).
func BenchmarkTicketLogIndex(b *testing.B) {
	const n = 200_000
	ts := make([]store.EncodedTicket, n)
	for i := range ts {
		// The index does not depend on the payload's size.
		ts[i] = store.RawTicket(quote.NewID(tlT0.Add(time.Duration(i%10)*time.Second)), []byte(`{}`))
	}
	var open, sealed float64
	for b.Loop() {
		l := openTicketLog(b, b.TempDir(), TicketLogOptions{})
		heap := func() float64 {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			return float64(m.HeapAlloc)
		}
		m0 := heap()
		for i := 0; i < n; i += 1000 {
			put(b, l, ts[i:i+1000]...)
		}
		m1 := heap()
		put(b, l, store.RawTicket(quote.NewID(tlT0.Add(30*time.Second)), []byte(`{}`)))
		m2 := heap()
		open, sealed = (m1-m0)/n, (m2-m0)/n
		must(b, l.Close())
	}
	b.ReportMetric(open, "B/ticket-open")
	b.ReportMetric(sealed, "B/ticket-sealed")
}

func BenchmarkTicketLogPut(b *testing.B) {
	l := openTicketLog(b, b.TempDir(), TicketLogOptions{})
	batch := make([]store.EncodedTicket, 16)
	for i := range batch {
		batch[i] = ticketAt(b, tlT0, "", "")
	}
	b.SetBytes(int64(16 * batch[0].Size()))
	for b.Loop() {
		put(b, l, batch...)
	}
}

func BenchmarkTicketLogTicket(b *testing.B) {
	l := openTicketLog(b, b.TempDir(), TicketLogOptions{})
	ts := make([]store.EncodedTicket, 10_000)
	for i := range ts {
		ts[i] = ticketAt(b, tlT0.Add(time.Duration(i%10)*time.Second), "", "")
	}
	put(b, l, ts...)
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(ts))
		for pb.Next() {
			if _, err := l.Ticket(ctx, ts[i%len(ts)].ID); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// TestTicketLogWriteback checks that a growing segment asks for its
// writeback a chunk at a time, a chunk behind its end and on page
// boundaries, that a negative WritebackBytes never asks, and that a
// refusal turns the requests off without failing a write.
func TestTicketLogWriteback(t *testing.T) {
	page := int64(os.Getpagesize())
	for _, tc := range []struct {
		name      string
		chunk     int64 // TicketLogOptions.WritebackBytes
		refuse    bool  // the kernel refuses every request
		wantChunk int64 // the spacing expected; 0: no request at all
	}{
		{name: "default", chunk: 0, wantChunk: DefaultTicketWriteback},
		{name: "small chunks", chunk: 64 << 10, wantChunk: 64 << 10},
		{name: "off", chunk: -1},
		{name: "refused", chunk: 64 << 10, refuse: true, wantChunk: 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openTicketLog(t, t.TempDir(), TicketLogOptions{WritebackBytes: tc.chunk})
			type call struct {
				file   string
				off, n int64
			}
			var calls []call
			l.startWriteback = func(f *os.File, off, n int64) error {
				calls = append(calls, call{filepath.Base(f.Name()), off, off + n})
				if tc.refuse {
					return errors.New("sync_file_range: not supported")
				}
				return nil
			}
			// About 3.5 MiB of tickets in one segment, in batches as the
			// keeper commits them, each smaller than a chunk.
			var all []store.EncodedTicket
			var size int64
			for size < 7<<19 {
				var batch []store.EncodedTicket
				for range 10 {
					enc := ticketAt(t, tlT0.Add(time.Duration(len(all))*time.Microsecond), "", "")
					batch = append(batch, enc)
					all = append(all, enc)
					size += int64(len(enc.Record()) + frameHeaderSize)
				}
				put(t, l, batch...)
			}
			for _, enc := range []store.EncodedTicket{all[0], all[len(all)/2], all[len(all)-1]} {
				wantTicket(t, l, enc)
			}
			switch {
			case tc.wantChunk == 0:
				if len(calls) != 0 {
					t.Fatalf("writeback requested %d times with WritebackBytes %d: %v", len(calls), tc.chunk, calls)
				}
				return
			case tc.refuse:
				if len(calls) != 1 {
					t.Fatalf("after a refusal: %d requests, want the one refused: %v", len(calls), calls)
				}
				return
			}
			// A batch smaller than a chunk overshoots it by less than a
			// chunk: requests come at most two chunks apart.
			if min := max(1, int(size/(2*tc.wantChunk))-1); len(calls) < min {
				t.Fatalf("%d requests for %d bytes in chunks of %d, want at least %d", len(calls), size, tc.wantChunk, min)
			}
			var prev int64
			for i, c := range calls {
				if c.file != segmentName(tlT0.Unix(), tlT0.Unix()+10) {
					t.Fatalf("request %d for %s, want the segment", i, c.file)
				}
				if c.off != prev || c.n%page != 0 || c.n-prev < tc.wantChunk || c.n > size-tc.wantChunk {
					t.Fatalf("request %d for [%d, %d) (previous up to %d, %d bytes written): want it to start where the previous ended and end on a page boundary, a chunk (%d) past the previous and a chunk behind the end",
						i, c.off, c.n, prev, size, tc.wantChunk)
				}
				prev = c.n
			}
		})
	}
}
