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

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    public final int port;
    public final String base;
    private final Process process;
    private final Path log;

    private Heureka(int port, Process process, Path log) {
        this.port = port;
        this.base = "http://127.0.0.1:" + port + "/eureka/";
        this.process = process;
        this.log = log;
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
            Heureka node = new Heureka(port, process, log);
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
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path))
                        .header("Accept", "application/json")
                        .timeout(Duration.ofSeconds(10))
                        .GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private int send(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .header("Accept", "application/json")
                .timeout(Duration.ofSeconds(10));
        if (body == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private void expect(int status, String method, String path, String body) throws Exception {
        int got = send(method, path, body);
        if (got / 100 != 2) {
            throw new IllegalStateException(method + " " + path + " answered " + got + " (wanted " + status + ")");
        }
    }

    /** Registers an UP instance of {@code app} (its VIP address the lower-case name) at {@code port}. */
    public void register(String app, String id, int port) throws Exception {
        String body = "{\"instance\":{\"instanceId\":\"" + id + "\",\"hostName\":\"127.0.0.1\",\"app\":\"" + app + "\","
                + "\"ipAddr\":\"127.0.0.1\",\"status\":\"UP\",\"port\":{\"$\":" + port + ",\"@enabled\":\"true\"},"
                + "\"securePort\":{\"$\":443,\"@enabled\":\"false\"},"
                + "\"vipAddress\":\"" + app.toLowerCase() + "\",\"secureVipAddress\":\"" + app.toLowerCase() + "\","
                + "\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\",\"name\":\"MyOwn\"},"
                + "\"metadata\":{\"role\":\"provider\"},"
                + "\"leaseInfo\":{\"renewalIntervalInSecs\":30,\"durationInSecs\":900}}}";
        expect(204, "POST", "apps/" + app, body);
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
