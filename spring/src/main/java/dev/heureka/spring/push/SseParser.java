package dev.heureka.spring.push;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * A Server-Sent Events reader, just enough for Heureka's push stream: {@code event:}, {@code id:}
 * and {@code data:} fields, a blank line ends a message, lines starting with {@code :} are
 * comments (keep-alives). Several {@code data:} lines are joined with a newline; one space after
 * the colon is dropped; a message without data is not dispatched; the {@code id} is remembered
 * across messages as EventSource does.
 */
public final class SseParser {

    /** One dispatched message. {@code id} is the last id seen on the stream (may be null). */
    public record Message(String event, String id, String data) {
    }

    private final Consumer<Message> sink;
    private String event;
    private StringBuilder data;
    private String lastId;

    public SseParser(Consumer<Message> sink) {
        this.sink = sink;
    }

    /** Reads lines until the end of the stream (returns) or an I/O error (throws). */
    public void readAll(BufferedReader reader) throws IOException {
        String line;
        while ((line = reader.readLine()) != null) {
            line(line);
        }
    }

    /** Feeds one line (without its line terminator). */
    public void line(String line) {
        if (line.isEmpty()) {
            dispatch();
            return;
        }
        if (line.charAt(0) == ':') {
            return;
        }
        int colon = line.indexOf(':');
        String field;
        String value;
        if (colon < 0) {
            field = line;
            value = "";
        } else {
            field = line.substring(0, colon);
            value = line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
        }
        switch (field) {
            case "event" -> event = value;
            case "data" -> {
                if (data == null) {
                    data = new StringBuilder(value);
                } else {
                    data.append('\n').append(value);
                }
            }
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    lastId = value;
                }
            }
            default -> {
                // retry and unknown fields: ignored
            }
        }
    }

    /** The last {@code id:} seen, whether or not its message was complete. */
    public String lastId() {
        return lastId;
    }

    private void dispatch() {
        if (data != null) {
            sink.accept(new Message(event == null ? "message" : event, lastId, data.toString()));
        }
        event = null;
        data = null;
    }
}
