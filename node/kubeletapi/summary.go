package kubeletapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// summary answers /stats/summary. Like the kubelet, the CPU-and-memory-only
// form is asked with ?only_cpu_and_memory=true, or by a POST whose JSON
// body is {"onlyCPUAndMemory": true} (an empty body means false).
func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	only, err := onlyCPUAndMemory(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum, err := s.opts.Summary.Summary(r.Context(), only)
	if err != nil {
		s.providerError(w, r, fmt.Errorf("stats summary: %w", err))
		return
	}
	s.writeJSON(w, "/stats/summary", sum)
}

func onlyCPUAndMemory(r *http.Request) (bool, error) {
	if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("invalid only_cpu_and_memory %q: %w", v, err)
		}
		return b, nil
	}
	if r.Method != http.MethodPost {
		return false, nil
	}
	var req struct {
		OnlyCPUAndMemory bool `json:"onlyCPUAndMemory"`
	}
	err := json.NewDecoder(io.LimitReader(r.Body, maxSummaryRequestBodyBytes)).Decode(&req)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("invalid summary request body: %w", err)
	}
	return req.OnlyCPUAndMemory, nil
}
