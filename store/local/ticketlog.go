package local

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// The ticket log keeps issued quotes' tickets out of Pebble. A ticket lives
// about three minutes and is never changed, so a store that rewrites it
// through flushes and compactions spends most of its work on data about to
// be dropped; here every ticket is written once, at the end of a file, and
// leaves with its whole file.
//
// Layout: one directory, tickets/, in the data directory, holding segment
// files named <start>-<end>.seg (Unix seconds). A segment holds the tickets
// of the quotes issued in [start, end); a quote id carries its issue second
// (quote.IssuedAt), so the id alone names the segment to read. A segment
// is a sequence of records:
//
//	length   uint32 LE   bytes of the payload
//	crc      uint32 LE   CRC-32C of the length bytes and the payload
//	payload              the ticket as store.EncodeTicket encodes it (JSON)
//
// Nothing is synced: the page cache keeps the files across a crash of the
// process, and a machine crash loses the tickets of the last moments, which
// makes those quotes unknown (the client quotes again), never wrong. The
// index lives in memory and is rebuilt from the files on open.
//
// store.Unsynced is not unwritten: a segment lives longer than the kernel keeps
// dirty pages (30 s by default), so every ticket reaches the disk anyway.
// Left to itself, the kernel writes a segment's dirty pages back in one
// burst once they expire: at 10,000 quotes a second some 150 MB every ten
// seconds, hundreds of requests queued on the device at once. Every
// synced commit on the same disk (the ledger's WAL sync, which a fee quote
// waits for) then waits behind that queue: 20 to 70 ms, every ten seconds.
// So the writer asks the kernel to start writing each segment back as it
// grows, a chunk at a time (TicketLogOptions.WritebackBytes), without
// waiting for the writes: the same bytes reach the disk, spread evenly,
// and no more is made durable than before.
const (
	ticketLogDir    = "tickets"
	segmentSuffix   = ".seg"
	frameHeaderSize = 8
	// maxTicketRecord bounds a record's length, so that a corrupt length
	// field is recognised as such instead of being read as a huge record.
	maxTicketRecord = 16 << 20
	// defaultTicketSpan is a segment's span of issue time. Ten seconds keeps
	// some twenty files for the tickets' three minutes, and the sweep keeps
	// at most ten seconds' worth of tickets past their bound.
	defaultTicketSpan = 10 * time.Second
	// quoteIDRandomHex is the random tail of a quote id (quote.NewID): the
	// part that tells apart the quotes of one second.
	quoteIDRandomHex = 20
)

// castagnoli is CRC-32C's table, which the CPU computes in hardware.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTicketLogFull means a segment would exceed 4 GiB, the most a ticket
// offset addresses; at some 2 KiB a ticket that is two million tickets a
// segment, far past any quote rate the service serves.
var ErrTicketLogFull = errors.New("local: ticket segment full")

// TicketLogOptions tunes OpenTicketLog. The zero value is ready to use.
type TicketLogOptions struct {
	// Span is the issue time one segment file covers (default 10 s, whole
	// seconds). Segments already on disk keep the span they were made with.
	Span time.Duration
	// Horizon is how far back from Now the segments found on open are
	// still wanted: a segment whose span ended before Now-Horizon is deleted
	// instead of read. Zero reads them all, leaving them to the first sweep.
	// The keeper's sweep bound (quote TTL plus grace) is the natural value.
	Horizon time.Duration
	// Now is the clock for Horizon; nil means time.Now.
	Now func() time.Time
	// WritebackBytes is how much a segment grows between two requests
	// that the kernel start writing it back (see the layout above):
	// default DefaultTicketWriteback, negative never (the kernel's own
	// writeback, in bursts).
	WritebackBytes int64
}

// DefaultTicketWriteback is the default TicketLogOptions.WritebackBytes:
// some 60 ms of tickets at 10,000 quotes a second (about 1.6 KiB each),
// and the lag Pebble keeps behind the end of its own tables' writeback.
const DefaultTicketWriteback = 1 << 20

