package catalogsite

import (
	"net/http"
	"strconv"
)

// DefaultRobots is the robots.txt a new Site serves.
const DefaultRobots = "User-agent: *\nDisallow: /private/\n"

// SetRobots sets the body of /robots.txt; "" makes it answer 404.
func (s *Site) SetRobots(body string) {
	if body == "" {
		s.robots.Store(nil)
		return
	}
	s.robots.Store(&body)
}

// serveRobots answers /robots.txt; it is never delayed or faulted.
func (s *Site) serveRobots(w http.ResponseWriter, r *http.Request) {
	s.stats.robots.Add(1)
	body := s.robots.Load()
	if body == nil {
		s.writeError(w, r, http.StatusNotFound)
		return
	}
	h := w.Header()
	h["Content-Type"] = ctText
	h["Content-Length"] = []string{strconv.Itoa(len(*body))}
	w.WriteHeader(http.StatusOK)
	writeBody(w, r, *body)
}
