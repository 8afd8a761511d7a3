package dev.heureka.spring.push.it;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps the add-on's log events (logback-test.xml attaches it to {@code dev.heureka}). */
public final class RecordingAppender extends AppenderBase<ILoggingEvent> {

    public record Line(Level level, String message) {
    }

    private static final List<Line> LINES = new CopyOnWriteArrayList<>();

    @Override
    protected void append(ILoggingEvent event) {
        LINES.add(new Line(event.getLevel(), event.getFormattedMessage()));
    }

    public static void clear() {
        LINES.clear();
    }

    /** The lines at {@code level} containing {@code text}. */
    public static List<String> lines(Level level, String text) {
        return LINES.stream()
                .filter(l -> l.level().equals(level) && l.message().contains(text))
                .map(Line::message)
                .toList();
    }
}