// TicketLog keeps tickets in append-only segment files, one per span of
// issue time, with an in-memory index; it never compacts. It is the
// tickets' store (see actors/tickets): PutTickets is called by one writer,
// the ticket keeper, while Ticket and QuoteByDeposit serve many readers.
// It is safe for concurrent use.
type TicketLog struct {
	dir  string
	span int64 // seconds
	// seed keys the deposit index's hashes; the index is rebuilt on every
	// open, so the hashes need not be stable across processes.
	seed maphash.Seed

	// wmu serialises the writers: PutTickets, SweepTickets and Close. The
	// fields below it are the writer's own.
	wmu    sync.Mutex
	groups []ticketGroup // scratch, one per segment a batch touches
	last   *ticketSegment
	newest int64 // the latest issue second written
	// writeback is TicketLogOptions.WritebackBytes, 0 once the kernel
	// refused a request (no sync_file_range there): the log then leaves
	// writeback to the kernel, as it would without the option.
	writeback int64
	// startWriteback starts writing back a file's bytes [off, off+n);
	// tests replace it.
	startWriteback func(f *os.File, off, n int64) error

	// mu guards segs and closed, which change only with wmu held too, so
	// that either lock is enough to read them. Readers hold it (read-locked)
	// across their file read, so a swept segment's file is closed only once
	// no reader can be using it.
	mu     sync.RWMutex
	segs   []*ticketSegment // by start
	closed bool

	// bufs holds read buffers (*[]byte), most tickets fitting in one.
	bufs sync.Pool
}

// ticketSegment is one segment file and its index.
type ticketSegment struct {
	start, end int64 // issue seconds [start, end)
	path       string
	f          *os.File
	size       int64 // the writer's append offset
	// writtenBack is the length of the file's head whose writeback the
	// writer has asked for (see maybeWriteback).
	writtenBack int64

	// mu guards the index. A segment still receiving tickets indexes them
	// in maps (recent); once the writer has moved a span past it, they are
	// merged into sorted slices (sealed), which take 16 bytes a ticket
	// against the maps' 25 to 35. A late ticket lands in the maps again and
	// is merged at the next seal.
	mu         sync.RWMutex
	recent     map[idKey]uint32 // offset of the ticket's record
	sorted     []ticketSlot
	recentDeps map[uint64]uint32 // deposit target hash → offset
	sortedDeps []depositSlot
}

// idKey is a quote id within its segment: the id's 80 random bits and
// the low 16 bits of its issue second. The segment fixes the rest of the
// second, and a read checks the whole id in the record, so the key needs
// no more.
type idKey [12]byte

func (a idKey) compare(b idKey) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint32(a[8:]), binary.BigEndian.Uint32(b[8:]))
}

// ticketSlot is a sealed index entry: 16 bytes.
type ticketSlot struct {
	key idKey
	off uint32
}

// depositSlot is a sealed deposit index entry: the hash of an intents
// quote's deposit target and its ticket's offset. A lookup checks the
// target in the record, so a hash collision cannot answer a wrong quote.
type depositSlot struct {
	hash uint64
	off  uint32
}

// ticketGroup is the part of a batch bound for one segment: its records,
// framed, and their index entries.
type ticketGroup struct {
	seg     *ticketSegment
	buf     []byte
	entries []ticketEntry
}

type ticketEntry struct {
	key    idKey
	rel    uint32 // offset within the group's buffer
	dep    uint64
	hasDep bool
}

// idKeyOf is the index key of quote id, with the id's issue second;
// false for a malformed id.
func idKeyOf(id string) (idKey, int64, bool) {
	var k idKey
	at, ok := quote.IssuedAt(id)
	if !ok || len(id) < quoteIDRandomHex {
		return k, 0, false
	}
	sec := at.Unix()
	if _, err := hex.Decode(k[:10], []byte(id[len(id)-quoteIDRandomHex:])); err != nil {
		return k, 0, false
	}
	binary.BigEndian.PutUint16(k[10:], uint16(sec))
	return k, sec, true
}

