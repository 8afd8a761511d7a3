package dev.heureka.spring.push.it;

import dev.heureka.spring.push.it.app.ConsumerApp;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestTemplate;

/** A running consumer application (a Spring Boot context, no web server) of one Eureka URL. */
public final class Consumer implements AutoCloseable {

    public final ConfigurableApplicationContext context;

    private Consumer(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /**
     * Starts the consumer against {@code serviceUrl} with Spring's defaults (registry fetch every
     * 30 s, LoadBalancer cache 35 s); {@code extra} are more {@code key=value} properties.
     */
    public static Consumer start(String serviceUrl, String... extra) {
        Map<String, Object> props = new TreeMap<>();
        props.put("spring.application.name", "consumer");
        props.put("spring.main.banner-mode", "off");
        props.put("eureka.client.service-url.defaultZone", serviceUrl);
        props.put("eureka.client.register-with-eureka", "false");
        props.put("eureka.instance.hostname", "127.0.0.1");
        props.put("logging.level.dev.heureka", "DEBUG");
        List<String> args = new ArrayList<>();
        for (String kv : extra) {
            args.add("--" + kv);
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ConsumerApp.class)
                .web(WebApplicationType.NONE)
                .properties(props)
                .run(args.toArray(String[]::new));
        return new Consumer(context);
    }

    public DiscoveryClient discovery() {
        return context.getBean(DiscoveryClient.class);
    }

    /** The instance ids DiscoveryClient answers for {@code serviceId}, sorted. */
    public List<String> discovered(String serviceId) {
        return ids(discovery().getInstances(serviceId));
    }

    /** The instance ids Spring Cloud's reactive (composite) DiscoveryClient answers, sorted. */
    public List<String> reactiveDiscovered(String serviceId) {
        List<ServiceInstance> list = context.getBean(
                        org.springframework.cloud.client.discovery.composite.reactive.ReactiveCompositeDiscoveryClient.class)
                .getInstances(serviceId).collectList().block(java.time.Duration.ofSeconds(5));
        return ids(list == null ? List.of() : list);
    }

    /** The instance ids Spring Cloud LoadBalancer's (cached) supplier holds for {@code serviceId}. */
    public List<String> loadBalanced(String serviceId) {
        ServiceInstanceListSupplier supplier = context.getBean(LoadBalancerClientFactory.class)
                .getInstance(serviceId, ServiceInstanceListSupplier.class);
        List<ServiceInstance> list = supplier.get().blockFirst(java.time.Duration.ofSeconds(5));
        return ids(list == null ? List.of() : list);
    }

    /** The instance LoadBalancerClient.choose picks, or null. */
    public String chosen(String serviceId) {
        ServiceInstance instance = context.getBean(LoadBalancerClient.class).choose(serviceId);
        return instance == null ? null : instance.getInstanceId();
    }

    /** Calls {@code http://serviceId/} through the @LoadBalanced RestTemplate: the provider's id. */
    public String call(String serviceId) {
        return context.getBean(RestTemplate.class).getForObject("http://" + serviceId + "/", String.class);
    }

    private static List<String> ids(List<ServiceInstance> instances) {
        return instances.stream().map(ServiceInstance::getInstanceId).sorted().toList();
    }

    @Override
    public void close() {
        context.close();
    }
}
