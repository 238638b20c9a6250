package edge

import (
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// sandboxScenario reads the X-Sandbox-Scenario header of a request that
// creates something of kind k (a quote, an on-ramp order): the edge only
// parses it; the domain says what is allowed (scenario.Parse: an unknown
// value lists the allowed ones, live mode refuses the header) and the
// record created keeps it for every later call.
func (s *Server) sandboxScenario(r *Request, k scenario.Kind) (scenario.Name, *apierr.Error) {
	return scenario.Parse(k, string(r.Ctx.Request.Header.Peek(scenario.Header)), s.cfg.Mode != modeLive)
}

// modeLive is Config.Mode in live mode.
const modeLive = "live"
