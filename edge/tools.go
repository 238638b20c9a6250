package edge

// tools answers GET /v1/tools from bytes encoded at start.
func (s *Server) tools(r *Request) error {
	writeRaw(r, statusOK, s.ref.toolsJSON)
	return nil
}
