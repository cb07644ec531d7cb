//go:build unix

package plugintls

import (
	"crypto/tls"
	"crypto/x509"
	"syscall"
	"testing"
	"time"
)

// BenchmarkKeyExchange is BenchmarkHandshake with each key exchange, and
// the CPU both sides spent per handshake (user and system time of the
// process, from getrusage): on a shared machine the CPU is the steadier
// figure (docs/perf.md).
func BenchmarkKeyExchange(b *testing.B) {
	var h Host
	hostID, _ := h.Identity()
	plug, _ := NewIdentity()
	pinned := x509.NewCertPool()
	pinned.AddCert(plug.Certificate().Leaf)
	for _, v := range []struct {
		name   string
		curves []tls.CurveID
	}{
		{"hybrid", []tls.CurveID{tls.X25519MLKEM768, tls.X25519}}, // Go's default
		{"p256", keyExchange()},
		{"x25519", []tls.CurveID{tls.X25519}},
	} {
		b.Run(v.name, func(b *testing.B) {
			server, err := ServerConfig(plug, hostID.PEM())
			if err != nil {
				b.Fatal(err)
			}
			server.CurvePreferences = v.curves
			client := &tls.Config{RootCAs: pinned, ServerName: "localhost", MinVersion: tls.VersionTLS13,
				Certificates: []tls.Certificate{hostID.Certificate()}, CurvePreferences: v.curves}
			before := cpuTime()
			n := 0
			for b.Loop() {
				n++
				if serr, cerr := handshake(b, server, client); serr != nil || cerr != nil {
					b.Fatal(serr, cerr)
				}
			}
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(n), "cpu-µs/op")
		})
	}
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
