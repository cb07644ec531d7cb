package pluginhost

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// PeerTLS makes one Echo call and returns the TLS state of the connection
// it crossed, as the host saw it.
func PeerTLS(ctx context.Context, p *Plugin) (tls.ConnectionState, error) {
	var pr peer.Peer
	if _, err := p.diag.Echo(ctx, &abkitv1.EchoMessage{}, grpc.Peer(&pr)); err != nil {
		return tls.ConnectionState{}, err
	}
	info, ok := pr.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return tls.ConnectionState{}, errors.New("the connection is not TLS")
	}
	return info.State, nil
}

// Addr is where the plugin process listens.
func Addr(p *Plugin) net.Addr {
	if rc := p.client.ReattachConfig(); rc != nil {
		return rc.Addr
	}
	return nil
}

// StderrHeld is the most the host held at once of a stderr line the
// plugin was still writing (the capacity of its buffer, which only grows).
func StderrHeld(p *Plugin) int {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return cap(p.log.partial)
}
