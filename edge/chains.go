package edge

// chains answers GET /v1/chains with every chain (DESIGN.md §5.8), from
// bytes encoded once per price change.
func (s *Server) chains(r *Request) error {
	b, err := s.ref.chains()
	if err != nil {
		return err
	}
	writeRaw(r, statusOK, b)
	return nil
}
