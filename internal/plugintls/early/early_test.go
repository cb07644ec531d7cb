package early

import (
	"bytes"
	"crypto/ecdsa"
	"testing"
)

// TestTakeHandsOutEachCertificateOnce: Take gives a working self-signed
// certificate (its key signs what the certificate verifies), a new one at
// every call, whether or not one was started at init.
func TestTakeHandsOutEachCertificateOnce(t *testing.T) {
	var prev []byte
	for range 3 {
		c, err := Take()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Leaf.CheckSignatureFrom(c.Leaf); err != nil {
			t.Fatalf("not self-signed: %v", err)
		}
		if !c.Key.PublicKey.Equal(c.Leaf.PublicKey.(*ecdsa.PublicKey)) {
			t.Fatal("the key is not the certificate's")
		}
		if c.Leaf.Subject.CommonName != ServerName || !c.Leaf.IsCA {
			t.Fatalf("subject %q, CA %v", c.Leaf.Subject.CommonName, c.Leaf.IsCA)
		}
		if bytes.Equal(c.DER, prev) {
			t.Fatal("the same certificate twice")
		}
		prev = c.DER
	}
}
