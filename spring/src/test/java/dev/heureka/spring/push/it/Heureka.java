package dev.heureka.spring.push.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real Heureka server for the tests: the binary of {@code HEUREKA_BIN} (else
 * {@code ../target/release/heureka}), on a free port of 127.0.0.1, and a plain HTTP client of its
 * Eureka API for registering and changing provider instances.
 */
public final class Heureka implements AutoCloseable {

    /** How the tests reach a node: TLS trusting a test CA, Basic credentials; or plain HTTP. */
    public record Access(javax.net.ssl.SSLContext tls, String user, String password) {
        static final Access PLAIN = new Access(null, null, null);
    }

    public final int port;
    /** The Eureka base URL without credentials, ending in {@code /}. */
    public final String base;
    private final Process process;
    private final Path log;
    private final Access access;
    private final HttpClient http;

    private Heureka(int port, Process process, Path log, Access access) {
        this.port = port;
        this.base = (access.tls() == null ? "http" : "https") + "://127.0.0.1:" + port + "/eureka/";
        this.process = process;
        this.log = log;
        this.access = access;
        HttpClient.Builder builder = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .version(HttpClient.Version.HTTP_1_1);
        if (access.tls() != null) {
            builder.sslContext(access.tls());
        }
        this.http = builder.build();
    }

    /** The base URL with the credentials in it, as an application's service URL has them. */
    public String serviceUrl() {
        if (access.user() == null) {
            return base;
        }
        return base.replace("://", "://" + access.user() + ":" + access.password() + "@");
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .header("Accept", "application/json")
                .timeout(Duration.ofSeconds(10));
        if (access.user() != null) {
            request.header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                    (access.user() + ":" + access.password()).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        return request;
    }

    public static Path binary() {
        String env = System.getenv("HEUREKA_BIN");
        if (env == null || env.isBlank()) {
            env = System.getenv("HEUREKA_BIN_DEFAULT");
        }
        if (env == null || env.isBlank()) {
            env = "../target/release/heureka";
        }
        Path path = Path.of(env).toAbsolutePath().normalize();
        if (!Files.isExecutable(path)) {
            throw new IllegalStateException("no Heureka binary at " + path + " (set HEUREKA_BIN)");
        }
        return path;
    }

    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Starts a node; {@code extra} are more {@code --key=value} settings. */
    public static Heureka start(String... extra) throws Exception {
        return start(Access.PLAIN, extra);
    }

    /** Starts a node reached with {@code access}; {@code extra} sets it up to match. */
    public static Heureka start(Access access, String... extra) throws Exception {
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            List<String> command = new ArrayList<>(List.of(
                    binary().toString(),
                    "--server.port=" + port,
                    "--server.address=127.0.0.1",
                    "--eureka.server.enable-self-preservation=false"));
            command.addAll(List.of(extra));
            Path dir = Files.createDirectories(Path.of("target", "heureka-logs"));
            Path log = dir.resolve("heureka-" + port + ".log");
            Process process = new ProcessBuilder(command)
                    .directory(Files.createTempDirectory("heureka").toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            Heureka node = new Heureka(port, process, log, access);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline && process.isAlive()) {
                try {
                    if (node.get("apps").statusCode() == 200) {
                        return node;
                    }
                } catch (IOException e) {
                    last = e;
                }
                Thread.sleep(25);
            }
            node.close();
        }
        throw new IllegalStateException("Heureka did not start", last);
    }

    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private int send(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = request(path);
        if (body == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private void expect(int status, String method, String path, String body) throws Exception {
        int got = send(method, path, body);
        if (got / 100 != 2) {
            throw new IllegalStateException(method + " " + path + " answered " + got + " (wanted " + status + ")");
        }
    }

    /** Registers an UP instance of {@code app} (its VIP address the lower-case name) at {@code port}. */
    public void register(String app, String id, int port) throws Exception {
        register(app, id, port, 900);
    }

    /** Registers as above with a lease of {@code leaseSeconds} (never renewed: it expires then). */
    public void register(String app, String id, int port, int leaseSeconds) throws Exception {
        String body = "{\"instance\":{\"instanceId\":\"" + id + "\",\"hostName\":\"127.0.0.1\",\"app\":\"" + app + "\","
                + "\"ipAddr\":\"127.0.0.1\",\"status\":\"UP\",\"port\":{\"$\":" + port + ",\"@enabled\":\"true\"},"
                + "\"securePort\":{\"$\":443,\"@enabled\":\"false\"},"
                + "\"vipAddress\":\"" + app.toLowerCase() + "\",\"secureVipAddress\":\"" + app.toLowerCase() + "\","
                + "\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\",\"name\":\"MyOwn\"},"
                + "\"metadata\":{\"role\":\"provider\"},"
                + "\"leaseInfo\":{\"renewalIntervalInSecs\":30,\"durationInSecs\":" + leaseSeconds + "}}}";
        expect(204, "POST", "apps/" + app, body);
    }

    /** Whether the node still has the instance ({@code GET {base}/apps/APP/ID}). */
    public boolean has(String app, String id) throws Exception {
        return get("apps/" + app + "/" + id).statusCode() == 200;
    }

    public void setStatus(String app, String id, String status) throws Exception {
        expect(200, "PUT", "apps/" + app + "/" + id + "/status?value=" + status, null);
    }

    public void removeOverride(String app, String id) throws Exception {
        // value=UP: the instance is UP again at once (without it Eureka makes it UNKNOWN until
        // it registers again, which these heartbeat-less test instances never do).
        expect(200, "DELETE", "apps/" + app + "/" + id + "/status?value=UP", null);
    }

    public void cancel(String app, String id) throws Exception {
        expect(200, "DELETE", "apps/" + app + "/" + id, null);
    }

    /** The node's registry version ({@code version} of {@code GET {base}/consumers}). */
    public long version() throws Exception {
        Matcher m = Pattern.compile("^\\{\"node\":\"[^\"]*\",\"version\":(\\d+)").matcher(get("consumers").body());
        if (!m.find()) {
            throw new IllegalStateException("no version in consumers");
        }
        return Long.parseLong(m.group(1));
    }

    /** The consumers table, as (address, agent, version, lastFull) rows. */
    public List<ConsumerRow> consumers() throws Exception {
        String body = get("consumers").body();
        int start = body.indexOf("\"consumers\":[");
        int end = body.indexOf("]", start);
        List<ConsumerRow> rows = new ArrayList<>();
        if (start < 0 || end < 0) {
            return rows;
        }
        Matcher m = Pattern.compile("\\{[^{}]*\\}").matcher(body.substring(start, end));
        while (m.find()) {
            String row = m.group();
            rows.add(new ConsumerRow(field(row, "address"), field(row, "agent"),
                    Long.parseLong(field(row, "version")), field(row, "lastFull")));
        }
        return rows;
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"([^\"]*)\"|([^,}]*))").matcher(json);
        if (!m.find()) {
            return null;
        }
        return m.group(2) != null ? m.group(2) : m.group(3);
    }

    public record ConsumerRow(String address, String agent, long version, String lastFull) {
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

}
