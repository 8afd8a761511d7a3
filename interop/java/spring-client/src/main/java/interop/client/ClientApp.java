package interop.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.InstanceInfo.InstanceStatus;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestTemplate;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A plain Spring Boot application with the Eureka client starter. Its HTTP endpoints expose what
 * Spring's DiscoveryClient sees, so tests can ask it "who do you know?".
 *
 * <p>For the health-check tests and the freshness benchmark it can also: answer {@code /whoami}
 * (a provider's reply names its port), make its actuator health DOWN or UP ({@code POST
 * /interop/health?up=false}) without touching the status it reports to Eureka, set the status it
 * reports itself ({@code POST /interop/status?value=DOWN}), and call another application by name
 * in a loop through Spring Cloud LoadBalancer ({@code POST /calls/start?service=NAME}, read back
 * with {@code GET /calls}).
 */
@SpringBootApplication
@RestController
public class ClientApp {
    private final DiscoveryClient discovery;
    private final ApplicationInfoManager infoManager;
    private final RestTemplate loadBalanced;
    private final Switch health;
    private final Calls calls = new Calls();

    ClientApp(DiscoveryClient discovery, ApplicationInfoManager infoManager,
              @LoadBalanced RestTemplate loadBalanced, Switch health) {
        this.discovery = discovery;
        this.infoManager = infoManager;
        this.loadBalanced = loadBalanced;
        this.health = health;
    }

    /**
     * A RestTemplate that resolves service names through Spring Cloud LoadBalancer (default
     * settings: instances from the DiscoveryClient, cached 35 s). A RestTemplate, not a
     * RestClient.Builder bean: that would replace the builder the Eureka client's own transport
     * is built from.
     */
    @Bean
    @LoadBalanced
    static RestTemplate loadBalancedRestTemplate() {
        SimpleClientHttpRequestFactory factory = new SimpleClientHttpRequestFactory();
        factory.setConnectTimeout(Duration.ofSeconds(2));
        factory.setReadTimeout(Duration.ofSeconds(5));
        return new RestTemplate(factory);
    }

    /** The actuator health this app answers on /actuator/health (its registered healthCheckUrl). */
    static final class Switch implements HealthIndicator {
        volatile boolean up = true;

        @Override
        public Health health() {
            return up ? Health.up().build() : Health.down().withDetail("interop", "switched off").build();
        }
    }

    @Bean
    static Switch interopHealth() {
        return new Switch();
    }

    @GetMapping("/services")
    public List<String> services() {
        return discovery.getServices();
    }

    @GetMapping("/instances/{serviceId}")
    public List<Map<String, Object>> instances(@PathVariable String serviceId) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (ServiceInstance s : discovery.getInstances(serviceId)) {
            out.add(Map.of(
                    "instanceId", String.valueOf(s.getInstanceId()),
                    "serviceId", s.getServiceId(),
                    "host", s.getHost(),
                    "port", s.getPort(),
                    "secure", s.isSecure(),
                    "uri", s.getUri().toString(),
                    "metadata", s.getMetadata()));
        }
        return out;
    }

    @GetMapping("/whoami")
    public Map<String, Object> whoami(HttpServletRequest request) {
        return Map.of("app", infoManager.getInfo().getAppName(), "port", request.getLocalPort(),
                "instanceId", infoManager.getInfo().getInstanceId());
    }

    @PostMapping("/interop/health")
    public Map<String, Object> setHealth(@RequestParam boolean up) {
        health.up = up;
        return Map.of("up", up);
    }

    @PostMapping("/interop/status")
    public Map<String, Object> setOwnStatus(@RequestParam String value) {
        infoManager.setInstanceStatus(InstanceStatus.toEnum(value));
        return Map.of("status", infoManager.getInfo().getStatus().name());
    }

    @PostMapping("/calls/start")
    public Map<String, Object> startCalls(@RequestParam String service,
                                          @RequestParam(defaultValue = "100") long intervalMs,
                                          @RequestParam(defaultValue = "/whoami") String path) {
        calls.start(loadBalanced, "http://" + service + path, intervalMs);
        return Map.of("started", true);
    }

    @GetMapping("/calls")
    public Map<String, Object> callsSoFar() {
        return calls.summary();
    }

    /**
     * One thread calling a URL by service name every intervalMs; per target (host:port) the
     * number of calls, errors and the time of the last of each (epoch ms). The target is what the
     * load balancer chose: an interceptor placed after Spring's load-balancing one reads the
     * rewritten request's address (a call that never got one, e.g. "No instances available",
     * counts under "none").
     */
    static final class Calls {
        private final ThreadLocal<String> chosen = new ThreadLocal<>();
        private final Map<String, long[]> byTarget = new LinkedHashMap<>();   // count, last, errors, lastError
        private long total;
        private long errors;
        private long lastErrorMs;
        private String lastError = "";
        private Thread thread;

        synchronized void start(RestTemplate rest, String url, long intervalMs) {
            if (thread != null) {
                return;
            }
            // appended now, after the load balancer's interceptor (added once the context is up)
            List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>(rest.getInterceptors());
            interceptors.add((request, body, execution) -> {
                chosen.set(request.getURI().getHost() + ":" + request.getURI().getPort());
                return execution.execute(request, body);
            });
            rest.setInterceptors(interceptors);
            thread = new Thread(() -> {
                while (true) {
                    call(rest, url);
                    try {
                        Thread.sleep(intervalMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "interop-calls");
            thread.setDaemon(true);
            thread.start();
        }

        private void call(RestTemplate rest, String url) {
            chosen.set("none");
            try {
                rest.getForObject(url, Map.class);
                record(chosen.get(), null);
            } catch (RuntimeException e) {
                record(chosen.get(), e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }

        private synchronized void record(String target, String error) {
            long now = System.currentTimeMillis();
            long[] t = byTarget.computeIfAbsent(target, k -> new long[4]);
            t[0]++;
            t[1] = now;
            total++;
            if (error != null) {
                t[2]++;
                t[3] = now;
                errors++;
                lastErrorMs = now;
                lastError = error;
            }
        }

        synchronized Map<String, Object> summary() {
            Map<String, Object> targets = new LinkedHashMap<>();
            byTarget.forEach((k, t) -> targets.put(k, Map.of("calls", t[0], "lastMs", t[1],
                    "errors", t[2], "lastErrorMs", t[3])));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("running", thread != null);
            out.put("total", total);
            out.put("errors", errors);
            out.put("lastErrorMs", lastErrorMs);
            out.put("lastError", lastError);
            out.put("nowMs", System.currentTimeMillis());
            out.put("targets", targets);
            return out;
        }
    }

    public static void main(String[] args) {
        SpringApplication.run(ClientApp.class, args);
    }
}
