package pluginhost_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/plugintls"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
)

func curveOf(t *testing.T, c *x509.Certificate) elliptic.Curve {
	t.Helper()
	k, ok := c.PublicKey.(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("peer key is %T, want ECDSA", c.PublicKey)
	}
	return k.Curve
}

// An sdk.Serve plugin answers the host with its own P-256 certificate over
// TLS 1.3, and the host holds the one it pinned from the handshake.
func TestMutualTLSServe(t *testing.T) {
	host := &plugintls.Host{}
	p, err := pluginhost.Load(context.Background(), bin("submit-guard"), pluginhost.Options{TLS: host})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	st, err := pluginhost.PeerTLS(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != tls.VersionTLS13 {
		t.Errorf("TLS version %#x, want TLS 1.3", st.Version)
	}
	if len(st.PeerCertificates) != 1 {
		t.Fatalf("plugin presented %d certificates, want its one", len(st.PeerCertificates))
	}
	if c := curveOf(t, st.PeerCertificates[0]); c != elliptic.P256() {
		t.Errorf("plugin certificate on %s, want P-256", c.Params().Name)
	}
	// A second plugin gets a certificate of its own; the host's is shared.
	q, err := pluginhost.Load(context.Background(), bin("submit-guard"), pluginhost.Options{TLS: host})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	st2, err := pluginhost.PeerTLS(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if st2.PeerCertificates[0].Equal(st.PeerCertificates[0]) {
		t.Error("two plugin processes presented the same certificate")
	}
}

// A plugin served by plain go-plugin (AutoMTLS, its own P-521 certificate),
// not through sdk.Serve, still loads and answers.
func TestMutualTLSPlainGoPlugin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, pluginhost.Options{Env: []string{helperEnv + "=plain-automtls"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Description().GetName() != "misbehaving" {
		t.Errorf("described as %q", p.Description().GetName())
	}
	st, err := pluginhost.PeerTLS(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := curveOf(t, st.PeerCertificates[0]); c != elliptic.P521() {
		t.Errorf("plugin certificate on %s, want go-plugin's P-521", c.Params().Name)
	}
	if st.Version != tls.VersionTLS13 {
		t.Errorf("TLS version %#x, want TLS 1.3", st.Version)
	}
}

// An sdk.Serve plugin still loads in a plain go-plugin host with AutoMTLS:
// the certificate is where AutoMTLS expects it.
func TestMutualTLSPlainGoPluginHost(t *testing.T) {
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: {sdk.PluginSetName: rawDiag{}}},
		Cmd:              exec.Command(bin("submit-guard")),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Stderr:           io.Discard,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
	})
	defer c.Kill()
	cp, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cp.Dispense(sdk.PluginSetName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := raw.(abkitv1.DiagnosticsClient).Echo(ctx, &abkitv1.EchoMessage{Payload: []byte("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.GetPayload()) != "hi" {
		t.Errorf("echo %q", got.GetPayload())
	}
}

// A plugin that ignores the host's certificate and answers in plain text
// is refused: the host never talks to a plugin it cannot authenticate.
func TestMutualTLSPlaintextRefused(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pluginhost.Load(context.Background(), self, pluginhost.Options{Env: []string{helperEnv + "=plaintext"}})
	if err == nil {
		p.Close()
		t.Fatal("loaded a plugin that answered without a certificate")
	}
	if !errors.Is(err, plugintls.ErrNoCertificate) || !errors.Is(err, pluginhost.ErrNotPlugin) {
		t.Errorf("error %v, want ErrNoCertificate and ErrNotPlugin", err)
	}
}

// Only the host that started a plugin can call it: a client that trusts
// the plugin's certificate but presents none, or another certificate, is
// refused; the host's own certificate is accepted (the control).
func TestMutualTLSClientWithoutHostCertRefused(t *testing.T) {
	host := &plugintls.Host{}
	p, err := pluginhost.Load(context.Background(), bin("submit-guard"), pluginhost.Options{TLS: host})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	st, err := pluginhost.PeerTLS(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	addr := pluginhost.Addr(p)
	if addr == nil {
		t.Fatal("no address for the plugin")
	}
	pool := x509.NewCertPool()
	pool.AddCert(st.PeerCertificates[0])
	hostID, err := host.Identity()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := plugintls.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	call := func(certs []tls.Certificate) error {
		tc := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13, Certificates: certs}
		cc, err := grpc.NewClient("unix:"+addr.String(), grpc.WithTransportCredentials(credentials.NewTLS(tc)))
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = abkitv1.NewDiagnosticsClient(cc).Echo(ctx, &abkitv1.EchoMessage{Payload: []byte("x")})
		return err
	}
	if addr.Network() != "unix" {
		t.Skipf("plugin listens on %s; this test dials unix sockets", addr.Network())
	}
	if err := call([]tls.Certificate{hostID.Certificate()}); err != nil {
		t.Fatalf("the host's own certificate was refused: %v", err)
	}
	for name, certs := range map[string][]tls.Certificate{
		"no certificate":      nil,
		"another certificate": {stranger.Certificate()},
	} {
		err := call(certs)
		if err == nil {
			t.Errorf("%s: the plugin answered a client without the host's certificate", name)
			continue
		}
		t.Logf("%s: refused: %v", name, err)
	}
}
