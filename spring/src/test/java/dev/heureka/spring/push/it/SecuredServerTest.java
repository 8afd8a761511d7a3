package dev.heureka.spring.push.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heureka.spring.push.PushView;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node serving HTTPS with a certificate of a test CA and asking for Basic credentials: the
 * consumer reaches the stream and the acks with {@code eureka.client.tls.*} and the credentials
 * in its service URL, as its Eureka client reaches the registry.
 */
class SecuredServerTest {

    private static final String STORE_PASSWORD = "changeit";

    private Heureka heureka;
    private Consumer consumer;

    @AfterEach
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (heureka != null) {
            heureka.close();
        }
    }

    private static void keytool(String... args) throws Exception {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> command = new java.util.ArrayList<>(List.of(keytool.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + output);
        }
    }

    private static SSLContext trusting(Path trustStore) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(trustStore)) {
            store.load(in, STORE_PASSWORD.toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    @Test
    void aConsumerFollowsAnHttpsNodeWithBasicCredentialsThroughEurekaClientTlsAndItsServiceUrl() throws Exception {
        Path dir = Files.createTempDirectory("heureka-tls");
        Path server = dir.resolve("server.p12");
        Path trust = dir.resolve("trust.p12");
        Path cert = dir.resolve("server.pem");
        keytool("-genkeypair", "-alias", "heureka", "-keyalg", "RSA", "-keysize", "2048",
                "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", server.toString(), "-storepass", STORE_PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "heureka", "-keystore", server.toString(),
                "-storepass", STORE_PASSWORD, "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "heureka", "-file", cert.toString(),
                "-storetype", "PKCS12", "-keystore", trust.toString(), "-storepass", STORE_PASSWORD);

        heureka = Heureka.start(new Heureka.Access(trusting(trust), "eu", "s3cret"),
                "--server.ssl.key-store=" + server,
                "--server.ssl.key-store-password=" + STORE_PASSWORD,
                "--spring.security.user.name=eu",
                "--spring.security.user.password=s3cret");
        heureka.register("TLS-APP", "tls-1", 9201);
        heureka.register("TLS-APP", "tls-2", 9202);

        consumer = Consumer.start(heureka.serviceUrl(),
                "eureka.client.tls.enabled=true",
                "eureka.client.tls.trust-store=file:" + trust,
                "eureka.client.tls.trust-store-password=" + STORE_PASSWORD,
                "eureka.client.tls.trust-store-type=PKCS12");
        PushView view = consumer.context.getBean(PushView.class);
        Await.until(Duration.ofSeconds(10), "the consumer follows the push", view::isLive);
        assertEquals(List.of("tls-1", "tls-2"), consumer.discovered("tls-app"));

        heureka.setStatus("TLS-APP", "tls-1", "OUT_OF_SERVICE");
        Await.until(Duration.ofSeconds(1), "discovery drops tls-1",
                () -> consumer.discovered("tls-app"), List.of("tls-2")::equals);
        long held = view.version();
        Await.until(Duration.ofSeconds(1), "the node books the ack", () -> {
            try {
                return heureka.consumers().stream().anyMatch(r -> r.version() >= held);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(heureka.base.startsWith("https://"));
    }
}