// OpenTicketLog opens (creating if needed) the ticket log in the tickets/
// subdirectory of dir. It deletes the segments past o.Horizon and rebuilds
// the index from the others, truncating a record torn by a crash at the end
// of a segment and skipping a record that fails its checksum.
func OpenTicketLog(dir string, o TicketLogOptions) (*TicketLog, error) {
	span := int64(o.Span / time.Second)
	if o.Span == 0 {
		span = int64(defaultTicketSpan / time.Second)
	}
	if span < 1 || span > math.MaxUint16 {
		return nil, fmt.Errorf("local: ticket span %v: want 1 s to 18 h", o.Span)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WritebackBytes == 0 {
		o.WritebackBytes = DefaultTicketWriteback
	}
	l := &TicketLog{dir: filepath.Join(dir, ticketLogDir), span: span, seed: maphash.MakeSeed(),
		writeback: max(o.WritebackBytes, 0), startWriteback: startWriteback}
	l.bufs.New = func() any { b := make([]byte, 4096); return &b }
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, fmt.Errorf("local: create ticket directory: %w", err)
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("local: list ticket segments: %w", err)
	}
	var found []*ticketSegment
	for _, e := range entries {
		if start, end, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			found = append(found, &ticketSegment{start: start, end: end, path: filepath.Join(l.dir, e.Name())})
		}
	}
	slices.SortFunc(found, func(a, b *ticketSegment) int { return cmp.Compare(a.start, b.start) })
	cutoff := int64(math.MinInt64)
	if o.Horizon > 0 {
		cutoff = o.Now().Add(-o.Horizon).Unix()
	}
	for _, s := range found {
		// A segment overlapping one already loaded was not written by this
		// log (segments are made disjoint); its tickets could not be found
		// by id, so it goes like an expired one.
		if s.end <= cutoff || len(l.segs) > 0 && s.start < l.segs[len(l.segs)-1].end {
			if err := os.Remove(s.path); err != nil {
				_ = l.Close()
				return nil, fmt.Errorf("local: delete ticket segment: %w", err)
			}
			continue
		}
		if err := l.load(s); err != nil {
			if s.f != nil {
				_ = s.f.Close()
			}
			_ = l.Close()
			return nil, err
		}
		l.segs = append(l.segs, s)
		l.newest = max(l.newest, s.end-1)
	}
	return l, nil
}

func segmentName(start, end int64) string {
	return strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(end, 10) + segmentSuffix
}

func parseSegmentName(name string) (start, end int64, ok bool) {
	base, found := strings.CutSuffix(name, segmentSuffix)
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(base, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || start >= end || end-start > math.MaxUint16 {
		return 0, 0, false
	}
	return start, end, true
}

// load reads segment s from its file into a sealed index. Reading stops at
// the first record that does not fit in the file (torn by a crash while it
// was written, or a length that is no length) and the file is cut there, so
// that the next append starts on a record boundary. A record that fits but
// fails its checksum is skipped: its length is taken on trust, and should
// it be wrong the next record's checksum fails too, or it does not fit.
func (l *TicketLog) load(s *ticketSegment) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("local: open ticket segment: %w", err)
	}
	s.f = f
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("local: ticket segment %s: %w", s.path, err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var (
		off     int64
		hdr     [frameHeaderSize]byte
		payload []byte
		slots   []ticketSlot
		deps    []depositSlot
	)
	for off+frameHeaderSize <= st.Size() && off <= math.MaxUint32 {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return fmt.Errorf("local: read ticket segment %s: %w", s.path, err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[:4]))
		if n == 0 || n > maxTicketRecord || off+frameHeaderSize+n > st.Size() {
			break
		}
		payload = slices.Grow(payload[:0], int(n))[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return fmt.Errorf("local: read ticket segment %s: %w", s.path, err)
		}
		if frameCRC(hdr[:4], payload) == binary.LittleEndian.Uint32(hdr[4:]) {
			if key, sec, ok := idKeyOf(recordID(payload)); ok && s.start <= sec && sec < s.end {
				slots = append(slots, ticketSlot{key: key, off: uint32(off)})
				if dk := recordDeposit(payload); dk != nil {
					deps = append(deps, depositSlot{hash: maphash.Bytes(l.seed, dk), off: uint32(off)})
				}
			}
		}
		off += frameHeaderSize + n
	}
	if off < st.Size() {
		if err := f.Truncate(off); err != nil {
			return fmt.Errorf("local: truncate ticket segment %s: %w", s.path, err)
		}
	}
	s.size = off
	// A ticket written twice (a batch retried after a failed write) is
	// found at its later record, as it would be through the maps.
	s.sorted = lastOfEach(slots, func(a, b ticketSlot) int { return a.key.compare(b.key) })
	s.sortedDeps = lastOfEach(deps, func(a, b depositSlot) int { return cmp.Compare(a.hash, b.hash) })
	return nil
}

