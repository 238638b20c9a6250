package edge

import "strconv"

// ping answers GET /v1/ping. It builds its small payload by appending, so
// the handler allocates nothing beyond the envelope.
func (s *Server) ping(r *Request) error {
	beginData(r, statusOK)
	r.buf = append(r.buf, `{"status":"ok","version":"`+Version+`","timestamp":`...)
	r.buf = strconv.AppendInt(r.buf, r.Now.Unix(), 10)
	r.buf = append(r.buf, `,"mode":"`...)
	r.buf = append(r.buf, s.cfg.Mode...)
	r.buf = append(r.buf, `"}`...)
	endData(r)
	return nil
}
