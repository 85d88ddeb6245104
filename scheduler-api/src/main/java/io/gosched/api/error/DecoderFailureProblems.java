package io.gosched.api.error;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;

/**
 * Problem details for what Reactor Netty refuses before any Spring code sees the request: a
 * request line longer than the decoder reads (414) or header fields too large (431). Netty answers
 * those itself with an empty body; this handler, between the HTTP codec and Reactor Netty's traffic
 * handler, gives the empty answer an RFC 9457 body saying what the limit is and what to send instead.
 * Every other response passes untouched (one type check per write).
 */
public final class DecoderFailureProblems implements NettyServerCustomizer {

    static final String HANDLER = "gosched.decoderFailureProblems";

    @Override
    public HttpServer apply(HttpServer server) {
        int line = server.configuration().decoder().maxInitialLineLength();
        int headers = server.configuration().decoder().maxHeaderSize();
        return server.doOnChannelInit((observer, channel, address) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null && channel.pipeline().get(HANDLER) == null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, HANDLER, new Handler(line, headers));
            }
        });
    }

    static final class Handler extends ChannelDuplexHandler {
        private final int maxLine;
        private final int maxHeaders;

        Handler(int maxLine, int maxHeaders) {
            this.maxLine = maxLine;
            this.maxHeaders = maxHeaders;
        }

        @Override
        public boolean isSharable() {
            return false;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (msg instanceof FullHttpResponse r && r.content().readableBytes() == 0) {
                String detail = switch (r.status().code()) {
                    case 414 -> "the request line (method, path and query) is longer than the " + maxLine
                            + " bytes this server reads: send a shorter URL, large inputs go in a JSON body";
                    case 431 -> "the request's header fields are larger than the " + maxHeaders
                            + " bytes this server reads: send fewer or shorter headers";
                    default -> null;
                };
                if (detail != null) {
                    String slug = r.status().code() == 414 ? "uri-too-long" : "request-header-fields-too-large";
                    String json = "{\"type\":\"" + ApiProblem.TYPE_BASE + slug + "\",\"title\":\"" + r.status().reasonPhrase()
                            + "\",\"status\":" + r.status().code() + ",\"detail\":\"" + detail + "\"}";
                    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
                    FullHttpResponse withBody = new DefaultFullHttpResponse(r.protocolVersion(), HttpResponseStatus.valueOf(r.status().code()),
                            Unpooled.wrappedBuffer(bytes));
                    withBody.headers().set(r.headers());
                    withBody.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/problem+json");
                    withBody.headers().set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
                    r.release();
                    ctx.write(withBody, promise);
                    return;
                }
            }
            ctx.write(msg, promise);
        }
    }

}
