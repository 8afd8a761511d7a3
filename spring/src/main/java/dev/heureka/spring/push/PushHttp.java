package dev.heureka.spring.push;

import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.ssl.SSLContextBuilder;
import org.apache.hc.core5.util.Timeout;
import org.springframework.cloud.configuration.TlsProperties;
import org.springframework.core.io.Resource;

/**
 * The HTTP client of the push stream and its acknowledgements.
 *
 * <p>It is Apache HttpClient 5 (classic), built with the library's defaults, because the Eureka
 * client's own transport in Spring Cloud Netflix (RestClient over HttpComponents) is the same
 * library built the same way: both send the same {@code User-Agent}, and Heureka tells consumers
 * apart by address and identity ({@code DiscoveryIdentity-*} headers, else {@code User-Agent}).
 * So the node books this application's registry fetches and its push acknowledgements as one
 * consumer, and {@code heureka drain} sees it confirm a change as soon as the ack arrives. Do not
 * set a User-Agent here: it would split the application into two consumers.
 */
final class PushHttp implements AutoCloseable {

    /** How long a read may wait: more than the server's 15 s keep-alive comments, with margin. */
    static final Timeout READ_TIMEOUT = Timeout.ofSeconds(45);

    final CloseableHttpClient client;

    PushHttp(TlsProperties tls, int connectTimeoutSeconds) throws Exception {
        PoolingHttpClientConnectionManagerBuilder cm = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(4)
                .setMaxConnTotal(8)
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.ofSeconds(Math.max(1, connectTimeoutSeconds)))
                        .setSocketTimeout(READ_TIMEOUT)
                        .build());
        if (tls != null && tls.isEnabled()) {
            cm.setTlsSocketStrategy(new DefaultClientTlsStrategy(sslContext(tls)));
        }
        PoolingHttpClientConnectionManager manager = cm.build();
        this.client = HttpClients.custom()
                .setConnectionManager(manager)
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setResponseTimeout(READ_TIMEOUT)
                        .setRedirectsEnabled(false)
                        .build())
                // An event stream is read as it comes: no transparent gzip.
                .disableContentCompression()
                .disableAutomaticRetries()
                .evictIdleConnections(Timeout.of(30, TimeUnit.SECONDS))
                .build();
    }

    /** The SSL context of {@code eureka.client.tls.*}, as Spring Cloud Netflix builds its own. */
    static SSLContext sslContext(TlsProperties tls) throws Exception {
        SSLContextBuilder builder = SSLContextBuilder.create();
        if (tls.getKeyStore() != null) {
            KeyStore keyStore = load(tls.getKeyStore(), tls.getKeyStoreType(), tls.keyStorePassword());
            builder.loadKeyMaterial(keyStore, tls.keyPassword());
        }
        if (tls.getTrustStore() != null) {
            KeyStore trustStore =
                    load(tls.getTrustStore(), tls.getTrustStoreType(), tls.trustStorePassword());
            builder.loadTrustMaterial(trustStore, null);
        }
        return builder.build();
    }

    private static KeyStore load(Resource resource, String type, char[] password) throws Exception {
        KeyStore store = KeyStore.getInstance(type == null || type.isBlank() ? "PKCS12" : type);
        try (InputStream in = resource.getInputStream()) {
            store.load(in, password);
        }
        return store;
    }

    /** A service URL without its userinfo, with a path ending in {@code /}. */
    static URI withoutUserInfo(URI url) throws Exception {
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        if (!path.endsWith("/")) {
            path = path + "/";
        }
        return new URI(url.getScheme() + "://" + hostPort(url) + path);
    }

    private static String hostPort(URI url) {
        String host = url.getHost();
        if (host != null && host.indexOf(':') >= 0 && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return url.getPort() < 0 ? host : host + ":" + url.getPort();
    }

    /** {@code Basic ...} for a URL with userinfo (percent-decoded), else null. */
    static String basicAuth(URI url) {
        String userInfo = url.getRawUserInfo();
        if (userInfo == null || userInfo.isEmpty()) {
            return null;
        }
        int colon = userInfo.indexOf(':');
        String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
        String password = colon < 0 ? "" : userInfo.substring(colon + 1);
        String pair = URLDecoder.decode(user.replace("+", "%2B"), StandardCharsets.UTF_8) + ":"
                + URLDecoder.decode(password.replace("+", "%2B"), StandardCharsets.UTF_8);
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws Exception {
        client.close();
    }
}
