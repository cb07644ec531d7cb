// Package plugintls is the mutual TLS between an abkit host and its plugin
// processes: go-plugin's AutoMTLS exchange, with certificates that are cheap
// to make and to verify.
//
// go-plugin v1.8.0's AutoMTLS makes a fresh ECDSA P-521 certificate on both
// sides of every start and verifies P-521 signatures in the handshake, which
// costs tens of milliseconds per plugin process (docs/perf.md). This package
// keeps AutoMTLS's wire protocol and its checks and changes only the keys:
//
//   - the host makes one ECDSA P-256 certificate per host process (cached)
//     and passes it to every plugin in PLUGIN_CLIENT_CERT, as AutoMTLS does;
//   - the plugin makes its own P-256 certificate, requires and verifies the
//     host's (pinned: the host's certificate is the only root it trusts) and
//     answers with its certificate in the sixth field of the handshake line,
//     where AutoMTLS puts it;
//   - the host trusts only the certificate from that line (go-plugin's
//     client loads it as the only root), presents its own, and both sides
//     speak TLS 1.3 only.
//
// Because the wire protocol is AutoMTLS's, a plugin served by plain
// go-plugin with AutoMTLS still loads in an abkit host (it answers with its
// P-521 certificate), and an abkit plugin still loads in a plain go-plugin
// host with AutoMTLS.
package plugintls

import (
	"github.com/abkit/abkit/internal/pluginenv"

	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
)

// EnvClientCert is the environment variable go-plugin's AutoMTLS passes the
// host's certificate (PEM) in.
const EnvClientCert = "PLUGIN_CLIENT_CERT"

// serverName is the name both sides' certificates carry and the host checks,
// as in AutoMTLS.
const serverName = "localhost"

// Identity is one side's certificate and private key.
type Identity struct {
	cert tls.Certificate
	pem  []byte
}

