package interop.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A plain Spring Boot application with the Eureka client starter. Its HTTP endpoints expose what
 * Spring's DiscoveryClient sees, so tests can ask it "who do you know?".
 */
@SpringBootApplication
@RestController
public class ClientApp {
    private final DiscoveryClient discovery;

    ClientApp(DiscoveryClient discovery) {
        this.discovery = discovery;
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

    public static void main(String[] args) {
        SpringApplication.run(ClientApp.class, args);
    }
}
