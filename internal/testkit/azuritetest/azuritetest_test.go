//go:build unix

package azuritetest

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/objstoretest"
)

func TestURLAndEnv(t *testing.T) {
	s := &Server{addr: "127.0.0.1:7070"}
	want := "azblob://lake/exports/shop?domain=127.0.0.1%3A7070&localemu=true&protocol=http"
	if got := s.URL("/exports/shop"); got != want {
		t.Errorf("URL = %q; want %q", got, want)
	}
	if got := s.ContainerURL("other", ""); !strings.HasPrefix(got, "azblob://other?") {
		t.Errorf("ContainerURL = %q", got)
	}
	if got := s.ServiceURL(); got != "http://127.0.0.1:7070/devstoreaccount1" {
		t.Errorf("ServiceURL = %q", got)
	}
	env := strings.Join(s.Env(), "\n") + "\n"
	for _, kv := range []string{"AZURE_STORAGE_ACCOUNT=" + Account, "AZURE_STORAGE_KEY=" + Key,
		"AZURE_STORAGE_SAS_TOKEN=", "AZURE_STORAGE_CONNECTION_STRING=", "AZURE_STORAGE_IS_CDN="} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("Env lacks %s", kv)
		}
	}
}

// TestStartAndStop starts a server, uses it through objstore, and checks
// that the end of its test killed it.
func TestStartAndStop(t *testing.T) {
	// With a developer's own Azure settings in the environment, SetEnv
	// still has the client reach this server as the development account.
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT":           "someoneelse",
		"AZURE_STORAGE_KEY":               "c29tZW9uZSBlbHNl",
		"AZURE_STORAGE_SAS_TOKEN":         "sv=2020-01-01&sig=bogus",
		"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=someoneelse;AccountKey=c29tZW9uZSBlbHNl",
		"AZURE_STORAGE_DOMAIN":            "blob.core.chinacloudapi.cn",
		"AZURE_STORAGE_IS_CDN":            "true",
	} {
		t.Setenv(k, v)
	}
	var s *Server
	t.Run("server", func(t *testing.T) {
		s = Start(t)
		s.SetEnv(t)
		objstoretest.RoundTrip(t, s.URL(""), "a/b/c.txt")
		resp, err := http.Get(s.Endpoint() + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Server") != "Azurite-Blob/"+AzuriteVersion {
			t.Errorf("Server: %q; want Azurite-Blob/%s", resp.Header.Get("Server"), AzuriteVersion)
		}
	})
	if s == nil {
		t.Skip("no server started")
	}
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("something still listens after the test ended")
	}
	s.Kill() // killed already: nothing to do
}