// lastOfEach sorts s (stably) and keeps the last entry of each run of
// equal ones.
func lastOfEach[S any](s []S, compare func(a, b S) int) []S {
	slices.SortStableFunc(s, compare)
	out := s[:0]
	for i := range s {
		if i+1 < len(s) && compare(s[i], s[i+1]) == 0 {
			continue
		}
		out = append(out, s[i])
	}
	return slices.Clip(out)
}

// recordIDPrefix is how store.EncodeTicket starts every ticket, so that the id
// is read at a fixed place rather than by decoding the record.
const recordIDPrefix = `{"v":1,"id":"`

// recordID is the quote id of a ticket record, "" when it has none.
func recordID(payload []byte) string {
	if end := len(recordIDPrefix) + quote.IDLength; len(payload) > end && bytes.HasPrefix(payload, []byte(recordIDPrefix)) && payload[end] == '"' {
		return string(payload[len(recordIDPrefix):end])
	}
	var rec struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(payload, &rec) != nil {
		return ""
	}
	return rec.ID
}

// recordDeposit is the deposit index key of a ticket record of an intents
// quote, nil for another. Only a record naming a deposit address is
// decoded.
func recordDeposit(payload []byte) []byte {
	if !bytes.Contains(payload, []byte(`"depositAddress":`)) {
		return nil
	}
	var rec struct {
		DepositAddress string `json:"depositAddress"`
		DepositMemo    string `json:"depositMemo"`
	}
	if json.Unmarshal(payload, &rec) != nil || rec.DepositAddress == "" {
		return nil
	}
	return depositKey(rec.DepositAddress, rec.DepositMemo)
}

// frameCRC is the checksum of a record: its length bytes and payload.
func frameCRC(length, payload []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, length), castagnoli, payload)
}

// appendFrame appends payload to b as one record.
func appendFrame(b, payload []byte) []byte {
	at := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, 0, 0, 0, 0)
	b = append(b, payload...)
	binary.LittleEndian.PutUint32(b[at+4:], frameCRC(b[at:at+4], payload))
	return b
}

// PutTickets appends tickets, each to the segment of its issue second, one
// write per segment the batch touches, without a sync (see the layout
// above). It is meant for one writer; a second is serialised with it. A
// batch that fails part-way may be retried whole: a ticket written twice
// is found at its later record.
func (l *TicketLog) PutTickets(ctx context.Context, ts []store.EncodedTicket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return store.ErrClosed
	}
	groups := l.groups[:0]
	defer func() {
		// Keep the buffers for the next batch, but not a burst's: nor any
		// segment, which a sweep may drop.
		for i := range groups {
			groups[i].seg = nil
			if cap(groups[i].buf) > 1<<20 {
				groups[i].buf, groups[i].entries = nil, nil
			}
		}
		l.groups = groups[:0]
	}()
	for i := range ts {
		t := &ts[i]
		key, sec, ok := idKeyOf(t.ID)
		if !ok {
			return fmt.Errorf("local: ticket: malformed quote id %q", t.ID)
		}
		if len(t.Record()) > maxTicketRecord {
			return fmt.Errorf("local: ticket %s: %d bytes, more than a record holds", t.ID, len(t.Record()))
		}
		seg, err := l.segmentFor(sec)
		if err != nil {
			return err
		}
		g := -1
		for j := range groups {
			if groups[j].seg == seg {
				g = j
				break
			}
		}
		if g < 0 {
			if len(groups) < cap(groups) {
				groups = groups[:len(groups)+1]
				groups[len(groups)-1].buf = groups[len(groups)-1].buf[:0]
				groups[len(groups)-1].entries = groups[len(groups)-1].entries[:0]
			} else {
				groups = append(groups, ticketGroup{})
			}
			g = len(groups) - 1
			groups[g].seg = seg
		}
		e := ticketEntry{key: key, rel: uint32(len(groups[g].buf))}
		if t.Deposit() != nil {
			e.dep, e.hasDep = maphash.Bytes(l.seed, t.Deposit()), true
		}
		groups[g].buf = appendFrame(groups[g].buf, t.Record())
		groups[g].entries = append(groups[g].entries, e)
		l.newest = max(l.newest, sec)
	}
	for i := range groups {
		if err := l.appendGroup(&groups[i]); err != nil {
			return err
		}
	}
	l.seal()
	return nil
}

