package dev.heureka.spring.push;

import com.netflix.discovery.shared.Applications;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;

/**
 * Follows {@code {serviceUrl}push} on one daemon thread and keeps a {@link PushView} of it.
 *
 * <ul>
 *   <li>Connects to the Eureka client's service URLs in their order; after a failure moves on to
 *       the next one, backing off 1 s doubling to 30 s.
 *   <li>Sends the last applied {@code id:} as {@code Last-Event-ID}, so a broken stream resumes
 *       with the deltas it missed.
 *   <li>A delta whose hash code disagrees with the copy: reconnect without {@code Last-Event-ID}
 *       for a new snapshot.
 *   <li>404 (the Java Eureka server, or push disabled): not live, and try again in 5 minutes.
 *   <li>Acknowledges each applied version on the node the stream is connected to, one at a time
 *       on its own thread, the newest once the one in flight returns.
 * </ul>
 *
 * While the view is not live the DiscoveryClient wrappers answer as Spring does without it. A
 * stream that ends after serving a while (its maximum age, a restarting node) is resumed at once
 * and the view stays in use meanwhile; the view stops being live when a connection attempt fails,
 * is answered 404 or another error, or the copy must be resynchronised. Falling back is logged
 * once at INFO, and so is following the push again.
 */
public final class PushClient implements AutoCloseable {

    private static final Log log = LogFactory.getLog(PushClient.class);

    static final long FIRST_BACKOFF_MILLIS = 1_000;
    static final long MAX_BACKOFF_MILLIS = 30_000;
    static final long NOT_FOUND_RETRY_MILLIS = 5 * 60_000;

    private final PushView view;
    private final Supplier<List<String>> serviceUrls;
    private final PushHttp http;
    private final ExecutorService ackExecutor;
    private final AtomicReference<Ack> pendingAck = new AtomicReference<>();
    private final AtomicBoolean ackInFlight = new AtomicBoolean();
    private final Object sleeper = new Object();
    private volatile boolean stopped;
    private volatile HttpGet current;
    private Thread thread;

    /** Null until the first attempt; true while following; false once the fallback was logged. */
    private Boolean following;
    private String lastEventId;
    private int urlIndex;

    private record Ack(URI base, String auth, long version) {
    }

