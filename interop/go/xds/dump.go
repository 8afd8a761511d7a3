package main

// The dump mode: what an xDS server serves for some names, read over one ADS stream with the
// envoyproxy types (the messages grpc-go itself decodes), for tests that compare Heureka's
// views (interop/tests/test_fleet_cluster.py) and for bench/fleet.py, which times the answers.
//
//	xds dump -server 127.0.0.1:PORT [-rounds N] NAME...
//
// Each round opens a new connection and stream and asks, in the order gRPC's resolver does,
// Listener, Cluster and ClusterLoadAssignment for every NAME, ACKing each answer. The last
// round's endpoints are printed as one JSON object: {"NAME": [{"address","port","health",
// "zone"}...]}; a NAME the server does not know is absent.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	endpointpb "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoverypb "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

const (
	listenerType   = "type.googleapis.com/envoy.config.listener.v3.Listener"
	clusterType    = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	assignmentType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

type dumpedEndpoint struct {
	Address string `json:"address"`
	Port    uint32 `json:"port"`
	Health  string `json:"health"`
	Zone    string `json:"zone"`
}

func runDump(args []string) error {
	fs := flag.NewFlagSet("dump", flag.ExitOnError)
	server := fs.String("server", "", "the xDS server, host:port (plain text)")
	rounds := fs.Int("rounds", 1, "fresh streams to open, one after the other")
	timeout := fs.Duration("timeout", 10*time.Second, "deadline of one round")
	_ = fs.Parse(args)
	names := fs.Args()
	if *server == "" || len(names) == 0 {
		return fmt.Errorf("usage: xds dump -server HOST:PORT [-rounds N] NAME...")
	}
	var last map[string][]dumpedEndpoint
	for i := 0; i < *rounds; i++ {
		got, err := dumpOnce(*server, names, *timeout)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		last = got
	}
	out, err := json.Marshal(last)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

func dumpOnce(server string, names []string, timeout time.Duration) (map[string][]dumpedEndpoint, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := grpc.NewClient(server, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stream, err := discoverypb.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	for _, typeURL := range []string{listenerType, clusterType} {
		if _, err := ask(stream, typeURL, names); err != nil {
			return nil, err
		}
	}
	resp, err := ask(stream, assignmentType, names)
	if err != nil {
		return nil, err
	}
	dumped := map[string][]dumpedEndpoint{}
	for _, resource := range resp.GetResources() {
		assignment := &endpointpb.ClusterLoadAssignment{}
		if err := proto.Unmarshal(resource.GetValue(), assignment); err != nil {
			return nil, err
		}
		list := []dumpedEndpoint{}
		for _, locality := range assignment.GetEndpoints() {
			for _, lb := range locality.GetLbEndpoints() {
				socket := lb.GetEndpoint().GetAddress().GetSocketAddress()
				list = append(list, dumpedEndpoint{
					Address: socket.GetAddress(),
					Port:    socket.GetPortValue(),
					Health:  lb.GetHealthStatus().String(),
					Zone:    locality.GetLocality().GetZone(),
				})
			}
		}
		dumped[assignment.GetClusterName()] = list
	}
	return dumped, nil
}

// ask subscribes to names of one type, waits for the answer and ACKs it.
func ask(stream discoverypb.AggregatedDiscoveryService_StreamAggregatedResourcesClient, typeURL string,
	names []string) (*discoverypb.DiscoveryResponse, error) {
	if err := stream.Send(&discoverypb.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names}); err != nil {
		return nil, err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", typeURL, err)
		}
		if resp.GetTypeUrl() != typeURL {
			continue
		}
		ack := &discoverypb.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names,
			VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce()}
		if err := stream.Send(ack); err != nil {
			return nil, err
		}
		return resp, nil
	}
}
