package dev.heureka.spring.push;

import static dev.heureka.spring.push.PushViewTest.app;
import static dev.heureka.spring.push.PushViewTest.doc;
import static dev.heureka.spring.push.PushViewTest.instance;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The stream client against a scripted push server on 127.0.0.1: what it sends (credentials,
 * Last-Event-ID, acks) and how it reconnects. The real server is in the it package's tests.
 */
class PushClientTest {

    /** A request the fake server received. */
    record Request(String path, String query, String authorization, String lastEventId) {
    }

    private final BlockingQueue<Request> streams = new LinkedBlockingQueue<>();
    private final BlockingQueue<Request> acks = new LinkedBlockingQueue<>();
    /** What each successive stream sends; {@code null} body: answer 404. */
    private final BlockingQueue<Script> scripts = new LinkedBlockingQueue<>();
    private final CountDownLatch done = new CountDownLatch(1);
    /** Holds the acks' answers until opened (open unless a test closes it). */
    private volatile CountDownLatch ackGate = new CountDownLatch(0);
    private HttpServer server;
    private PushClient client;
    private final PushView view = new PushView(true);

    record Script(String body, boolean keepOpen) {
    }

    private String start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.createContext("/eureka/push", this::stream);
        server.createContext("/eureka/push/ack", exchange -> {
            acks.add(request(exchange));
            try {
                ackGate.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        return "127.0.0.1:" + server.getAddress().getPort() + "/eureka/";
    }

    private static Request request(HttpExchange exchange) {
        return new Request(exchange.getRequestURI().getPath(), exchange.getRequestURI().getQuery(),
                exchange.getRequestHeaders().getFirst("Authorization"),
                exchange.getRequestHeaders().getFirst("Last-Event-ID"));
    }

    private void stream(HttpExchange exchange) throws IOException {
        streams.add(request(exchange));
        Script script = scripts.poll();
        if (script == null || script.body() == null) {
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
            return;
        }
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        out.write(script.body().getBytes(StandardCharsets.UTF_8));
        out.flush();
        if (script.keepOpen()) {
            try {
                done.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        exchange.close();
    }

    private void follow(String... serviceUrls) throws Exception {
        client = new PushClient(view, () -> List.of(serviceUrls), new PushHttp(null, 2));
        client.start();
    }

    @AfterEach
    void stop() {
        done.countDown();
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    private static String message(String event, String id, String data) {
        return "event: " + event + "\nid: " + id + "\ndata: " + data + "\n\n";
    }

    private static final String SNAPSHOT = doc(5, "UP_1_", app("ORDERS", instance("ORDERS", "o1", "orders", "UP", null)));
    private static final String DELTA = doc(6, "UP_2_", app("ORDERS", instance("ORDERS", "o2", "orders", "UP", "ADDED")));
    private static final String BAD_DELTA = doc(6, "UP_9_", app("ORDERS", instance("ORDERS", "o2", "orders", "UP", "ADDED")));

    private static <T> T next(BlockingQueue<T> queue) throws InterruptedException {
        T value = queue.poll(10, TimeUnit.SECONDS);
        assertNotNull(value, "nothing arrived within 10 s");
        return value;
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 5 s");
            }
            Thread.sleep(20);
        }
    }

    @Test
    void theServiceUrlsCredentialsGoWithTheStreamAndTheAckOfTheAppliedVersion() throws Exception {
        scripts.add(new Script(": keep-alive\n\n" + message("snapshot", "n-0", SNAPSHOT), true));
        String hostPath = start();
        follow("http://user:p%40ss@" + hostPath);
        String basic = "Basic " + Base64.getEncoder().encodeToString("user:p@ss".getBytes(StandardCharsets.UTF_8));
        Request stream = next(streams);
        assertEquals(basic, stream.authorization());
        assertNull(stream.lastEventId());
        Request ack = next(acks);
        assertEquals("/eureka/push/ack", ack.path());
        assertEquals("version=5", ack.query());
        assertEquals(basic, ack.authorization());
        assertEquals(List.of("o1"), view.live().instances("orders").stream().map(i -> i.getInstanceId()).toList());
    }

    @Test
    void aStreamThatEndsIsResumedWithTheLastAppliedIdAsLastEventId() throws Exception {
        scripts.add(new Script(message("snapshot", "n-0", SNAPSHOT) + message("delta", "n-1", DELTA), false));
        scripts.add(new Script("", true));
        follow("http://" + start());
        assertNull(next(streams).lastEventId());
        assertEquals("n-1", next(streams).lastEventId());
        waitFor(view::isLive);
        assertEquals(1, view.snapshotsApplied());
        assertEquals(2, view.live().instances("orders").size());
    }

    @Test
    void aDeltaThatDisagreesWithTheCopyMakesItReconnectWithoutLastEventIdForANewSnapshot() throws Exception {
        scripts.add(new Script(message("snapshot", "n-0", SNAPSHOT) + message("delta", "n-1", BAD_DELTA), true));
        scripts.add(new Script(message("snapshot", "n-2", doc(6, "UP_2_", app("ORDERS",
                instance("ORDERS", "o1", "orders", "UP", null), instance("ORDERS", "o2", "orders", "UP", null)))), true));
        follow("http://" + start());
        next(streams);
        Request again = next(streams);
        assertNull(again.lastEventId());
        waitFor(() -> view.snapshotsApplied() == 2 && view.isLive());
        assertEquals(6L, view.version());
        assertEquals(2, view.live().instances("orders").size());
    }

    @Test
    void aServerWithoutPushLeavesTheViewNotLiveAndIsNotAskedAgainAtOnce() throws Exception {
        follow("http://" + start());
        next(streams);
        assertNull(streams.poll(1500, TimeUnit.MILLISECONDS), "asked again within 1.5 s of a 404");
        assertNull(view.live());
    }

    @Test
    void afterAFailureTheNextServiceUrlIsTried() throws Exception {
        scripts.add(new Script(message("snapshot", "n-0", SNAPSHOT), true));
        String good = start();
        int dead;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            dead = socket.getLocalPort();
        }
        follow("http://127.0.0.1:" + dead + "/eureka/", "http://" + good);
        next(streams);
        assertEquals("version=5", next(acks).query());
    }

    @Test
    void deltasArrivingWhileAnAckIsInFlightAreAppliedAtOnceAndAcknowledgedOnceWithTheNewestVersion() throws Exception {
        ackGate = new CountDownLatch(1);
        StringBuilder body = new StringBuilder(message("snapshot", "n-0", SNAPSHOT));
        for (int v = 6; v <= 8; v++) {
            body.append(message("delta", "n-" + (v - 5), doc(v, "UP_" + (v - 4) + "_",
                    app("ORDERS", instance("ORDERS", "o" + (v - 4), "orders", "UP", "ADDED")))));
        }
        scripts.add(new Script(body.toString(), true));
        follow("http://" + start());
        // The first ack (of whichever version was newest when the ack thread took it) is held.
        String first = next(acks).query();
        waitFor(() -> Long.valueOf(8).equals(view.version()));
        ackGate.countDown();
        if (!first.equals("version=8")) {
            // Then one more, of the newest: none of the versions applied in between.
            assertEquals("version=8", next(acks).query());
        }
        assertNull(acks.poll(500, TimeUnit.MILLISECONDS), "one ack in flight at a time, then the newest only");
    }
}
