package node

import (
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
)

// tlsFiles are the TLS settings of r.
func (r Redis) tlsFiles() rdb.TLSFiles {
	return rdb.TLSFiles{CAFile: r.TLSCAFile, CertFile: r.TLSCertFile, KeyFile: r.TLSKeyFile,
		ServerName: r.TLSServerName, InsecureSkipVerify: r.TLSInsecureSkipVerify}
}

// options checks r and turns it into the client's options: the TLS files
// are read here, and settings the URL would not use (TLS with redis://, a
// sentinel password without Sentinels) are refused, as config errors.
func (r Redis) options() (rdb.Options, error) {
	opt := rdb.Options{URL: r.URL, Namespace: r.Namespace, SentinelPassword: r.SentinelPassword}
	if err := opt.Check(); err != nil {
		return opt, configError{err}
	}
	tls, err := r.tlsFiles().Config()
	if err != nil {
		return opt, configError{err}
	}
	opt.TLS = tls
	if err := opt.Check(); err != nil {
		return opt, configError{err}
	}
	return opt, nil
}

// newRedisClient builds the node's client from the options resolved from
// r, saying loudly when the server's certificate goes unchecked.
func newRedisClient(r Redis, opt rdb.Options, log zerolog.Logger) (*rdb.Client, error) {
	if r.TLSInsecureSkipVerify {
		log.Warn().Str("redis", rdb.RedactURL(r.URL)).
			Msg("TLS CERTIFICATE VERIFICATION IS OFF (--tls-insecure-skip-verify): anyone on the network path can read and change the traffic to Redis, passwords included; use it only for tests")
	}
	client, err := rdb.New(opt)
	if err != nil {
		return nil, configError{err}
	}
	return client, nil
}
