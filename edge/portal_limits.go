package edge

import (
	"errors"
	"fmt"

	"github.com/swapgate/swapgate/routing/domain/portal"
)

// errSignInLimited makes UpdateSignInCounts store nothing for a refused
// request.
var errSignInLimited = errors.New("edge: sign-in limit reached")

// takeSignIn counts one sign-in request under limits (package portal has
// the rules) in the store, which every node of a cluster shares, and
// reports whether each was within its limit; a refused request counts
// under none. A restarted Pebble node forgets its counts, which the
// codes' own tries make harmless.
func (s *Server) takeSignIn(r *Request, limits []portal.Limit) (bool, error) {
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = l.Key
	}
	err := s.deps.Portal.Store.UpdateSignInCounts(r.Context(), r.Now, keys, func(cs []portal.Counter) error {
		if !portal.Take(cs, limits, r.Now) {
			return errSignInLimited
		}
		return nil
	})
	switch {
	case errors.Is(err, errSignInLimited):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("edge: count sign-in request: %w", err)
	}
	return true, nil
}
