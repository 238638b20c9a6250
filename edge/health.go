package edge

import "github.com/swapgate/swapgate/routing/domain/apierr"

// healthz answers while the process is up.
func (s *Server) healthz(r *Request) error {
	writeRaw(r, statusOK, []byte(`{"status":"ok"}`))
	return nil
}

// readyz answers 200 once the store is open and the actors run, and 503
// SERVICE_UNAVAILABLE otherwise, so a balancer holds traffic back until then.
func (s *Server) readyz(r *Request) error {
	if s.deps.Ready != nil {
		if err := s.deps.Ready(); err != nil {
			return apierr.New(apierr.ServiceUnavailable, "not ready: "+err.Error()).Wrap(err)
		}
	}
	writeRaw(r, statusOK, []byte(`{"status":"ready"}`))
	return nil
}
