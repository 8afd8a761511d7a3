package dev.heureka.spring.push.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.heureka.spring.push.PushEurekaDiscoveryClient;
import dev.heureka.spring.push.PushView;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;

/**
 * Without push on the server (a Heureka with {@code heureka.push.enabled=false} answers 404 as
 * the Java Eureka server does), or with the add-on switched off, the consumer behaves exactly as
 * without the add-on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NoPushTest {

    private static final String FALLBACK = "Heureka push not in use";

    private Heureka heureka;

    @BeforeAll
    void start() throws Exception {
        heureka = Heureka.start("--heureka.push.enabled=false");
        heureka.register("PLAIN-APP", "plain-1", 9101);
    }

    @AfterAll
    void stop() {
        if (heureka != null) {
            heureka.close();
        }
    }

    @Test
    void againstAServerWithoutPushDiscoveryAnswersAsTheEurekaClientAndTheFallbackIsLoggedOnce() throws Exception {
        RecordingAppender.clear();
        try (Consumer consumer = Consumer.start(heureka.base)) {
            Await.until(Duration.ofSeconds(10), "the fallback is logged",
                    () -> RecordingAppender.lines(Level.INFO, FALLBACK).size() == 1);
            PushView view = consumer.context.getBean(PushView.class);
            assertFalse(view.isLive());
            PushEurekaDiscoveryClient client = (PushEurekaDiscoveryClient) consumer.context.getBean("discoveryClient");
            EurekaDiscoveryClient eureka = client.getDelegate();
            assertEquals(List.of("plain-1"), consumer.discovered("plain-app"));
            assertEquals(eureka.getInstances("plain-app"), client.getInstances("plain-app"));
            assertEquals(eureka.getServices(), client.getServices());
            assertEquals(List.of("plain-1"), consumer.loadBalanced("plain-app"));
            assertTrue(RecordingAppender.lines(Level.INFO, FALLBACK).get(0).contains("404"));
            assertEquals(1, RecordingAppender.lines(Level.INFO, FALLBACK).size());
        }
    }

    @Test
    void aServerThatCannotBeReachedIsRetriedWithBackoffButTheFallbackIsLoggedOnce() throws Exception {
        RecordingAppender.clear();
        int nothing = Heureka.freePort();
        try (Consumer consumer = Consumer.start("http://127.0.0.1:" + nothing + "/eureka/")) {
            Await.until(Duration.ofSeconds(10), "three attempts (1 s and 2 s apart)",
                    () -> RecordingAppender.lines(Level.DEBUG, "could not be opened").size() >= 3);
            assertEquals(1, RecordingAppender.lines(Level.INFO, FALLBACK).size());
            assertFalse(consumer.context.getBean(PushView.class).isLive());
        }
    }

    @Test
    void theOffSwitchLeavesSpringCloudNetflixUntouched() {
        try (Consumer consumer = Consumer.start(heureka.base, "heureka.push.enabled=false")) {
            assertTrue(consumer.context.getBeansOfType(PushView.class).isEmpty());
            assertSame(EurekaDiscoveryClient.class, consumer.context.getBean("discoveryClient").getClass());
        }
    }

    @Test
    void aConsumerThatDoesNotFetchTheRegistryGetsNoPush() {
        try (Consumer consumer = Consumer.start(heureka.base, "eureka.client.fetch-registry=false")) {
            assertTrue(consumer.context.getBeansOfType(PushView.class).isEmpty());
        }
    }
}
