package account

import "time"

// FeeWallet is the address a partner's fees in one ecosystem are paid to;
// a partner has at most one per ecosystem. CreatedAt is when the partner
// first registered a wallet for the ecosystem and survives replacements;
// UpdatedAt is the last change. A replaced wallet applies only to payouts
// after the change; a deleted one pauses that ecosystem's payouts until a
// new one is registered (see Settlement).
type FeeWallet struct {
	PartnerID string
	Ecosystem string
	Address   string
	CreatedAt time.Time
	UpdatedAt time.Time
}
