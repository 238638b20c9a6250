package address

// crc16XModem computes CRC-16/XMODEM (polynomial 0x1021, initial value 0),
// the checksum of TON user-friendly addresses and Stellar StrKeys.
func crc16XModem(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