// NewIdentity makes a self-signed ECDSA P-256 certificate of the shape
// go-plugin's AutoMTLS makes (a CA for "localhost", valid for client and
// server authentication), so that a plain go-plugin peer accepts it.
func NewIdentity() (*Identity, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: generate a P-256 key: %w", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: serverName, Organization: []string{"abkit"}},
		DNSNames:              []string{serverName},
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SerialNumber:          sn,
		// A little slack for clocks; the host's certificate lives as long
		// as the host process, a plugin's as long as the plugin process.
		NotBefore: now.Add(-30 * time.Second),
		NotAfter:  now.Add(10 * 365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: create the certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: parse the certificate: %w", err)
	}
	return &Identity{
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		pem:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// PEM is the certificate (public part only), PEM-encoded.
func (id *Identity) PEM() []byte { return id.pem }

// Certificate is the certificate with its key, for a tls.Config.
func (id *Identity) Certificate() tls.Certificate { return id.cert }

// Host is the certificate of this host process: made on first use, shared
// by every plugin the process starts. Its key never leaves the process; a
// plugin gets the public certificate only, so sharing it lets no plugin
// speak for the host to another.
type Host struct {
	once sync.Once
	id   *Identity
	err  error
}

// Identity returns the host's certificate, making it on first use.
func (h *Host) Identity() (*Identity, error) {
	h.once.Do(func() { h.id, h.err = NewIdentity() })
	return h.id, h.err
}

// Client configures a go-plugin client for this package's mutual TLS: the
// host's certificate goes to the plugin in PLUGIN_CLIENT_CERT (cmd.Env is
// set to the host's environment, then env, then the certificate, and
// go-plugin is told not to add the host's environment after it), and the
// TLS configuration trusts nothing until go-plugin loads the certificate
// from the plugin's handshake line. Call [Pinned] after Client() to check
// that the plugin did answer with one.
func (h *Host) Client(cfg *plugin.ClientConfig, env []string) error {
	id, err := h.Identity()
	if err != nil {
		return err
	}
	cmd := cfg.Cmd
	if cmd == nil {
		return errors.New("plugin TLS: the client config has no command")
	}
	e := append(pluginenv.Environ(), env...) // not the host's credentials
	cmd.Env = append(e, EnvClientCert+"="+string(id.pem))
	cfg.SkipHostEnv = true
	cfg.AutoMTLS = false
	cfg.TLSConfig = &tls.Config{
		Certificates: []tls.Certificate{id.cert},
		// RootCAs and ClientCAs stay nil until go-plugin's client reads the
		// plugin's certificate from the handshake line; with none,
		// verification fails (nil RootCAs means the system roots, which
		// never hold it). ClientAuth is for the host's side of go-plugin's
		// broker, where the plugin dials the host.
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ServerName:       serverName,
		MinVersion:       tls.VersionTLS13,
		CurvePreferences: keyExchange(),
	}
	return nil
}

// keyExchange is the TLS key exchange between a host and its plugins:
// P-256 ECDHE, X25519 also accepted. Go's default is the hybrid
// X25519MLKEM768, which guards recorded traffic against a future quantum
// computer; the host and plugin talk over a local socket between two
// processes of one user, which no one records, and the hybrid exchange
// was about 30 % of a handshake's CPU (0.35–0.4 ms of 1.3 ms,
// docs/perf.md). P-256 comes first because gRPC's C core (Python's
// grpcio) offers no other group: a host that sent an X25519 share would
// get a HelloRetryRequest, one more round trip, from every Python plugin
// (and with X25519 alone no handshake at all). Go and Node speak both.
func keyExchange() []tls.CurveID { return []tls.CurveID{tls.CurveP256, tls.X25519} }

// Pinned reports whether go-plugin loaded the plugin's certificate from its
// handshake line into cfg's TLS configuration: only then does the host know
// whom it talks to.
func Pinned(cfg *plugin.ClientConfig) bool {
	return cfg.TLSConfig != nil && cfg.TLSConfig.RootCAs != nil
}

// ErrNoCertificate is reported by a host whose plugin answered the
// handshake without a certificate although the host sent its own.
var ErrNoCertificate = errors.New("the plugin answered the handshake without a TLS certificate (it does not speak go-plugin's AutoMTLS)")

// ServerConfig is the plugin side: clientPEM is the host's certificate from
// PLUGIN_CLIENT_CERT. The configuration presents id's certificate, requires
// a client certificate and trusts clientPEM's only, as a server and (for
// go-plugin's broker) as a client.
func ServerConfig(id *Identity, clientPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(clientPEM) {
		return nil, fmt.Errorf("plugin TLS: %s holds no PEM certificate", EnvClientCert)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{id.cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		// RootCAs and ServerName are for go-plugin's broker, where the
		// plugin dials the host with this configuration.
		RootCAs:          pool,
		ServerName:       serverName,
		MinVersion:       tls.VersionTLS13,
		CurvePreferences: keyExchange(),
		// Every plugin process is new and its host never resumes a
		// session, so a ticket would be made, encrypted and sent for
		// nothing after each handshake.
		SessionTicketsDisabled: true,
	}, nil
}

// Early is a plugin's certificate being made on another goroutine while
// the plugin sets up the rest of its server (building its description,
// gRPC services, listener): the key and self-signed certificate are a few
// hundred microseconds of a start (docs/perf.md), and the plugin's main
// goroutine has other work to do until go-plugin asks for them.
type Early struct {
	done chan struct{}
	id   *Identity
	err  error
}

// StartIdentity starts making the plugin's certificate when the host asks
// for mutual TLS (PLUGIN_CLIENT_CERT is set), and returns nil otherwise:
// a plugin started by hand or in debug mode makes none. Call it as early
// as the plugin knows it will serve, and pass the result to [Serve].
func StartIdentity() *Early {
	if os.Getenv(EnvClientCert) == "" {
		return nil
	}
	e := &Early{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		e.id, e.err = NewIdentity()
	}()
	return e
}

// identity waits for the certificate StartIdentity started, or makes one
// now when none was started.
func (e *Early) identity() (*Identity, error) {
	if e == nil {
		return NewIdentity()
	}
	<-e.done
	return e.id, e.err
}

// Serve serves cfg through plugin.Serve with this package's mutual TLS
// when the host asks for it (PLUGIN_CLIENT_CERT set) and without TLS
// otherwise, as go-plugin does. It replaces cfg.TLSProvider. early is the
// plugin's certificate from [StartIdentity], or nil to make it when
// go-plugin asks. It returns what plugin.Serve returns, or a TLS set-up
// error (after go-plugin has logged it).
func Serve(cfg *plugin.ServeConfig, early *Early) error {
	var tlsErr error
	c := *cfg
	c.TLSProvider = func() (*tls.Config, error) {
		clientPEM := os.Getenv(EnvClientCert)
		if clientPEM == "" || c.Test != nil {
			return nil, nil
		}
		id, err := early.identity()
		if err != nil {
			tlsErr = err
			return nil, err
		}
		tc, err := ServerConfig(id, []byte(clientPEM))
		if err != nil {
			tlsErr = err
			return nil, err
		}
		// go-plugin writes the handshake line right after this returns,
		// with an empty certificate field when the TLS configuration is
		// the plugin's own. The line is the only channel back to the
		// host, so put the certificate there, where AutoMTLS puts it.
		if err := answerWithCert(base64.RawStdEncoding.EncodeToString(id.cert.Certificate[0])); err != nil {
			tlsErr = err
			return nil, err
		}
		return tc, nil
	}
	plugin.Serve(&c)
	return tlsErr
}

// answerWithCert routes os.Stdout through a pipe until go-plugin has
// written its handshake line, sets the line's certificate field to cert and
// passes the line on to the real stdout. go-plugin writes the line with
// fmt.Printf on the goroutine that called TLSProvider, right after it
// returns, and then points os.Stdout at its own pipe for the stdio stream,
// so the swap is seen by that one write only.
func answerWithCert(cert string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("plugin TLS: pipe for the handshake line: %w", err)
	}
	out := os.Stdout
	os.Stdout = w
	go func() {
		defer r.Close()
		defer w.Close()
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil && line == "" {
			return
		}
		_, _ = io.WriteString(out, withCert(line, cert))
		_ = out.Sync()
	}()
	return nil
}

// withCert sets the sixth field of a go-plugin handshake line
// (core|app|network|address|protocol|cert[|mux]) to cert. A line of another
// shape is returned unchanged, and the host reports it.
func withCert(line, cert string) string {
	body, nl := strings.CutSuffix(line, "\n")
	parts := strings.Split(body, "|")
	if len(parts) < 6 || parts[5] != "" {
		return line
	}
	parts[5] = cert
	s := strings.Join(parts, "|")
	if nl {
		s += "\n"
	}
	return s
}
