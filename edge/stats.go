package edge

import (
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// defaultStatsRange is the range of GET /v1/partner/stats without from:
// the last 30 days.
const defaultStatsRange = 30 * 24 * time.Hour

// statFigures are the three figures of the stats endpoint (quotes, volume
// and fees), USD as exact decimal strings.
type statFigures struct {
	Quotes    int64  `json:"quotes"`
	VolumeUSD string `json:"volumeUsd"`
	FeesUSD   string `json:"feesUsd"`
}

func figures(f account.StatFigures) statFigures {
	return statFigures{Quotes: f.Quotes, VolumeUSD: formatMicroUSD(f.VolumeMicroUSD), FeesUSD: formatMicroUSD(f.FeeMicroUSD)}
}

type dayFigures struct {
	Date string `json:"date"`
	statFigures
}

type providerFigures struct {
	Provider string `json:"provider"`
	statFigures
}

// stats answers GET /v1/partner/stats?from=&to=: the partner's quotes,
// volume and fees over [from, to), in total, per UTC day (days with
// activity, ascending) and per provider. from and to are RFC 3339 instants
// or dates; a date as to includes that whole day. Without to the range ends
// now; without from it starts 30 days before to. The effective range is
// echoed back.
func (s *Server) stats(r *Request) error {
	to := r.Now.UTC()
	if v, ok := query(r, "to"); ok {
		t, dateOnly, err := timeParam("to", v)
		if err != nil {
			return err
		}
		if dateOnly {
			t = t.AddDate(0, 0, 1)
		}
		to = t
	}
	from := to.Add(-defaultStatsRange)
	if v, ok := query(r, "from"); ok {
		t, _, err := timeParam("from", v)
		if err != nil {
			return err
		}
		from = t
	}
	if from.After(to) {
		return apierr.Param("from", "from must not be after to").
			With("from", from.Format(time.RFC3339)).With("to", to.Format(time.RFC3339))
	}
	st, err := s.deps.Accounts.Stats(r.Context(), r.Partner.ID, from, to)
	if err != nil {
		return apierr.From(err)
	}
	days := make([]dayFigures, 0, len(st.ByDay))
	for _, d := range st.ByDay {
		days = append(days, dayFigures{Date: d.Day, statFigures: figures(d.StatFigures)})
	}
	providers := make([]providerFigures, 0, len(st.ByProvider))
	for _, p := range st.ByProvider {
		providers = append(providers, providerFigures{Provider: p.Provider, statFigures: figures(p.StatFigures)})
	}
	writeJSON(r, statusOK, struct {
		From       string            `json:"from"`
		To         string            `json:"to"`
		Totals     statFigures       `json:"totals"`
		ByDay      []dayFigures      `json:"byDay"`
		ByProvider []providerFigures `json:"byProvider"`
	}{isoTime(from), isoTime(to), figures(st.Totals), days, providers})
	return nil
}

// timeParam parses an ISO 8601 date (YYYY-MM-DD, midnight UTC) or an RFC
// 3339 instant, reporting which it was.
func timeParam(param, v string) (t time.Time, dateOnly bool, _ *apierr.Error) {
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		return d, true, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), false, nil
	}
	return time.Time{}, false, apierr.Param(param, param+" must be a date (YYYY-MM-DD) or an RFC 3339 time").With("value", v)
}
