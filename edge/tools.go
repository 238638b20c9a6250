package edge

import (
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/breaker"
)

// ToolHealth is the quote engine's word on a tool: its leg's breaker.
type ToolHealth interface {
	ToolStatus(provider, tool string) breaker.Status
}

// tools answers GET /v1/tools: each tool's bytes, encoded once, closed
// with its status at the time of the request (ok, degraded, unavailable).
func (s *Server) tools(r *Request) error {
	list, err := s.ref.toolList()
	if err != nil {
		return apierr.New(apierr.Internal, "the tool list could not be encoded").Wrap(err)
	}
	beginData(r, statusOK)
	b := append(r.buf, `{"tools":[`...)
	for i, t := range list {
		if i > 0 {
			b = append(b, ',')
		}
		st := breaker.StatusOK
		if s.deps.ToolHealth != nil {
			st = s.deps.ToolHealth.ToolStatus(t.provider, t.key)
		}
		b = append(b, t.open...)
		b = append(b, `,"status":"`...)
		b = append(b, st...)
		b = append(b, `"}`...)
	}
	r.buf = append(b, "]}"...)
	endData(r)
	return nil
}
