package dev.heureka.spring.push.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heureka.spring.push.PushEurekaDiscoveryClient;
import dev.heureka.spring.push.PushView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;
import org.springframework.context.ApplicationListener;

/**
 * A Spring Boot consumer with the add-on, of a real Heureka with push, its registry fetch at
 * Spring's default 30 s and its LoadBalancer cache at the default 35 s: every change below must
 * reach its DiscoveryClient and LoadBalancer within a second, which only the push can do. One
 * node and one consumer for the class; each test has applications of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PushFollowingTest {

    private static final Duration WITHIN = Duration.ofSeconds(1);

    private Heureka heureka;
    private Consumer consumer;
    private final AtomicInteger pushHeartbeats = new AtomicInteger();
    private final List<Provider> providers = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        // Evictions every 250 ms, for the test of an expired lease (the others' leases are long).
        heureka = Heureka.start("--eureka.server.eviction-interval-timer-in-ms=250");
        consumer = Consumer.start(heureka.base);
        consumer.context.addApplicationListener((ApplicationListener<HeartbeatEvent>) event -> {
            if (String.valueOf(event.getValue()).startsWith("heureka-push-")) {
                pushHeartbeats.incrementAndGet();
            }
        });
        PushView view = consumer.context.getBean(PushView.class);
        Await.until(Duration.ofSeconds(10), "the consumer follows the push", view::isLive);
    }

    @AfterAll
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (heureka != null) {
            heureka.close();
        }
    }

    @AfterEach
    void stopProviders() {
        providers.forEach(Provider::close);
        providers.clear();
    }

    private Provider provider(String app, String id) throws Exception {
        Provider provider = new Provider(id);
        providers.add(provider);
        heureka.register(app, id, provider.port);
        return provider;
    }

    /** Registers the instances and waits until discovery and the LoadBalancer (its cache warm) hold them. */
    private void running(String app, String... ids) throws Exception {
        for (String id : ids) {
            provider(app, id);
        }
        List<String> all = List.of(ids).stream().sorted().toList();
        String service = app.toLowerCase();
        Await.until(WITHIN, "discovered " + all, () -> consumer.discovered(service), all::equals);
        Await.until(WITHIN, "load-balanced " + all, () -> consumer.loadBalanced(service), all::equals);
    }

    private void gone(String service, List<String> left) {
        Await.until(WITHIN, "discovery holds only " + left, () -> consumer.discovered(service), left::equals);
        Await.until(WITHIN, "the LoadBalancer holds only " + left, () -> consumer.loadBalanced(service), left::equals);
    }

    @Test
    void theDiscoveryClientBeanIsStillAEurekaDiscoveryClient() {
        // This run is the blocking one (no WebClient, so no reactive discovery): LoadBalancer
        // reads the blocking DiscoveryClient. ReactiveConsumerTest covers the other.
        assertTrue(consumer.context.getBeansOfType(
                org.springframework.cloud.client.discovery.ReactiveDiscoveryClient.class).isEmpty());
        assertInstanceOf(EurekaDiscoveryClient.class,
                consumer.context.getBean("discoveryClient"));
        assertInstanceOf(PushEurekaDiscoveryClient.class,
                consumer.context.getBean("discoveryClient"));
    }

    @Test
    void anInstanceTakenOutOfServiceIsNeitherDiscoveredNorCalledWithinOneSecond() throws Exception {
        running("OOS-APP", "oos-1", "oos-2");
        heureka.setStatus("OOS-APP", "oos-2", "OUT_OF_SERVICE");
        gone("oos-app", List.of("oos-1"));
        for (int i = 0; i < 4; i++) {
            assertEquals("oos-1", consumer.chosen("oos-app"));
            assertEquals("oos-1", consumer.call("oos-app"));
        }
    }

    @Test
    void aCancelledInstanceIsNeitherDiscoveredNorCalledWithinOneSecond() throws Exception {
        running("CANCEL-APP", "cancel-1", "cancel-2");
        heureka.cancel("CANCEL-APP", "cancel-1");
        gone("cancel-app", List.of("cancel-2"));
        for (int i = 0; i < 4; i++) {
            assertEquals("cancel-2", consumer.call("cancel-app"));
        }
    }

    @Test
    void anInstanceMarkedDownIsNeitherDiscoveredNorChosenWithinOneSecond() throws Exception {
        running("DOWN-APP", "down-1", "down-2");
        heureka.setStatus("DOWN-APP", "down-1", "DOWN");
        gone("down-app", List.of("down-2"));
        assertEquals("down-2", consumer.chosen("down-app"));
    }

    @Test
    void anEvictedInstanceIsNeitherDiscoveredNorCalledWithinOneSecondOfItsEviction() throws Exception {
        running("EVICT-APP", "evict-1");
        Provider expiring = new Provider("evict-2");
        providers.add(expiring);
        heureka.register("EVICT-APP", "evict-2", expiring.port, 1);
        List<String> both = List.of("evict-1", "evict-2");
        Await.until(WITHIN, "discovered", () -> consumer.discovered("evict-app"), both::equals);
        Await.until(WITHIN, "load-balanced", () -> consumer.loadBalanced("evict-app"), both::equals);
        Await.until(Duration.ofSeconds(10), "the node evicts evict-2", () -> {
            try {
                return !heureka.has("EVICT-APP", "evict-2");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        gone("evict-app", List.of("evict-1"));
        assertEquals("evict-1", consumer.call("evict-app"));
    }

    @Test
    void anInstanceIsDiscoveredAndCalledAgainWithinOneSecondOfItsOverrideBeingRemoved() throws Exception {
        running("BACK-APP", "back-1", "back-2");
        heureka.setStatus("BACK-APP", "back-2", "OUT_OF_SERVICE");
        gone("back-app", List.of("back-1"));
        heureka.removeOverride("BACK-APP", "back-2");
        List<String> both = List.of("back-1", "back-2");
        Await.until(WITHIN, "discovered again", () -> consumer.discovered("back-app"), both::equals);
        Await.until(WITHIN, "load-balanced again", () -> consumer.loadBalanced("back-app"), both::equals);
        Await.until(WITHIN, "called again", () -> consumer.call("back-app"), "back-2"::equals);
    }

    @Test
    void aNewlyRegisteredInstanceIsDiscoveredListedAndLoadBalancedWithinOneSecond() throws Exception {
        running("NEW-APP", "new-1");
        provider("NEW-APP", "new-2");
        List<String> both = List.of("new-1", "new-2");
        Await.until(WITHIN, "discovered", () -> consumer.discovered("new-app"), both::equals);
        Await.until(WITHIN, "load-balanced", () -> consumer.loadBalanced("new-app"), both::equals);
        assertTrue(consumer.discovery().getServices().contains("new-app"));
    }

    @Test
    void anApplicationWithNoInstanceUpIsDiscoveredEmptyNotAsItsLastKnownList() throws Exception {
        running("LAST-APP", "last-1");
        heureka.setStatus("LAST-APP", "last-1", "OUT_OF_SERVICE");
        gone("last-app", List.of());
        assertEquals(null, consumer.chosen("last-app"));
        Await.until(WITHIN, "not among the services",
                () -> !consumer.discovery().getServices().contains("last-app"));
    }

    @Test
    void discoveryAnswersWithTheVipAddressInAnyCase() throws Exception {
        running("CASE-APP", "case-1");
        assertEquals(List.of("case-1"), consumer.discovered("CASE-APP"));
        assertEquals(List.of("case-1"), consumer.discovered("Case-App"));
    }

    @Test
    void eachChangePublishesAHeartbeatEventForDiscoveryRoutes() throws Exception {
        int before = pushHeartbeats.get();
        running("BEAT-APP", "beat-1");
        Await.until(WITHIN, "a HeartbeatEvent", () -> pushHeartbeats.get() > before);
    }

    @Test
    void theConsumerAcknowledgesAChangeWithinOneSecondAsTheSameConsumerAsItsRegistryFetches() throws Exception {
        running("ACK-APP", "ack-1", "ack-2");
        long before = heureka.version();
        heureka.setStatus("ACK-APP", "ack-1", "OUT_OF_SERVICE");
        gone("ack-app", List.of("ack-2"));
        long held = consumer.context.getBean(PushView.class).version();
        assertTrue(held >= before, "the view holds " + held + ", the node was at " + before);
        List<Heureka.ConsumerRow> rows = Await.until(WITHIN, "the node books the ack",
                () -> {
                    try {
                        return heureka.consumers().stream()
                                .filter(r -> r.agent() != null && r.agent().startsWith("Apache-HttpClient/"))
                                .toList();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                r -> r.size() == 1 && r.get(0).version() >= held);
        // The same row was booked by the Eureka client's full fetch at start: one consumer.
        assertTrue(rows.get(0).lastFull() != null && !"null".equals(rows.get(0).lastFull()),
                "the row of the acks is the row of the fetches: " + rows);
    }
}
