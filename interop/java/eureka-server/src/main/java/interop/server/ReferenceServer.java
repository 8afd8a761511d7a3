package interop.server;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/** The real Spring Cloud Eureka server, used as the reference in differential tests and benchmarks. */
@SpringBootApplication
@EnableEurekaServer
public class ReferenceServer {
    public static void main(String[] args) {
        SpringApplication.run(ReferenceServer.class, args);
    }
}
