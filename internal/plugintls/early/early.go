// Package early makes a plugin process's TLS key and certificate while
// the rest of the process starts. A plugin binary spends most of its
// start in package initialisation (gRPC, protobuf descriptors, the
// plugin's own packages) on one core; the P-256 key and the self-signed
// certificate (about 0.3 ms) were made after all of it, when go-plugin
// asked for the TLS configuration. This package imports the standard
// library only, so the Go runtime initialises it before those packages,
// and its init starts the work on another goroutine when the host asked
// for mutual TLS (PLUGIN_CLIENT_CERT set). Nothing is stored: the key is
// made in the process, at every start, as before.
package early

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"os"
	"sync"
	"time"
)

// EnvClientCert is where the host passes its certificate (go-plugin's
// AutoMTLS variable); its presence is the host asking for mutual TLS.
const EnvClientCert = "PLUGIN_CLIENT_CERT"

// ServerName is the name the certificates carry, as in AutoMTLS.
const ServerName = "localhost"

// Cert is a self-signed certificate (DER) and its key.
type Cert struct {
	DER  []byte
	Key  *ecdsa.PrivateKey
	Leaf *x509.Certificate
}

var (
	mu     sync.Mutex
	ready  chan struct{} // closed when made; nil when none was started
	made   Cert
	madeEr error
)

func init() {
	if os.Getenv(EnvClientCert) == "" {
		return
	}
	ch := make(chan struct{})
	ready = ch
	go func() {
		made, madeEr = New()
		close(ch)
	}()
}

// Take returns the certificate started at init, waiting for it, the
// first time it is called; then, or when none was started, a new one.
// Each certificate is handed out once.
func Take() (Cert, error) {
	mu.Lock()
	ch := ready
	ready = nil
	mu.Unlock()
	if ch == nil {
		return New()
	}
	<-ch
	return made, madeEr
}

// New makes a self-signed ECDSA P-256 certificate of the shape go-plugin's
// AutoMTLS makes (a CA for "localhost", valid for client and server
// authentication), so that a plain go-plugin peer accepts it.
func New() (Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Cert{}, fmt.Errorf("plugin TLS: generate a P-256 key: %w", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return Cert{}, fmt.Errorf("plugin TLS: serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: ServerName, Organization: []string{"abkit"}},
		DNSNames:    []string{ServerName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		// A CA, as AutoMTLS's: the peer loads it as its only root.
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SerialNumber:          sn,
		// A little in the past, so that a peer whose clock is behind
		// still accepts it.
		NotBefore: now.Add(-30 * time.Second),
		NotAfter:  now.Add(10 * 365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return Cert{}, fmt.Errorf("plugin TLS: create the certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return Cert{}, fmt.Errorf("plugin TLS: parse the certificate: %w", err)
	}
	return Cert{DER: der, Key: key, Leaf: leaf}, nil
}
