package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;

/**
 * Clients keep HTTP/1.1 connections open (wrk, k6, browsers, every pooled client), so the server
 * must read each request of a connection whatever thread finished the one before. Reactor Netty
 * 1.3.6 did not (reactor-netty#4361): after a response completed off the event loop (the flight
 * recorder's endpoints run on {@code boundedElastic}) and then one completed on it, it stopped
 * reading the connection, and the third request waited until the client gave up. It hung about one
 * connection in seven here, so fifty connections show it almost surely.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class KeepAliveTest {

    private static final int CONNECTIONS = 50;
    private static final int READ_TIMEOUT_MS = 10_000;

    @LocalServerPort
    int port;

    @Test
    void everyRequestOnAKeptAliveConnectionIsAnswered() throws IOException {
        String[] paths = {"/api/v1/trace/flight/snapshots/x0", "/api/v1/scheduler", "/api/v1/scheduler"};
        int[] expected = {404, 200, 200};
        for (int c = 0; c < CONNECTIONS; c++) {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
                socket.setSoTimeout(READ_TIMEOUT_MS);
                for (int r = 0; r < paths.length; r++) {
                    int status = exchange(socket, paths[r], "connection " + c + ", request " + (r + 1));
                    assertThat(status).as("GET %s on connection %d", paths[r], c).isEqualTo(expected[r]);
                }
            }
        }
    }

    /** One GET and its whole response (Content-Length or chunked); the connection stays open. */
    private static int exchange(Socket socket, String path, String which) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        try {
            String statusLine = line(in);
            int status = Integer.parseInt(statusLine.split(" ")[1]);
            long length = -1;
            boolean chunked = false;
            for (String h = line(in); !h.isEmpty(); h = line(in)) {
                String lower = h.toLowerCase(Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Long.parseLong(lower.substring(15).trim());
                } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    chunked = true;
                }
            }
            if (chunked) {
                for (long size = Long.parseLong(line(in).split(";")[0].trim(), 16); size > 0;
                        size = Long.parseLong(line(in).split(";")[0].trim(), 16)) {
                    in.readNBytes((int) size);
                    line(in);
                }
                for (String trailer = line(in); !trailer.isEmpty(); trailer = line(in)) {
                    // trailers carry nothing this test reads
                }
            } else if (length > 0) {
                in.readNBytes((int) length);
            }
            return status;
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no response in " + READ_TIMEOUT_MS + " ms to GET " + path + " (" + which
                    + "): the server stopped reading a kept-alive connection", e);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("connection closed mid-response");
            }
            if (b != '\r') {
                buf.write(b);
            }
        }
        return buf.toString(StandardCharsets.US_ASCII);
    }
}
