package lineage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The environment variables of the HTTP transport, as OpenLineage's own
// clients name them.
const (
	EnvURL       = "OPENLINEAGE_URL"
	EnvEndpoint  = "OPENLINEAGE_ENDPOINT"
	EnvAPIKey    = "OPENLINEAGE_API_KEY"
	EnvNamespace = "OPENLINEAGE_NAMESPACE"
)

// DefaultEndpoint is the path under OPENLINEAGE_URL that events are posted
// to unless OPENLINEAGE_ENDPOINT says otherwise: the lineage API of
// Marquez and other OpenLineage servers.
const DefaultEndpoint = "api/v1/lineage"

// DefaultTimeout bounds one POST, so an endpoint that hangs delays a run
// by seconds at most.
const DefaultTimeout = 5 * time.Second

// maxErrorBody bounds how much of an error response goes into the error.
const maxErrorBody = 256

// HTTPTransport posts each event as JSON to an OpenLineage HTTP endpoint.
type HTTPTransport struct {
	// URL is the endpoint events are posted to.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Timeout bounds one POST; zero means DefaultTimeout.
	Timeout time.Duration
	// Client sends the requests; nil means a client that keeps no idle
	// connections (two events a run do not need one).
	Client *http.Client
}

// HTTPFromEnv returns the HTTP transport that the environment asks for:
// OPENLINEAGE_URL (http or https), OPENLINEAGE_ENDPOINT (the path under
// it, DefaultEndpoint when unset) and OPENLINEAGE_API_KEY. It returns nil
// and no error when OPENLINEAGE_URL is not set.
func HTTPFromEnv(getenv func(string) string) (*HTTPTransport, error) {
	base := strings.TrimSpace(getenv(EnvURL))
	if base == "" {
		return nil, nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s=%q: want an http:// or https:// URL", EnvURL, redact(base))
	}
	endpoint := getenv(EnvEndpoint)
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	return &HTTPTransport{
		URL:    strings.TrimRight(base, "/") + "/" + strings.TrimLeft(endpoint, "/"),
		APIKey: getenv(EnvAPIKey),
	}, nil
}

// String returns the endpoint's URL, without any user or password it
// holds, for messages.
func (h *HTTPTransport) String() string {
	u, err := url.Parse(h.URL)
	if err != nil || u.User == nil {
		return h.URL
	}
	return u.Redacted()
}

// Send posts one event; any status but 2xx is an error, which quotes the
// start of the response. Errors do not repeat the URL.
func (h *HTTPTransport) Send(ctx context.Context, event []byte) error {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(event))
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.APIKey)
	}
	resp, err := h.client().Do(req)
	if err != nil {
		// The url.Error repeats the method and the URL, which
		// DeliveryError names already.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if text := strings.Join(strings.Fields(string(head)), " "); text != "" {
			return fmt.Errorf("post: HTTP %s: %s", resp.Status, text)
		}
		return fmt.Errorf("post: HTTP %s", resp.Status)
	}
	return nil
}

func (h *HTTPTransport) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}}
}

// redact hides the password of a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
