package redisproc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certs are throwaway TLS files for tests, written by WriteCerts: a CA,
// a server certificate it signed for 127.0.0.1, localhost and
// ServerName, a client certificate it signed, and a second CA (OtherCA)
// with a client certificate of its own, which the first CA's server does
// not trust.
type Certs struct {
	CAFile, ServerCert, ServerKey, ClientCert, ClientKey string
	OtherCAFile, OtherClientCert, OtherClientKey         string
}

// ServerName is a DNS name the server certificate carries besides
// localhost (for tests of a server name other than the host's).
const ServerName = "redis.test"

// WriteCerts generates the certificates (ECDSA P-256, valid for a day)
// into dir.
func WriteCerts(dir string) (Certs, error) {
	c := Certs{
		CAFile: filepath.Join(dir, "ca.pem"), ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
		OtherCAFile: filepath.Join(dir, "other-ca.pem"), OtherClientCert: filepath.Join(dir, "other-client.pem"), OtherClientKey: filepath.Join(dir, "other-client-key.pem"),
	}
	ca, caKey, err := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "resque-go test CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true}, nil, nil, c.CAFile, "")
	if err != nil {
		return c, err
	}
	if _, _, err := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "redis-server"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", ServerName}}, ca, caKey, c.ServerCert, c.ServerKey); err != nil {
		return c, err
	}
	if _, _, err := issue(clientTemplate(), ca, caKey, c.ClientCert, c.ClientKey); err != nil {
		return c, err
	}
	other, otherKey, err := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "resque-go other CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}, nil, nil, c.OtherCAFile, "")
	if err != nil {
		return c, err
	}
	_, _, err = issue(clientTemplate(), other, otherKey, c.OtherClientCert, c.OtherClientKey)
	return c, err
}

func clientTemplate() *x509.Certificate {
	return &x509.Certificate{Subject: pkix.Name{CommonName: "resque-go worker"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

// ServerArgs are the redis-server arguments that serve TLS with the
// server certificate, trusting the CA for client certificates, which
// the server requires when clientCerts is true (tls-auth-clients).
func (c Certs) ServerArgs(clientCerts bool) []string {
	auth := "no"
	if clientCerts {
		auth = "yes"
	}
	return []string{"--tls-cert-file", c.ServerCert, "--tls-key-file", c.ServerKey, "--tls-ca-cert-file", c.CAFile, "--tls-auth-clients", auth}
}

// ClientTLS is a TLS config that trusts the CA and presents the client
// certificate (for StartWith's readiness check).
func (c Certs) ClientTLS() (*tls.Config, error) {
	pemCA, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	cert, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
	if err != nil {
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}, nil
}

// issue creates a key and a certificate from tmpl, signed by parent (self-
// signed when nil), and writes them as PEM (the key only when keyFile is
// set).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("redisproc: key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("redisproc: serial: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("redisproc: certificate: %w", err)
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return nil, nil, err
	}
	if keyFile != "" {
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, fmt.Errorf("redisproc: key: %w", err)
		}
		if err := writePEM(keyFile, "PRIVATE KEY", kder); err != nil {
			return nil, nil, err
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("redisproc: certificate: %w", err)
	}
	return cert, key, nil
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("redisproc: %w", err)
	}
	return nil
}
