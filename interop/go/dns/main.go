// Command dnsprobe asks Heureka's DNS server through Go's own resolver (net.Resolver with
// PreferGo, dialling the server given instead of /etc/resolv.conf's), as a Go service would
// look an application up, and prints one JSON line per lookup.
//
//	dnsprobe -server 127.0.0.1:8600 [-tcp] [-count N] host orders.eureka.
//	dnsprobe -server 127.0.0.1:8600 [-tcp] [-source 127.0.0.2] srv orders tcp eureka.
//
// Go's resolver sends EDNS0 offering 1232 bytes over UDP and retries a truncated answer over
// TCP by itself; -tcp dials TCP from the start. It keeps no cache: every lookup asks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

type result struct {
	Addrs     []string `json:"addrs,omitempty"`
	Srvs      []srv    `json:"srvs,omitempty"`
	Error     string   `json:"error,omitempty"`
	NotFound  bool     `json:"notfound,omitempty"`
	Temporary bool     `json:"temporary,omitempty"`
}

type srv struct {
	Target   string `json:"target"`
	Port     uint16 `json:"port"`
	Priority uint16 `json:"priority"`
	Weight   uint16 `json:"weight"`
}

func main() {
	server := flag.String("server", "127.0.0.1:8600", "the DNS server, host:port")
	tcp := flag.Bool("tcp", false, "ask over TCP only")
	count := flag.Int("count", 1, "lookups to make, one line each")
	source := flag.String("source", "", "ask from this local address (the asker's zone is looked up by it)")
	flag.Parse()
	resolver := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if *tcp {
				network = "tcp"
			}
			var dialer net.Dialer
			if *source != "" {
				ip := net.ParseIP(*source)
				if strings.HasPrefix(network, "tcp") {
					dialer.LocalAddr = &net.TCPAddr{IP: ip}
				} else {
					dialer.LocalAddr = &net.UDPAddr{IP: ip}
				}
			}
			return dialer.DialContext(ctx, network, *server)
		},
	}
	args := flag.Args()
	lookup, err := lookupOf(resolver, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	for i := 0; i < *count; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := out.Encode(lookup(ctx)); err != nil {
			os.Exit(1)
		}
		cancel()
	}
}

func lookupOf(resolver *net.Resolver, args []string) (func(context.Context) result, error) {
	switch {
	case len(args) == 2 && args[0] == "host":
		return func(ctx context.Context) result {
			addrs, err := resolver.LookupHost(ctx, args[1])
			return withError(result{Addrs: addrs}, err)
		}, nil
	case len(args) == 4 && args[0] == "srv":
		return func(ctx context.Context) result {
			_, records, err := resolver.LookupSRV(ctx, args[1], args[2], args[3])
			found := result{}
			for _, record := range records {
				found.Srvs = append(found.Srvs, srv{record.Target, record.Port, record.Priority, record.Weight})
			}
			return withError(found, err)
		}, nil
	}
	return nil, fmt.Errorf("usage: dnsprobe [-server host:port] [-tcp] [-count n] [-source ip] host NAME | srv SERVICE PROTO NAME")
}

func withError(found result, err error) result {
	if err == nil {
		return found
	}
	found.Error = err.Error()
	var dnsError *net.DNSError
	if errors.As(err, &dnsError) {
		found.NotFound = dnsError.IsNotFound
		found.Temporary = dnsError.IsTemporary
	}
	return found
}