    public PushClient(PushView view, Supplier<List<String>> serviceUrls, PushHttp http) {
        this.view = view;
        this.serviceUrls = serviceUrls;
        this.http = http;
        this.ackExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "heureka-push-ack");
            t.setDaemon(true);
            return t;
        });
    }

    public synchronized void start() {
        if (thread != null) {
            return;
        }
        thread = new Thread(this::run, "heureka-push");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() {
        stopped = true;
        synchronized (sleeper) {
            sleeper.notifyAll();
        }
        HttpGet get = current;
        if (get != null) {
            get.cancel();
        }
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ackExecutor.shutdownNow();
        try {
            http.close();
        } catch (Exception e) {
            log.debug("closing the push client", e);
        }
        view.notLive();
    }

    /** How one connection ended. */
    private enum End {
        /** The server closed a stream it had served for a while: reconnect at once. */
        ENDED,
        /** A delta disagreed with the copy: reconnect for a new snapshot. */
        RESYNC,
        /** 404: this node has no push. */
        NOT_FOUND,
        /** Could not connect, an error status, or the stream broke early. */
        FAILED
    }

    private void run() {
        long backoff = FIRST_BACKOFF_MILLIS;
        while (!stopped) {
            List<String> urls;
            try {
                urls = serviceUrls.get();
            } catch (RuntimeException e) {
                urls = List.of();
            }
            if (urls == null || urls.isEmpty()) {
                fallBack("no Eureka service URL is configured");
                pause(NOT_FOUND_RETRY_MILLIS);
                continue;
            }
            String url = urls.get(Math.floorMod(urlIndex, urls.size()));
            End end = connect(url);
            if (stopped) {
                break;
            }
            switch (end) {
                case ENDED -> backoff = FIRST_BACKOFF_MILLIS;
                case RESYNC -> {
                    backoff = FIRST_BACKOFF_MILLIS;
                    lastEventId = null;
                    view.forget();
                }
                case NOT_FOUND -> {
                    fallBack(redact(url) + "push answered 404 (a server without push); trying again in 5 minutes");
                    backoff = FIRST_BACKOFF_MILLIS;
                    pause(NOT_FOUND_RETRY_MILLIS);
                }
                case FAILED -> {
                    fallBack("the push stream of " + redact(url) + " failed; retrying with backoff");
                    urlIndex++;
                    pause(backoff);
                    backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
                }
            }
        }
    }

    private End connect(String serviceUrl) {
        URI configured;
        URI base;
        try {
            configured = URI.create(serviceUrl.endsWith("/") ? serviceUrl : serviceUrl + "/");
            base = PushHttp.withoutUserInfo(configured);
        } catch (Exception e) {
            log.debug("bad service URL " + redact(serviceUrl), e);
            return End.FAILED;
        }
        String auth = PushHttp.basicAuth(configured);
        HttpGet get = new HttpGet(base.resolve("push"));
        get.setHeader("Accept", "text/event-stream");
        get.setHeader("Cache-Control", "no-cache");
        if (auth != null) {
            get.setHeader("Authorization", auth);
        }
        boolean resuming = lastEventId != null && view.hasSnapshot();
        if (resuming) {
            get.setHeader("Last-Event-ID", lastEventId);
        }
        current = get;
        long opened = System.nanoTime();
        boolean served = false;
        AtomicBoolean resync = new AtomicBoolean();
        try (ClassicHttpResponse response = http.client.executeOpen(null, get, null)) {
            int status = response.getCode();
            HttpEntity entity = response.getEntity();
            if (status == 404) {
                EntityUtils.consumeQuietly(entity);
                view.notLive();
                return End.NOT_FOUND;
            }
            if (status != 200 || entity == null) {
                log.debug("push stream of " + base + " answered " + status);
                EntityUtils.consumeQuietly(entity);
                view.notLive();
                return End.FAILED;
            }
            served = true;
            if (resuming) {
                view.resume();
                followed(base);
            }
            SseParser parser = new SseParser(message -> {
                if (resync.get()) {
                    return;
                }
                if (!apply(message, base, auth)) {
                    resync.set(true);
                    get.cancel();
                }
            });
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(entity.getContent(), StandardCharsets.UTF_8))) {
                parser.readAll(reader);
            }
            if (resync.get()) {
                return End.RESYNC;
            }
            // Still live: the copy was complete when the stream ended, and the next connection
            // resumes it at once. Only a failing reconnect makes the view not live (fallBack).
            long lived = (System.nanoTime() - opened) / 1_000_000;
            log.debug("push stream of " + base + " ended after " + lived + " ms");
            return lived >= FIRST_BACKOFF_MILLIS ? End.ENDED : End.FAILED;
        } catch (Exception e) {
            if (resync.get()) {
                // The read ended because apply() cancelled the request.
                return End.RESYNC;
            }
            if (!stopped) {
                log.debug("push stream of " + base + (served ? " broke" : " could not be opened"), e);
            }
            return served && (System.nanoTime() - opened) / 1_000_000 >= FIRST_BACKOFF_MILLIS
                    ? End.ENDED
                    : End.FAILED;
        } finally {
            current = null;
        }
    }

    /** Applies one message; false when the copy must be resynchronised. */
    private boolean apply(SseParser.Message message, URI base, String auth) {
        Applications doc;
        try {
            doc = PushView.decode(message.data());
        } catch (IOException | RuntimeException e) {
            log.warn("undecodable push " + message.event() + " from " + base + ": " + e);
            return false;
        }
        PushView.Outcome outcome;
        switch (message.event()) {
            case "snapshot" -> outcome = view.applySnapshot(doc);
            case "delta" -> outcome = view.applyDelta(doc);
            default -> {
                return true;
            }
        }
        if (outcome != PushView.Outcome.APPLIED) {
            log.debug("push " + message.event() + " " + message.id() + ": " + outcome + "; resynchronising");
            return false;
        }
        lastEventId = message.id();
        followed(base);
        Long version = doc.getVersion();
        if (version != null) {
            ack(new Ack(base, auth, version));
        }
        return true;
    }

    private void followed(URI base) {
        if (!Boolean.TRUE.equals(following)) {
            if (following == null) {
                log.info("Following Heureka's push stream at " + base + "push");
            } else {
                log.info("Following Heureka's push stream again at " + base + "push");
            }
            following = true;
        }
    }

    private void fallBack(String why) {
        view.notLive();
        if (!Boolean.FALSE.equals(following)) {
            log.info("Heureka push not in use (" + why + "): discovery keeps to the Eureka client's"
                    + " registry fetches until the stream is back");
            following = false;
        }
    }

    private void ack(Ack ack) {
        pendingAck.set(ack);
        if (ackInFlight.compareAndSet(false, true)) {
            try {
                ackExecutor.execute(this::drainAcks);
            } catch (RuntimeException e) {
                ackInFlight.set(false);
            }
        }
    }

    private void drainAcks() {
        while (true) {
            Ack next = pendingAck.getAndSet(null);
            if (next == null) {
                ackInFlight.set(false);
                // An ack may have been set after the getAndSet but before the flag was cleared.
                if (pendingAck.get() != null && ackInFlight.compareAndSet(false, true)) {
                    continue;
                }
                return;
            }
            post(next);
        }
    }

    private void post(Ack ack) {
        HttpPost post = new HttpPost(ack.base().resolve("push/ack?version=" + ack.version()));
        if (ack.auth() != null) {
            post.setHeader("Authorization", ack.auth());
        }
        try {
            Integer code = http.client.execute(post, response -> {
                EntityUtils.consumeQuietly(response.getEntity());
                return response.getCode();
            });
            if (code != 204 && code != 200) {
                log.debug("push ack of version " + ack.version() + " to " + ack.base() + " answered " + code);
            }
        } catch (IOException | RuntimeException e) {
            log.debug("push ack of version " + ack.version() + " to " + ack.base() + " failed", e);
        }
    }

    private void pause(long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        synchronized (sleeper) {
            while (!stopped) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return;
                }
                try {
                    sleeper.wait(left);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private static String redact(String url) {
        return url.replaceAll("//[^/@]*@", "//");
    }
}
