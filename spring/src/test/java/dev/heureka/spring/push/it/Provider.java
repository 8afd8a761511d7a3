package dev.heureka.spring.push.it;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/** A provider instance: an HTTP server on 127.0.0.1 answering every request with its id. */
public final class Provider implements AutoCloseable {

    public final String id;
    public final int port;
    private final HttpServer server;

    public Provider(String id) throws IOException {
        this.id = id;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/", exchange -> {
            byte[] body = id.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        this.port = server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
