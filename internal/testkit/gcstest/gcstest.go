// Package gcstest runs a Google Cloud Storage server for tests:
// fake-gcs-server, in this process, serving the JSON API over plain HTTP
// on a free loopback port, with its objects in memory and the bucket
// "lake" created.
//
// Clients reach it through STORAGE_EMULATOR_HOST (see Env), which Google's
// Go client and gocloud's gcsblob read: with it set they send no
// credentials. objstore opens gs:// only when built with -tags gcs.
package gcstest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Bucket is the bucket every Server starts with.
const Bucket = "lake"

// Server is one running fake-gcs-server.
type Server struct {
	srv  *fakestorage.Server
	addr string // 127.0.0.1:PORT
}

// Start runs a server on a free port of 127.0.0.1 with the bucket "lake",
// and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http",
		// Google's client reads objects at http://HOST/BUCKET/OBJECT: the
		// server takes such a request for a download only when HOST, its
		// port aside, is the public host.
		PublicHost: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("gcstest: start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	u, err := url.Parse(srv.URL())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("gcstest: fake-gcs-server listens at %q, not on 127.0.0.1 (%v)", srv.URL(), err)
	}
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: Bucket})
	return &Server{srv: srv, addr: u.Host}
}

// Addr is the server's address, 127.0.0.1:PORT.
func (s *Server) Addr() string { return s.addr }

// Endpoint is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// URL is an output URL for the prefix in the bucket "lake":
// gs://lake/PREFIX. The server is found through the environment: see Env.
func (s *Server) URL(prefix string) string { return s.BucketURL(Bucket, prefix) }

// BucketURL is like URL for any bucket, which need not exist.
func (s *Server) BucketURL(bucket, prefix string) string {
	u := url.URL{Scheme: "gs", Host: bucket, Path: "/" + prefix}
	if prefix == "" {
		u.Path = ""
	}
	return u.String()
}

// Env is the environment a Google Cloud Storage client needs to reach
// this server, as KEY=VALUE entries to append to a subprocess's
// environment: STORAGE_EMULATOR_HOST, and the gRPC one emptied, so a
// developer's own settings cannot redirect its requests.
func (s *Server) Env() []string {
	return []string{
		"STORAGE_EMULATOR_HOST=" + s.addr,
		"STORAGE_EMULATOR_HOST_GRPC=",
	}
}

// SetEnv sets the variables of Env in this process for the rest of the
// test (with t.Setenv, so the test cannot run in parallel).
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
