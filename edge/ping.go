package edge

import (
	"strconv"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
)

// ClusterView is what GET /v1/ping shows of the cluster a node belongs to.
type ClusterView interface {
	Name() string
	Self() string
	Members() []string
}

// ping answers GET /v1/ping. It builds its small payload by appending, so
// the handler allocates nothing beyond the envelope (a clustered node's
// member list aside).
func (s *Server) ping(r *Request) error {
	beginData(r, statusOK)
	r.buf = append(r.buf, `{"status":"ok","version":"`+Version+`","timestamp":`...)
	r.buf = strconv.AppendInt(r.buf, r.Now.Unix(), 10)
	r.buf = append(r.buf, `,"mode":"`...)
	r.buf = append(r.buf, s.cfg.Mode...)
	r.buf = append(r.buf, '"')
	if c := s.deps.Cluster; c != nil {
		r.buf = append(r.buf, `,"cluster":{"name":`...)
		r.buf = jsonenc.AppendString(r.buf, c.Name())
		r.buf = append(r.buf, `,"self":`...)
		r.buf = jsonenc.AppendString(r.buf, c.Self())
		r.buf = append(r.buf, `,"members":[`...)
		for i, m := range c.Members() {
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			r.buf = jsonenc.AppendString(r.buf, m)
		}
		r.buf = append(r.buf, "]}"...)
	}
	r.buf = append(r.buf, '}')
	endData(r)
	return nil
}
