package account

import (
	"cmp"
	"slices"
	"time"
)

// StatFigures are the aggregates of a set of activity records. Quotes
// counts every record (each began as a quote); volume and fees are
// micro-USD.
type StatFigures struct {
	Quotes         int64
	VolumeMicroUSD int64
	FeeMicroUSD    int64
}

func (f *StatFigures) add(a *Activity) {
	f.Quotes++
	f.VolumeMicroUSD += a.VolumeMicroUSD
	f.FeeMicroUSD += a.FeeMicroUSD
}

// DayStats are the figures of one UTC day, named YYYY-MM-DD.
type DayStats struct {
	Day string
	StatFigures
}

// ProviderStats are the figures of one provider.
type ProviderStats struct {
	Provider string
	StatFigures
}

// Stats are a partner's aggregates over [From, To).
type Stats struct {
	From, To   time.Time
	Totals     StatFigures
	ByDay      []DayStats      // ascending, only days with records
	ByProvider []ProviderStats // by provider name
}

// StatsTally aggregates activity records into Stats, one record at a time,
// so that a store can feed it while it scans.
type StatsTally struct {
	from, to  time.Time
	totals    StatFigures
	days      map[string]*StatFigures
	providers map[string]*StatFigures
}

// NewStatsTally starts the aggregates of the range [from, to).
func NewStatsTally(from, to time.Time) *StatsTally {
	return &StatsTally{from: from, to: to, days: map[string]*StatFigures{}, providers: map[string]*StatFigures{}}
}

// Add counts a; it always returns true, so that it can serve as a scan's
// callback.
func (t *StatsTally) Add(a *Activity) bool {
	t.totals.add(a)
	day := a.CreatedAt.UTC().Format(time.DateOnly)
	if t.days[day] == nil {
		t.days[day] = &StatFigures{}
	}
	t.days[day].add(a)
	if t.providers[a.Provider] == nil {
		t.providers[a.Provider] = &StatFigures{}
	}
	t.providers[a.Provider].add(a)
	return true
}

// Stats returns the aggregates counted so far.
func (t *StatsTally) Stats() *Stats {
	st := &Stats{From: t.from, To: t.to, Totals: t.totals, ByDay: []DayStats{}, ByProvider: []ProviderStats{}}
	for d, f := range t.days {
		st.ByDay = append(st.ByDay, DayStats{Day: d, StatFigures: *f})
	}
	slices.SortFunc(st.ByDay, func(a, b DayStats) int { return cmp.Compare(a.Day, b.Day) })
	for p, f := range t.providers {
		st.ByProvider = append(st.ByProvider, ProviderStats{Provider: p, StatFigures: *f})
	}
	slices.SortFunc(st.ByProvider, func(a, b ProviderStats) int { return cmp.Compare(a.Provider, b.Provider) })
	return st
}
