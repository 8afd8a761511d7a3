// Command xds is the gRPC side of Heureka's xDS interop test (interop/tests/test_xds.py).
//
//	xds provider -id ID -port PORT       a TestService server answering UnaryCall with ServerId ID
//	xds client -target xds:///APP        calls UnaryCall in a loop through grpc-go's xds resolver
//	xds dump -server HOST:PORT NAME...   prints the endpoints served for NAMEs (dump.go)
//
// The client reads its bootstrap from GRPC_XDS_BOOTSTRAP (the file naming Heureka's xDS port)
// and prints one line per call: "<unix milliseconds> <server id>" or "<unix milliseconds>
// error <message>", so the test can tell which provider answered when.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	_ "google.golang.org/grpc/xds" // registers the xds:/// resolver and balancers
)

type provider struct {
	testgrpc.UnimplementedTestServiceServer
	id string
}

func (p *provider) UnaryCall(_ context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{ServerId: p.id, Hostname: p.id}, nil
}

func runProvider(args []string) error {
	fs := flag.NewFlagSet("provider", flag.ExitOnError)
	id := fs.String("id", "", "the server id every answer carries")
	port := fs.Int("port", 0, "the port to listen on (127.0.0.1)")
	_ = fs.Parse(args)
	lis, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		return err
	}
	server := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(server, &provider{id: *id})
	fmt.Printf("provider %s listening on %s\n", *id, lis.Addr())
	return server.Serve(lis)
}

func runClient(args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	target := fs.String("target", "", "the xds:/// target to call")
	interval := fs.Duration("interval", 10*time.Millisecond, "pause between calls")
	timeout := fs.Duration("timeout", time.Second, "deadline of one call")
	_ = fs.Parse(args)
	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := testgrpc.NewTestServiceClient(conn)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{FillServerId: true})
		cancel()
		now := time.Now().UnixMilli()
		if err != nil {
			fmt.Printf("%d error %v\n", now, err)
		} else {
			fmt.Printf("%d %s\n", now, resp.GetServerId())
		}
		time.Sleep(*interval)
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: xds provider|client|dump [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "provider":
		err = runProvider(os.Args[2:])
	case "client":
		err = runClient(os.Args[2:])
	case "dump":
		err = runDump(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
