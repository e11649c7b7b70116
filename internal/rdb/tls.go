package rdb

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
)

// ErrBadTLS is wrapped by every error about unusable TLS settings: a CA or
// certificate file that is missing or holds no usable PEM, a certificate
// without its key, or TLS settings given for a redis:// (plain) URL.
var ErrBadTLS = errors.New("rdb: bad tls config")

// TLSFiles are TLS settings as the command line and node configs give
// them: file paths, read by Config.
type TLSFiles struct {
	// CAFile is a PEM bundle of the CAs that sign the server's certificate;
	// "" means the system's roots.
	CAFile string
	// CertFile and KeyFile are a client certificate and its key (PEM), for
	// servers that require one (redis.conf tls-auth-clients yes). Both or
	// neither.
	CertFile string
	KeyFile  string
	// ServerName is the name the server's certificate must carry; "" means
	// the host of the URL.
	ServerName string
	// InsecureSkipVerify accepts any server certificate. For tests only:
	// anyone on the path can read and change the traffic.
	InsecureSkipVerify bool
}

// IsZero reports whether no TLS setting is given.
func (f TLSFiles) IsZero() bool { return f == TLSFiles{} }

// Config reads the files and returns the TLS configuration, or nil when
// no setting is given (a rediss:// URL then verifies against the system's
// roots). Its errors wrap ErrBadTLS and name the file.
func (f TLSFiles) Config() (*tls.Config, error) {
	if f.IsZero() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fileError("CA file", f.CAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %q holds no PEM certificate", ErrBadTLS, f.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.CertFile != "" && f.KeyFile != "":
		for _, file := range [][2]string{{"certificate file", f.CertFile}, {"key file", f.KeyFile}} {
			if _, err := os.Stat(file[1]); err != nil {
				return nil, fileError(file[0], file[1], err)
			}
		}
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %q with key %q: %v", ErrBadTLS, f.CertFile, f.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case f.CertFile != "":
		return nil, fmt.Errorf("%w: certificate file %q given without its key file", ErrBadTLS, f.CertFile)
	case f.KeyFile != "":
		return nil, fmt.Errorf("%w: key file %q given without its certificate file", ErrBadTLS, f.KeyFile)
	}
	return cfg, nil
}

// fileError says why a file could not be read, naming it once (an
// *fs.PathError would repeat the path).
func fileError(what, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%w: %s %q: %v", ErrBadTLS, what, path, err)
}

// watchCertRequest returns a copy of cfg (of an empty config when nil)
// that records in asked whether the server asks for a client
// certificate. It answers as crypto/tls does without a callback: cfg's
// own GetClientCertificate, else the first of cfg's certificates the
// server accepts, else none.
func watchCertRequest(cfg *tls.Config, asked *atomic.Bool) *tls.Config {
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	get, certs := cfg.GetClientCertificate, cfg.Certificates
	cfg.GetClientCertificate = func(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked.Store(true)
		if get != nil {
			return get(req)
		}
		for i := range certs {
			if req.SupportsCertificate(&certs[i]) == nil {
				return &certs[i], nil
			}
		}
		return &tls.Certificate{}, nil
	}
	return cfg
}

// closedByPeer reports whether err is the other side closing the
// connection.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// certGiven says whether cfg offers a client certificate, for messages.
func certGiven(cfg *tls.Config) string {
	if cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil) {
		return "it did not accept the one given"
	}
	return "none was given"
}
