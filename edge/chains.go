package edge

// chains answers GET /v1/chains with every chain (id, key, name,
// chainType, nativeToken, logoURI, mainnet, providers), from bytes encoded
// once per price change.
func (s *Server) chains(r *Request) error {
	b, err := s.ref.chains()
	if err != nil {
		return err
	}
	writeRaw(r, statusOK, b)
	return nil
}