// segmentFor returns the segment of issue second sec, making it if needed.
// The caller holds wmu.
func (l *TicketLog) segmentFor(sec int64) (*ticketSegment, error) {
	if s := l.last; s != nil && s.start <= sec && sec < s.end {
		return s, nil
	}
	if s := l.segmentAt(sec); s != nil {
		l.last = s
		return s, nil
	}
	// The aligned span around sec, shortened where a segment made with
	// another span already covers part of it.
	start := sec - ((sec%l.span)+l.span)%l.span
	end := start + l.span
	for _, s := range l.segs {
		if s.end <= sec && s.end > start {
			start = s.end
		}
		if s.start > sec && s.start < end {
			end = s.start
		}
	}
	s := &ticketSegment{start: start, end: end, path: filepath.Join(l.dir, segmentName(start, end))}
	// A file of that name is one a sweep failed to delete: its tickets are
	// past their bound.
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("local: create ticket segment: %w", err)
	}
	s.f = f
	l.mu.Lock()
	i, _ := slices.BinarySearchFunc(l.segs, start, func(s *ticketSegment, start int64) int { return cmp.Compare(s.start, start) })
	l.segs = slices.Insert(l.segs, i, s)
	l.mu.Unlock()
	l.last = s
	return s, nil
}

// segmentAt is the segment holding issue second sec, or nil. The caller
// holds mu or wmu.
func (l *TicketLog) segmentAt(sec int64) *ticketSegment {
	i, found := slices.BinarySearchFunc(l.segs, sec, func(s *ticketSegment, sec int64) int { return cmp.Compare(s.start, sec) })
	if !found {
		i--
	}
	if i < 0 || sec >= l.segs[i].end {
		return nil
	}
	return l.segs[i]
}

