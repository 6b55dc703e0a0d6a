package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
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
	tr.DialContext = resolvingDial(o, connect, nil)
	return tr
}

// LocalOnlyDial returns the dial function for a service that counts as
// local because every address of its host was loopback or private when
// Steward checked (a self-hosted provider, see LocalHost): it connects to
// loopback and private addresses only. It resolves the host with
// o.Resolver (nil: the system resolver) at every connection, checks each
// address before dialing it, and, with the production dialer, checks the
// socket's address once more right before it connects (net.Dialer
// Control). A host whose DNS answer changed since the check (DNS
// rebinding) is refused with a *NotLocalError instead of reaching another
// network; no such address is ever dialed. o.Dial, when set, replaces the
// dialer and is only called with an address that passed. Each attempt is
// bounded by o.ConnectTimeout. Give it to a transport without a proxy: a
// proxy would resolve the name itself.
func LocalOnlyDial(o ServiceOptions) DialFunc {
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{KeepAlive: 30 * time.Second, Control: localOnlyControl}).DialContext
	}
	return resolvingDial(o, connect, checkLocal)
}

// NotLocalError refuses a connection to an address that is neither
// loopback nor private for a service that counts as local.
type NotLocalError struct {
	// Host is the configured host name, Addr the address it resolved to.
	Host string
	Addr netip.Addr
}

// Permanent is true: asking again reaches the same address.
func (e *NotLocalError) Permanent() bool { return true }

func (e *NotLocalError) Error() string {
	host := e.Host
	if host == "" {
		host = "the host"
	}
	return fmt.Sprintf("%s now resolves to %s, which is neither loopback nor private: Steward connects to a self-hosted provider only on loopback and private addresses, the ones it counted as self-hosted for; nothing was sent", host, e.Addr)
}

// localAddr reports whether ip stays on this machine or in a private
// network: loopback or private (link-local and metadata addresses do not
// count). LocalHost and LocalOnlyDial decide with it.
func localAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || classify(ip) == classPrivate
}

func checkLocal(host string, ip netip.Addr) error {
	if !localAddr(ip) {
		return &NotLocalError{Host: host, Addr: ip.Unmap()}
	}
	return nil
}

// localOnlyControl refuses a socket about to connect to an address that is
// neither loopback nor private, the last check before anything is sent.
func localOnlyControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("web: refusing to dial %s %q: %w", network, address, err)
	}
	return checkLocal("", ap.Addr())
}

// resolvingDial resolves the host with o.Resolver and dials each address
// with o.Dial (net.Dialer when nil) in turn, each attempt bounded by
// connect; check, when set, refuses an address before it is dialed.
func resolvingDial(o ServiceOptions, connect time.Duration, check func(host string, ip netip.Addr) error) DialFunc {
	resolver := o.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
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
			if check != nil {
				a, ok := netip.AddrFromSlice(ip)
				if !ok {
					errs = append(errs, fmt.Errorf("web: %q resolved to an address that cannot be read", host))
					continue
				}
				if err := check(host, a); err != nil {
					errs = append(errs, err)
					continue
				}
			}
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
}
