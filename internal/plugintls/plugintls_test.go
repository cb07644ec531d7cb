package plugintls

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
)

func TestWithCert(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"1|1|unix|/tmp/p|grpc|\n", "1|1|unix|/tmp/p|grpc|CERT\n"},
		{"1|1|unix|/tmp/p|grpc||true\n", "1|1|unix|/tmp/p|grpc|CERT|true\n"},
		{"1|1|unix|/tmp/p|grpc|", "1|1|unix|/tmp/p|grpc|CERT"},
		// Not the shape go-plugin writes, or a certificate already there:
		// passed on unchanged, for the host to report.
		{"1|1|unix|/tmp/p|grpc\n", "1|1|unix|/tmp/p|grpc\n"},
		{"1|1|unix|/tmp/p|grpc|OTHER\n", "1|1|unix|/tmp/p|grpc|OTHER\n"},
		{"hello\n", "hello\n"},
	} {
		if got := withCert(c.line, "CERT"); got != c.want {
			t.Errorf("withCert(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestServerConfigBadPEM(t *testing.T) {
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ServerConfig(id, []byte("not a certificate")); err == nil {
		t.Fatal("accepted a client certificate that is not PEM")
	}
}

// handshake runs one TLS handshake over loopback TCP (buffered, so that
// an alert never waits for a reader) and returns both sides' errors.
func handshake(t testing.TB, server, client *tls.Config) (serr, cerr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer a.Close()
		s := tls.Server(a, server)
		err = s.Handshake()
		if err == nil {
			// TLS 1.3 settles the client certificate after the client's
			// handshake returns: read to see the verdict.
			_, err = s.Read(make([]byte, 1))
		}
		done <- err
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(b, client)
	cerr = c.Handshake()
	if cerr == nil {
		_, cerr = c.Write([]byte("x"))
	}
	// Closing ends a server still waiting for a client that gave up.
	b.Close()
	return <-done, cerr
}

// The plugin side accepts the host's certificate only; the host side
// trusts the plugin's certificate only.
func TestPinnedBothWays(t *testing.T) {
	var h Host
	hostID, err := h.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := h.Identity(); again != hostID {
		t.Error("the host identity is made again instead of cached")
	}
	plug, _ := NewIdentity()
	other, _ := NewIdentity()
	server, err := ServerConfig(plug, hostID.PEM())
	if err != nil {
		t.Fatal(err)
	}
	pinned := x509.NewCertPool()
	pinned.AddCert(plug.Certificate().Leaf)
	client := func(id *Identity, roots *x509.CertPool) *tls.Config {
		c := &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS13}
		if id != nil {
			c.Certificates = []tls.Certificate{id.Certificate()}
		}
		return c
	}
	if serr, cerr := handshake(t, server, client(hostID, pinned)); serr != nil || cerr != nil {
		t.Fatalf("host and plugin: server %v, client %v", serr, cerr)
	}
	if serr, _ := handshake(t, server, client(other, pinned)); serr == nil {
		t.Error("plugin accepted another client certificate")
	}
	if serr, _ := handshake(t, server, client(nil, pinned)); serr == nil {
		t.Error("plugin accepted a client without a certificate")
	}
	otherPool := x509.NewCertPool()
	otherPool.AddCert(other.Certificate().Leaf)
	if _, cerr := handshake(t, server, client(hostID, otherPool)); cerr == nil {
		t.Error("host accepted a plugin certificate it did not pin")
	}
}

// BenchmarkNewIdentity is the plugin's share of a start: a P-256 key and
// its self-signed certificate.
func BenchmarkNewIdentity(b *testing.B) {
	for b.Loop() {
		if _, err := NewIdentity(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandshake is one mutual TLS 1.3 handshake between host and
// plugin configurations, both sides verifying, over loopback TCP.
func BenchmarkHandshake(b *testing.B) {
	var h Host
	hostID, _ := h.Identity()
	plug, _ := NewIdentity()
	server, err := ServerConfig(plug, hostID.PEM())
	if err != nil {
		b.Fatal(err)
	}
	pinned := x509.NewCertPool()
	pinned.AddCert(plug.Certificate().Leaf)
	client := &tls.Config{RootCAs: pinned, ServerName: "localhost", MinVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{hostID.Certificate()}}
	for b.Loop() {
		if serr, cerr := handshake(b, server, client); serr != nil || cerr != nil {
			b.Fatal(serr, cerr)
		}
	}
}

// TestStartIdentity: a plugin started without the host's certificate makes
// none ahead; with it, the certificate made ahead is the one served, and
// a nil Early makes one when asked.
func TestStartIdentity(t *testing.T) {
	t.Setenv(EnvClientCert, "")
	if e := StartIdentity(); e != nil {
		t.Fatal("StartIdentity started a certificate although the host asked for no TLS")
	}
	t.Setenv(EnvClientCert, "a host certificate")
	e := StartIdentity()
	if e == nil {
		t.Fatal("StartIdentity did not start the certificate the host asked for")
	}
	id, err := e.identity()
	if err != nil || id == nil || id.Certificate().Leaf == nil {
		t.Fatalf("early identity: %v, %v", id, err)
	}
	if again, _ := e.identity(); again != id {
		t.Error("waiting twice gave another certificate")
	}
	var none *Early
	if id, err := none.identity(); err != nil || id == nil {
		t.Errorf("no early identity: %v, %v; want one made now", id, err)
	}
}

// TestServerConfigNoTickets: the plugin side sends no session ticket, as
// no host resumes a session with a process that is new every time, and
// its key exchange is P-256 first, without the hybrid ML-KEM share.
func TestServerConfigNoTickets(t *testing.T) {
	var h Host
	hostID, _ := h.Identity()
	plug, _ := NewIdentity()
	c, err := ServerConfig(plug, hostID.PEM())
	if err != nil {
		t.Fatal(err)
	}
	if !c.SessionTicketsDisabled {
		t.Error("the plugin's TLS configuration makes session tickets")
	}
	if len(c.CurvePreferences) == 0 || c.CurvePreferences[0] != tls.CurveP256 || slices.Contains(c.CurvePreferences, tls.X25519MLKEM768) {
		t.Errorf("the plugin's key exchange is %v; want P-256 first, no hybrid", c.CurvePreferences)
	}
}
