package io.gosched.cluster.channel;

import io.gosched.service.channel.spi.ChannelOutcome;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The wire format of forwarded channel operations on {@code gosched.chan.<node>} (JSON, so
 * {@code nats sub} shows it):
 * <pre>
 * request  {"op", "id", "channel", "incarnation", "timeoutMs"?, "value"?, "after"?, "cases"?}
 *          op: send | recv | close | delete | describe | list   (answered)
 *              select                                             (answered: a select over "cases", [{"channel", "send",
 *                                                                  "value"?}], every channel on this home; "channel" is
 *                                                                  the first case's; a taken value is confirmed as a recv's)
 *              withdraw                                           (answered: the caller's node shuts down; the send or
 *                                                                  recv of that id is withdrawn if still running, and
 *                                                                  the answer is its outcome, as to the first request)
 *              confirm | return | cancel                          (no answer: the caller got a recv's value / went away)
 *          list: the home's channels after the name "after", a page at a time ("channel" is "*")
 * reply    {"status": ok | not_found | closed | lost | busy | full | unknown, "sent"?, "received"?, "value"?, "ok"?,
 *           "reason"?, "state"?, "states"?, "more"?, "index"?}
 *          select: "index" of the case that fired (absent: none did, "reason" says why), "value" and "ok" for a receive
 *          full: a send the home's memory budget refused (429 at the caller, "reason" says why)
 * </pre>
 * {@code id} names one operation of one caller: a retried request carries the same id and gets
 * the outcome the home recorded for it, never a second execution.
 */
final class Forwarded {

    static final String SEND = "send";
    static final String RECV = "recv";
    static final String CLOSE = "close";
    static final String DESCRIBE = "describe";
    static final String DELETE = "delete";
    static final String LIST = "list";
    static final String SELECT = "select";
    static final String CONFIRM = "confirm";
    static final String RETURN = "return";
    static final String CANCEL = "cancel";
    static final String WITHDRAW = "withdraw";

    static final String OK = "ok";
    static final String NOT_FOUND = "not_found";
    static final String CLOSED = "closed";
    static final String LOST = "lost";
    static final String BUSY = "busy";
    static final String FULL = "full";
    static final String UNKNOWN = "unknown";

    private static final JsonMapper JSON = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .changeDefaultPropertyInclusion(v -> v.withValueInclusion(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL))
            .build();

    private Forwarded() {}

    /** A forwarded operation. {@code value} may be a JSON null (a value); Java null means none. */
    record Request(String op, String id, String channel, String incarnation, Long timeoutMs, JsonNode value, String after,
            java.util.List<ChannelOutcome.SelectCase> cases) {

        /** An operation on one channel (every op but select). */
        Request(String op, String id, String channel, String incarnation, Long timeoutMs, JsonNode value, String after) {
            this(op, id, channel, incarnation, timeoutMs, value, after, null);
        }

        /** A new operation on {@code home}'s channel, with a fresh request id. */
        static Request to(io.gosched.service.channel.spi.ChannelHome home, String op, Long timeoutMs, JsonNode value) {
            return new Request(op, java.util.UUID.randomUUID().toString(), home.name(), home.incarnation(), timeoutMs, value, null, null);
        }

        /** A select over {@code cases}, every channel living on {@code home}'s node. */
        static Request select(io.gosched.service.channel.spi.ChannelHome home, long timeoutMs, java.util.List<ChannelOutcome.SelectCase> cases) {
            return new Request(SELECT, java.util.UUID.randomUUID().toString(), home.name(), home.incarnation(), timeoutMs, null, null,
                    cases);
        }

        /** A page of the channels of {@code incarnation}, those named after {@code after} (null: from the first). */
        static Request list(String incarnation, String after) {
            return new Request(LIST, java.util.UUID.randomUUID().toString(), "*", incarnation, null, null, after, null);
        }

        /** The follow-up ({@code confirm}, {@code return}, {@code cancel}) of this operation. */
        Request withOp(String other) {
            return new Request(other, id, channel, incarnation, null, null, null, null);
        }
    }

    /** The home's answer. */
    record Reply(String status, Boolean sent, Boolean received, JsonNode value, Boolean ok, String reason, ChannelOutcome.State state,
            java.util.List<ChannelOutcome.State> states, Boolean more, Integer index) {

        static Reply status(String status) {
            return new Reply(status, null, null, null, null, null, null, null, null, null);
        }

        /** A refusal with its reason (the problem's detail). */
        static Reply status(String status, String reason) {
            return new Reply(status, null, null, null, null, reason, null, null, null, null);
        }

        static Reply of(ChannelOutcome.Send s) {
            return new Reply(OK, s.sent(), null, null, null, s.reason(), null, null, null, null);
        }

        static Reply of(ChannelOutcome.Recv r) {
            return new Reply(OK, null, r.received(), r.value(), r.ok(), r.reason(), null, null, null, null);
        }

        static Reply of(ChannelOutcome.State s) {
            return new Reply(OK, null, null, null, null, null, s, null, null, null);
        }

        static Reply page(java.util.List<ChannelOutcome.State> states, boolean more) {
            return new Reply(OK, null, null, null, null, null, null, states, more, null);
        }

        static Reply of(ChannelOutcome.Select s) {
            return new Reply(OK, null, null, s.value(), s.ok(), s.reason(), null, null, null, s.index());
        }

        ChannelOutcome.Select select() {
            return new ChannelOutcome.Select(index, value, Boolean.TRUE.equals(ok), reason);
        }

        ChannelOutcome.Send send() {
            return new ChannelOutcome.Send(Boolean.TRUE.equals(sent), reason);
        }

        ChannelOutcome.Recv recv() {
            return new ChannelOutcome.Recv(Boolean.TRUE.equals(received), value, Boolean.TRUE.equals(ok), reason);
        }
    }

    static byte[] encode(Object o) {
        return JSON.writeValueAsBytes(o);
    }

    static Request request(byte[] b) {
        return JSON.readValue(b, Request.class);
    }

    static Reply reply(byte[] b) {
        return JSON.readValue(b, Reply.class);
    }

    static byte[] encodeHome(io.gosched.service.channel.spi.ChannelHome h) {
        return JSON.writeValueAsBytes(h);
    }

    static io.gosched.service.channel.spi.ChannelHome home(byte[] b) {
        return JSON.readValue(b, io.gosched.service.channel.spi.ChannelHome.class);
    }
}