// appendGroup writes a group's records in one write and indexes them.
func (l *TicketLog) appendGroup(g *ticketGroup) error {
	s := g.seg
	off := s.size
	if off+int64(len(g.buf)) > math.MaxUint32 {
		return fmt.Errorf("%w: %s", ErrTicketLogFull, s.path)
	}
	if _, err := s.f.WriteAt(g.buf, off); err != nil {
		// Cut what part of the write landed, so that the next append (the
		// keeper retries) starts on a record boundary.
		_ = s.f.Truncate(off)
		return fmt.Errorf("local: append %d tickets to %s: %w", len(g.entries), s.path, err)
	}
	s.size += int64(len(g.buf))
	l.maybeWriteback(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recent == nil {
		s.recent = make(map[idKey]uint32, len(g.entries))
	}
	for _, e := range g.entries {
		s.recent[e.key] = uint32(off) + e.rel
		if e.hasDep {
			if s.recentDeps == nil {
				s.recentDeps = map[uint64]uint32{}
			}
			s.recentDeps[e.dep] = uint32(off) + e.rel
		}
	}
	return nil
}

// maybeWriteback starts the writeback of the part of s written since the
// last one, once that is a whole chunk (TicketLogOptions.WritebackBytes).
// It stays a chunk behind the end and stops at a page boundary, as
// Pebble's table writer does, so that a page the next appends still fill
// is not written twice. A refusal turns it off for
// the log: the tickets are as safe as before, the kernel writes them back
// on its own. The caller holds wmu.
func (l *TicketLog) maybeWriteback(s *ticketSegment) {
	if l.writeback <= 0 {
		return
	}
	page := int64(os.Getpagesize())
	upTo := (s.size - l.writeback) / page * page
	if upTo-s.writtenBack < l.writeback {
		return
	}
	if err := l.startWriteback(s.f, s.writtenBack, upTo-s.writtenBack); err != nil {
		l.writeback = 0
		return
	}
	s.writtenBack = upTo
}

// seal merges the maps of every segment the writer has moved a span past
// into its sorted slices. The caller holds wmu, and so is the only one to
// change an index: it reads them unlocked and locks only to swap.
func (l *TicketLog) seal() {
	for _, s := range l.segs {
		if len(s.recent) == 0 && len(s.recentDeps) == 0 || s.end+l.span > l.newest {
			continue
		}
		sorted := mergeRecent(s.sorted, s.recent, func(k idKey, off uint32) ticketSlot { return ticketSlot{k, off} },
			func(a, b ticketSlot) int { return a.key.compare(b.key) })
		deps := mergeRecent(s.sortedDeps, s.recentDeps, func(h uint64, off uint32) depositSlot { return depositSlot{h, off} },
			func(a, b depositSlot) int { return cmp.Compare(a.hash, b.hash) })
		s.mu.Lock()
		s.sorted, s.recent, s.sortedDeps, s.recentDeps = sorted, nil, deps, nil
		s.mu.Unlock()
	}
}

// mergeRecent is sorted with the entries of recent merged in, a recent
// entry replacing a sorted one of the same key (it was written later).
func mergeRecent[K comparable, S any](sorted []S, recent map[K]uint32, slot func(K, uint32) S, compare func(a, b S) int) []S {
	if len(recent) == 0 {
		return sorted
	}
	add := make([]S, 0, len(recent))
	for k, off := range recent {
		add = append(add, slot(k, off))
	}
	slices.SortFunc(add, compare)
	out := make([]S, 0, len(sorted)+len(add))
	i, j := 0, 0
	for i < len(sorted) && j < len(add) {
		switch c := compare(sorted[i], add[j]); {
		case c < 0:
			out = append(out, sorted[i])
			i++
		case c > 0:
			out = append(out, add[j])
			j++
		default:
			out = append(out, add[j])
			i++
			j++
		}
	}
	out = append(append(out, sorted[i:]...), add[j:]...)
	return slices.Clip(out)
}

// lookup is the offset of the ticket with key k.
func (s *ticketSegment) lookup(k idKey) (uint32, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if off, ok := s.recent[k]; ok {
		return off, true
	}
	i, ok := slices.BinarySearchFunc(s.sorted, k, func(e ticketSlot, k idKey) int { return e.key.compare(k) })
	if !ok {
		return 0, false
	}
	return s.sorted[i].off, true
}

// lookupDeposit is the offset of the latest ticket whose deposit target
// hashes to h.
func (s *ticketSegment) lookupDeposit(h uint64) (uint32, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if off, ok := s.recentDeps[h]; ok {
		return off, true
	}
	i, ok := slices.BinarySearchFunc(s.sortedDeps, h, func(e depositSlot, h uint64) int { return cmp.Compare(e.hash, h) })
	if !ok {
		return 0, false
	}
	return s.sortedDeps[i].off, true
}

// errBadRecord marks a record that fails its checksum or does not fit its
// segment. It wraps store.ErrNotFound: such a ticket is as lost as one a crash
// took, and its quote is unknown rather than an error for its client.
var errBadRecord = fmt.Errorf("record damaged (checksum or length): %w", store.ErrNotFound)

// read reads the record at off in s into a pooled buffer, which the caller
// hands back to release, and checks it. The caller holds mu read-locked.
func (l *TicketLog) read(s *ticketSegment, off uint32) (payload []byte, buf *[]byte, err error) {
	buf = l.bufs.Get().(*[]byte)
	b := *buf
	n, err := s.f.ReadAt(b, int64(off))
	if err != nil && !errors.Is(err, io.EOF) {
		l.bufs.Put(buf)
		return nil, nil, err
	}
	if n < frameHeaderSize {
		l.bufs.Put(buf)
		return nil, nil, errBadRecord
	}
	size := int(binary.LittleEndian.Uint32(b[:4]))
	total := frameHeaderSize + size
	if size == 0 || size > maxTicketRecord {
		l.bufs.Put(buf)
		return nil, nil, errBadRecord
	}
	if total > n {
		if total <= len(b) {
			// The buffer had room: the file ends before the record does.
			l.bufs.Put(buf)
			return nil, nil, errBadRecord
		}
		// A ticket larger than the buffer: read the rest into one that
		// fits, which release drops rather than pools.
		nb := make([]byte, total)
		copy(nb, b[:n])
		l.bufs.Put(buf)
		if _, err := s.f.ReadAt(nb[n:], int64(off)+int64(n)); err != nil {
			if errors.Is(err, io.EOF) {
				err = errBadRecord
			}
			return nil, nil, err
		}
		buf, b = &nb, nb
	}
	if frameCRC(b[:4], b[frameHeaderSize:total]) != binary.LittleEndian.Uint32(b[4:8]) {
		l.bufs.Put(buf)
		return nil, nil, errBadRecord
	}
	return b[frameHeaderSize:total], buf, nil
}

// release returns a buffer of read to the pool, unless a large ticket
// made it larger than the pool's.
func (l *TicketLog) release(buf *[]byte) {
	if cap(*buf) <= 4096 {
		l.bufs.Put(buf)
	}
}

// Ticket returns the ticket of quote id: one read of its record at the
// offset the index gives, checked against its checksum and id. A malformed
// id, one never issued or one whose segment was swept is store.ErrNotFound, and
// so is a record that fails its checksum.
func (l *TicketLog) Ticket(ctx context.Context, id string) (*quote.Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key, sec, ok := idKeyOf(id)
	if !ok {
		return nil, fmt.Errorf("local: ticket %q: %w", id, store.ErrNotFound)
	}
	payload, buf, err := l.readTicket(key, sec)
	if err != nil {
		return nil, fmt.Errorf("local: ticket %s: %w", id, err)
	}
	defer l.release(buf)
	t, err := store.DecodeTicketRecord(id, payload)
	if err != nil {
		return nil, err
	}
	if t.ID != id {
		return nil, fmt.Errorf("local: ticket %s: %w", id, store.ErrNotFound)
	}
	return t, nil
}

// readTicket reads the record of key in the segment of issue second sec.
func (l *TicketLog) readTicket(key idKey, sec int64) ([]byte, *[]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, nil, store.ErrClosed
	}
	s := l.segmentAt(sec)
	if s == nil {
		return nil, nil, store.ErrNotFound
	}
	off, ok := s.lookup(key)
	if !ok {
		return nil, nil, store.ErrNotFound
	}
	return l.read(s, off)
}

