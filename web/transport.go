package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ServiceTransport returns a transport for a service the user or the
// organization configured, such as a wiki's REST API: its address came from
// the configuration, not from a model or a page, so no target policy
// applies and a service on the local network or this computer can be
// reached. Like a Service it resolves with o.Resolver and dials with o.Dial
// when they are set (then no proxy is used) and trusts o.TLSConfig, so that
// tests can route it to loopback the same way; otherwise it is Go's default
// transport, honouring the proxy environment. Every connection attempt is
// bounded by o.ConnectTimeout and the wait for answer headers by
// o.HeaderTimeout (the defaults of a Service when zero).
//
// Send requests that carry a secret through credhttp.Client on top of it.
func ServiceTransport(o ServiceOptions) *http.Transport {
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	header := o.HeaderTimeout
	if header <= 0 {
		header = DefaultHeaderTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSHandshakeTimeout = connect
	tr.ResponseHeaderTimeout = header
	tr.MaxResponseHeaderBytes = 256 << 10
	if o.TLSConfig != nil {
		tr.TLSClientConfig = o.TLSConfig.Clone()
	}
	if o.Resolver == nil && o.Dial == nil {
		tr.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
		return tr
	}
	tr.Proxy = nil
	resolver := o.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var ips []net.IP
		if ip := net.ParseIP(host); ip != nil {
			ips = []net.IP{ip}
		} else {
			answers, err := resolver.LookupIPAddr(ctx, host)
			if err != nil {
				return nil, &ResolveError{Err: err}
			}
			for _, a := range answers {
				ips = append(ips, a.IP)
			}
		}
		if len(ips) == 0 {
			return nil, ErrNoAddresses
		}
		var errs []error
		for _, ip := range ips {
			dctx, cancel := context.WithTimeout(ctx, connect)
			conn, err := dial(dctx, network, net.JoinHostPort(ip.String(), port))
			cancel()
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return nil, errors.Join(errs...)
	}
	return tr
}
