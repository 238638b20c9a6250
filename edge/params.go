package edge

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// query returns a query parameter as a string and whether it was given.
func query(r *Request, name string) (string, bool) {
	args := r.Ctx.QueryArgs()
	if !args.Has(name) {
		return "", false
	}
	return string(args.Peek(name)), true
}

// chainParam parses one chain id and checks that the registry knows it.
func (s *Server) chainParam(param, v string) (*registry.Chain, *apierr.Error) {
	id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return nil, apierr.Param(param, param+" must be a chain ID (a positive integer)").With("value", v)
	}
	c, ok := s.deps.Registry.Chain(id)
	if !ok {
		return nil, apierr.Param(param, "unknown chain ID "+v).With("value", v)
	}
	return c, nil
}

// chainListParam parses a comma-separated list of chain ids, keeping order
// and dropping repeats. Lists are short, so repeats are found by scanning.
func (s *Server) chainListParam(param, v string) ([]*registry.Chain, *apierr.Error) {
	out := make([]*registry.Chain, 0, strings.Count(v, ",")+1)
	for rest, more := v, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ",")
		c, err := s.chainParam(param, p)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// tokenParam checks that a token address is well-formed for its chain.
func tokenParam(param, v string, c *registry.Chain) *apierr.Error {
	if err := address.ValidateToken(c.AddressFormat, v); err != nil {
		return apierr.Param(param, "malformed token address for chain "+strconv.FormatUint(c.ID, 10)+": "+err.Error()).With("value", v)
	}
	return nil
}

// positiveIntParam parses a positive integer.
func positiveIntParam(param, v string) (int, *apierr.Error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, apierr.Param(param, param+" must be a positive integer").With("value", v)
	}
	return n, nil
}

// textParam checks a free-text parameter (a search term, a memo, a status
// word): at most max bytes of valid UTF-8 without control characters, so
// that nothing unbounded or unprintable is looked up, echoed or stored.
func textParam(param, v string, max int) *apierr.Error {
	switch {
	case len(v) > max:
		return apierr.Param(param, param+" must be at most "+strconv.Itoa(max)+" bytes").With("length", len(v))
	case !utf8.ValidString(v):
		return apierr.Param(param, param+" must be valid UTF-8")
	case strings.ContainsFunc(v, unicode.IsControl):
		return apierr.Param(param, param+" must not contain control characters")
	}
	return nil
}
