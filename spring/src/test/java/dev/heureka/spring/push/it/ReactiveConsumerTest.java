package dev.heureka.spring.push.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.heureka.spring.push.PushEurekaReactiveDiscoveryClient;
import dev.heureka.spring.push.PushView;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.netflix.eureka.reactive.EurekaReactiveDiscoveryClient;

/**
 * A consumer with WebClient on its class path (run by the "reactive" surefire execution): Spring
 * Cloud gives it the reactive Eureka DiscoveryClient, and LoadBalancer reads instances through
 * it, as in Spring Cloud Gateway. Both follow the push.
 */
class ReactiveConsumerTest {

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

    @Test
    void theReactiveDiscoveryClientAndTheLoadBalancerOnItFollowTheStatusOfAnInstanceWithinOneSecond() throws Exception {
        heureka = Heureka.start();
        consumer = Consumer.start(heureka.base);
        assertInstanceOf(PushEurekaReactiveDiscoveryClient.class,
                consumer.context.getBean(EurekaReactiveDiscoveryClient.class));
        PushView view = consumer.context.getBean(PushView.class);
        Await.until(Duration.ofSeconds(10), "the consumer follows the push", view::isLive);

        heureka.register("RX-APP", "rx-1", 9301);
        heureka.register("RX-APP", "rx-2", 9302);
        List<String> both = List.of("rx-1", "rx-2");
        Duration within = Duration.ofSeconds(1);
        Await.until(within, "discovered", () -> consumer.reactiveDiscovered("rx-app"), both::equals);
        Await.until(within, "load-balanced", () -> consumer.loadBalanced("rx-app"), both::equals);

        heureka.setStatus("RX-APP", "rx-2", "OUT_OF_SERVICE");
        Await.until(within, "discovery drops rx-2", () -> consumer.reactiveDiscovered("rx-app"), List.of("rx-1")::equals);
        Await.until(within, "the LoadBalancer drops rx-2", () -> consumer.loadBalanced("rx-app"), List.of("rx-1")::equals);
        assertEquals("rx-1", consumer.chosen("rx-app"));

        heureka.removeOverride("RX-APP", "rx-2");
        Await.until(within, "rx-2 back", () -> consumer.loadBalanced("rx-app"), both::equals);
    }
}
