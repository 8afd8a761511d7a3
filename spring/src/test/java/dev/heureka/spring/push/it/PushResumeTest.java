package dev.heureka.spring.push.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import dev.heureka.spring.push.PushView;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The consumer reaches Heureka through a TCP proxy whose connections the test cuts: the changes
 * made while the stream is down reach the consumer when it reconnects, by resuming the stream
 * from its Last-Event-ID (no new snapshot).
 */
class PushResumeTest {

    private Heureka heureka;
    private TcpProxy proxy;
    private Consumer consumer;

    @AfterEach
    void stop() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (heureka != null) {
            heureka.close();
        }
    }

    @Test
    void changesMadeWhileTheStreamIsCutReachTheConsumerWhenItResumesWithNoChangeLostAndNoSnapshot()
            throws Exception {
        RecordingAppender.clear();
        heureka = Heureka.start();
        proxy = new TcpProxy(heureka.port);
        consumer = Consumer.start("http://127.0.0.1:" + proxy.port + "/eureka/");
        PushView view = consumer.context.getBean(PushView.class);
        Await.until(Duration.ofSeconds(10), "the consumer follows the push", view::isLive);

        heureka.register("RESUME-APP", "r-1", 9001);
        heureka.register("RESUME-APP", "r-2", 9002);
        heureka.register("RESUME-APP", "r-3", 9003);
        List<String> three = List.of("r-1", "r-2", "r-3");
        Await.until(Duration.ofSeconds(1), "three instances", () -> consumer.discovered("resume-app"), three::equals);
        long snapshots = view.snapshotsApplied();

        proxy.cut();
        Await.until(Duration.ofSeconds(5), "the consumer notices the cut", () -> !view.isLive());
        heureka.setStatus("RESUME-APP", "r-1", "OUT_OF_SERVICE");
        heureka.cancel("RESUME-APP", "r-2");
        heureka.register("RESUME-APP", "r-4", 9004);
        heureka.register("OTHER-APP", "o-1", 9005);
        proxy.reopen();

        List<String> after = List.of("r-3", "r-4");
        Await.until(Duration.ofSeconds(20), "every change made during the cut",
                () -> view.isLive() ? consumer.discovered("resume-app") : List.of(), after::equals);
        Await.until(Duration.ofSeconds(1), "the load balancer too", () -> consumer.loadBalanced("resume-app"), after::equals);
        assertEquals(List.of("o-1"), consumer.discovered("other-app"));
        assertEquals(snapshots, view.snapshotsApplied(), "resumed from Last-Event-ID, no new snapshot");
        // Said once each at INFO, however many attempts the cut took.
        assertEquals(1, RecordingAppender.lines(Level.INFO, "Heureka push not in use").size());
        assertEquals(1, RecordingAppender.lines(Level.INFO, "Following Heureka's push stream again").size());
    }
}
