package dev.heureka.spring.push.it.app;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestTemplate;

/**
 * The consumer application of the tests: an ordinary Spring Boot application with the Eureka
 * client starter, a {@code @LoadBalanced} RestTemplate, and this add-on on its class path.
 *
 * <p>Not a {@code @LoadBalanced RestClient.Builder} bean: Spring Cloud Netflix 2025.1 builds the
 * Eureka client's own transport from the application's {@code RestClient.Builder} bean, and a
 * load-balanced one would resolve the Eureka server's host name as a service id.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class ConsumerApp {

    @Bean
    @LoadBalanced
    RestTemplate loadBalancedRestTemplate() {
        return new RestTemplate();
    }
}
