package dev.heureka.spring.push.it;

import java.time.Duration;
import java.util.function.Supplier;
import org.opentest4j.AssertionFailedError;

/** Bounded waits: poll a condition every 20 ms until it holds or a deadline passes. */
public final class Await {

    private Await() {
    }

    /** Waits until {@code condition} holds; fails with {@code what} and the last value otherwise. */
    public static <T> T until(Duration within, String what, Supplier<T> value, java.util.function.Predicate<T> condition) {
        long deadline = System.nanoTime() + within.toNanos();
        T last = null;
        RuntimeException error = null;
        while (true) {
            try {
                last = value.get();
                error = null;
                if (condition.test(last)) {
                    return last;
                }
            } catch (RuntimeException e) {
                error = e;
            }
            if (System.nanoTime() >= deadline) {
                AssertionFailedError failure = new AssertionFailedError(
                        what + " within " + within.toMillis() + " ms; last: " + last);
                if (error != null) {
                    failure.initCause(error);
                }
                throw failure;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionFailedError("interrupted waiting for " + what);
            }
        }
    }

    /** Waits until {@code condition} is true. */
    public static void until(Duration within, String what, Supplier<Boolean> condition) {
        until(within, what, condition, Boolean.TRUE::equals);
    }
}
