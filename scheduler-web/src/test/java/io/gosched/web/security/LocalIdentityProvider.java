package io.gosched.web.security;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Date;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A small, real identity provider for tests: an RSA key pair, RS256 JWTs signed with Nimbus (the
 * library Spring Security verifies them with), and its public key served as a JWK set over HTTP on
 * a free loopback port, with an OpenID discovery document for issuer-uri mode. Nothing is mocked:
 * the service fetches the keys over the network and checks signatures, issuer, audience, expiry.
 */
public final class LocalIdentityProvider implements AutoCloseable {

    public static final String AUDIENCE = "gosched";

    private final HttpServer server;
    private final String issuer;
    private final RSAKey key;
    private final RSAKey stranger;
    private final AtomicInteger jwksRequests = new AtomicInteger();

    private LocalIdentityProvider() throws IOException {
        key = rsaKey();
        stranger = rsaKey(); // never published: tokens it signs must be refused
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        issuer = "http://127.0.0.1:" + server.getAddress().getPort() + "/realms/test";
        server.createContext("/realms/test/.well-known/openid-configuration", ex -> json(ex,
                "{\"issuer\":\"" + issuer + "\",\"jwks_uri\":\"" + jwkSetUri() + "\",\"token_endpoint\":\"" + issuer
                        + "/token\",\"id_token_signing_alg_values_supported\":[\"RS256\"],\"subject_types_supported\":[\"public\"],"
                        + "\"response_types_supported\":[\"code\"]}"));
        server.createContext("/realms/test/jwks", ex -> {
            jwksRequests.incrementAndGet();
            json(ex, new JWKSet(key.toPublicJWK()).toString());
        });
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "local-idp");
            t.setDaemon(true);
            return t;
        }));
        server.start();
    }

    public static LocalIdentityProvider start() {
        try {
            return new LocalIdentityProvider();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the local identity provider", e);
        }
    }

    public String issuer() {
        return issuer;
    }

    public String jwkSetUri() {
        return issuer + "/jwks";
    }

    public int jwksRequests() {
        return jwksRequests.get();
    }

    /** A valid access token for the service with exactly these scopes (space-separated in {@code scope}, as OAuth2 does). */
    public String token(Collection<String> scopes) {
        return sign(key, claims(scopes).build());
    }

    /** A token like {@link #token} with its claims adjusted (expired, other issuer, other audience...). */
    public String token(Collection<String> scopes, java.util.function.UnaryOperator<JWTClaimsSet.Builder> adjust) {
        return sign(key, adjust.apply(claims(scopes)).build());
    }

    /** A well-formed token signed by a key this provider never published. */
    public String tokenSignedByAnotherKey(Collection<String> scopes) {
        return sign(stranger, claims(scopes).build());
    }

    /** A token signed by an unpublished key under a key id never seen before: the service must look the id up. */
    public String tokenWithUnknownKeyId(Collection<String> scopes) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(UUID.randomUUID().toString()).build(),
                    claims(scopes).build());
            jwt.sign(new RSASSASigner(stranger.toRSAPrivateKey()));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    private JWTClaimsSet.Builder claims(Collection<String> scopes) {
        Instant now = Instant.now();
        return new JWTClaimsSet.Builder().issuer(issuer).subject("test-client").audience(AUDIENCE)
                .issueTime(Date.from(now)).notBeforeTime(Date.from(now.minusSeconds(5)))
                .expirationTime(Date.from(now.plus(Duration.ofMinutes(10)))).jwtID(UUID.randomUUID().toString())
                .claim("scope", String.join(" ", scopes));
    }

    private static String sign(RSAKey key, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID()).build(), claims);
            jwt.sign(new RSASSASigner(key.toRSAPrivateKey()));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    private static RSAKey rsaKey() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            KeyPair pair = g.generateKeyPair();
            return new RSAKey.Builder((RSAPublicKey) pair.getPublic()).privateKey((RSAPrivateKey) pair.getPrivate())
                    .keyID(UUID.randomUUID().toString()).algorithm(JWSAlgorithm.RS256).build();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void json(HttpExchange ex, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
