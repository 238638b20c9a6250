package edge

import "time"

type partnerProfile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	FeeTier struct {
		SwapFeeBps   int `json:"swapFeeBps"`
		OnrampFeeBps int `json:"onrampFeeBps"`
	} `json:"feeTier"`
	RateLimit struct {
		RequestsPerMinute int `json:"requestsPerMinute"`
	} `json:"rateLimit"`
	WebhooksEnabled bool `json:"webhooksEnabled"`
	// AllowedOrigins are the browser origins whose pages may send the key
	// (cors.go); never null.
	AllowedOrigins []string `json:"allowedOrigins"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// partnerMe answers GET /v1/partner/me with the caller's profile; the rate
// limit shown is the heavy-bucket figure.
func (s *Server) partnerMe(r *Request) error {
	p := r.Partner
	var out partnerProfile
	out.ID, out.Name, out.Email = p.ID, p.Name, p.Email
	out.FeeTier.SwapFeeBps, out.FeeTier.OnrampFeeBps = p.SwapFeeBps, p.OnrampFeeBps
	out.RateLimit.RequestsPerMinute = p.HeavyPerMin
	out.WebhooksEnabled = p.WebhooksEnabled
	out.AllowedOrigins = append([]string{}, p.AllowedOrigins...)
	out.CreatedAt = p.CreatedAt.UTC().Format(time.RFC3339)
	out.UpdatedAt = p.UpdatedAt.UTC().Format(time.RFC3339)
	writeJSON(r, statusOK, out)
	return nil
}