// QuoteByDeposit returns the id of the latest intents quote whose deposit
// target is address (and memo) among the tickets kept, or store.ErrNotFound.
func (l *TicketLog) QuoteByDeposit(ctx context.Context, address, memo string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	h := maphash.Bytes(l.seed, depositKey(address, memo))
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return "", store.ErrClosed
	}
	for i := len(l.segs) - 1; i >= 0; i-- {
		s := l.segs[i]
		off, ok := s.lookupDeposit(h)
		if !ok {
			continue
		}
		payload, buf, err := l.read(s, off)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("local: deposit %s: %w", address, err)
		}
		var rec struct {
			ID             string `json:"id"`
			DepositAddress string `json:"depositAddress"`
			DepositMemo    string `json:"depositMemo"`
		}
		err = json.Unmarshal(payload, &rec)
		l.release(buf)
		if err == nil && rec.DepositAddress == address && rec.DepositMemo == memo {
			return rec.ID, nil
		}
	}
	return "", fmt.Errorf("local: deposit %s: %w", address, store.ErrNotFound)
}

// SweepTickets deletes the segments whose whole span of issue time is
// before the given time, with their index: the tickets of quotes issued
// before it go, give or take a segment's span, which a later sweep takes.
func (l *TicketLog) SweepTickets(ctx context.Context, before time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	bound := before.Unix()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return store.ErrClosed
	}
	var swept []*ticketSegment
	l.segs = slices.DeleteFunc(l.segs, func(s *ticketSegment) bool {
		if s.end <= bound {
			swept = append(swept, s)
			return true
		}
		return false
	})
	l.mu.Unlock()
	// No reader holds a swept segment now: each reads under mu.
	var errs []error
	for _, s := range swept {
		if s == l.last {
			l.last = nil
		}
		if err := s.f.Close(); err != nil {
			errs = append(errs, err)
		}
		// A file left behind is deleted by the next open, or emptied when a
		// late ticket makes its segment again.
		if err := os.Remove(s.path); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("local: sweep tickets: %w", err)
	}
	return nil
}

// Close closes the segment files; the tickets stay on disk for the next
// open. It is safe to call more than once; later calls do nothing.
func (l *TicketLog) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	for _, s := range l.segs {
		if s.f != nil {
			errs = append(errs, s.f.Close())
		}
	}
	l.segs, l.last = nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("local: close ticket log: %w", err)
	}
	return nil
}

// depositKey is the deposit index key of a deposit target, as the ticket's
// encoding names it (store.DepositIndexKey).
func depositKey(address, memo string) []byte { return []byte(store.DepositIndexKey(address, memo)) }
