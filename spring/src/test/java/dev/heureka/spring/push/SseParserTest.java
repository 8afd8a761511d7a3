package dev.heureka.spring.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {

    private final List<SseParser.Message> messages = new ArrayList<>();
    private final SseParser parser = new SseParser(messages::add);

    private void feed(String text) throws IOException {
        parser.readAll(new BufferedReader(new StringReader(text)));
    }

    @Test
    void aBlankLineEndsAMessageWithItsEventIdAndData() throws IOException {
        feed("event: snapshot\nid: abc-0\ndata: {\"a\":1}\n\n");
        assertEquals(List.of(new SseParser.Message("snapshot", "abc-0", "{\"a\":1}")), messages);
    }

    @Test
    void commentsAreIgnored() throws IOException {
        feed(": keep-alive\n\n: keep-alive\nevent: delta\n: inside\nid: s-1\ndata: x\n\n");
        assertEquals(List.of(new SseParser.Message("delta", "s-1", "x")), messages);
    }

    @Test
    void aMessageWithoutDataIsNotDispatchedButItsIdIsKept() throws IOException {
        feed("id: s-7\n\n");
        assertEquals(List.of(), messages);
        assertEquals("s-7", parser.lastId());
    }

    @Test
    void severalDataLinesAreJoinedWithNewlines() throws IOException {
        feed("data: one\ndata:two\ndata:  three\n\n");
        assertEquals("one\ntwo\n three", messages.get(0).data());
        assertEquals("message", messages.get(0).event());
    }

    @Test
    void theEventNameDoesNotCarryOverToTheNextMessageButTheIdDoes() throws IOException {
        feed("event: snapshot\nid: s-0\ndata: a\n\ndata: b\n\n");
        assertEquals(new SseParser.Message("message", "s-0", "b"), messages.get(1));
    }

    @Test
    void anUnfinishedMessageAtTheEndOfTheStreamIsDropped() throws IOException {
        feed("event: delta\nid: s-3\ndata: partial");
        assertEquals(List.of(), messages);
    }

    @Test
    void crlfLineEndingsAreAccepted() throws IOException {
        feed("event: delta\r\nid: s-2\r\ndata: y\r\n\r\n");
        assertEquals(List.of(new SseParser.Message("delta", "s-2", "y")), messages);
    }

    @Test
    void noIdMeansNullId() throws IOException {
        feed("data: z\n\n");
        assertNull(messages.get(0).id());
    }
}
