# The gosched service image: the Boot jar built from this source tree, on a JRE cut to the modules
# the jar uses (jlink), run by a non-root user with the JVM options the runtime requires on its
# command line, so that the container's pid 1 is the service itself.
#
#   docker build -t gosched:local .
#
# No frontend line and no cache mounts: the classic builder (docker-compose 1.x, Testcontainers'
# docker-java) and BuildKit build it alike, and nothing but the base images below comes from an
# image registry. Where none is reachable, scripts/local-images.sh makes local stand-ins from Debian
# packages and passes them as these arguments.
ARG JDK_IMAGE=eclipse-temurin:25-jdk
ARG BASE_IMAGE=debian:bookworm-slim

# The build files alone (poms, the Maven wrapper), so that the dependency layer of the next stage is
# reused until one of them changes, not rebuilt for every source change.
FROM ${JDK_IMAGE} AS buildfiles
COPY . /src
RUN find /src -type f ! -name pom.xml ! -name mvnw ! -path '/src/.mvn/*' -delete

FROM ${JDK_IMAGE} AS build
# A Maven repository to use instead of Maven Central (a mirror in a network without the internet).
ARG MAVEN_MIRROR=
WORKDIR /src
COPY --from=buildfiles /src /src
# Packaging the reactor with no sources yet fetches every plugin and dependency the real build uses,
# so that the build below runs offline.
RUN if [ -n "$MAVEN_MIRROR" ]; then \
      mkdir -p /root/.m2 && printf '<settings><mirrors><mirror><id>mirror</id><mirrorOf>*</mirrorOf><url>%s</url></mirror></mirrors></settings>\n' \
        "$MAVEN_MIRROR" > /root/.m2/settings.xml; \
    fi \
 && MVNW_REPOURL="$MAVEN_MIRROR" ./mvnw -B -q -ntp -pl scheduler-web -am -DskipTests package \
 && rm -rf /src/*/target
COPY . .
RUN ./mvnw -B -q -ntp -o -pl scheduler-web -am -DskipTests package \
 && cp scheduler-web/target/scheduler-web-*.jar /app.jar
# The runtime: the modules jdeps finds in the application and its libraries, plus jdk.jcmd for
# thread and goroutine-carrier dumps of a running container (`docker exec <c> jcmd 1 Thread.print`).
# Java debug attributes go; native symbols stay as the JDK ships them (stripping those needs
# objcopy, which not every JDK image has).
RUN mkdir /tmp/app && cd /tmp/app && jar -xf /app.jar \
 && modules="$(jdeps --ignore-missing-deps --print-module-deps --multi-release 25 --recursive \
      --class-path 'BOOT-INF/lib/*' BOOT-INF/classes)" \
 && echo "jlink modules: $modules,jdk.jcmd" \
 && jlink --add-modules "$modules,jdk.jcmd" --strip-java-debug-attributes --no-man-pages --no-header-files --compress zip-6 \
      --output /jre \
 && rm -rf /tmp/app

FROM ${BASE_IMAGE}
RUN useradd --system --uid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin gosched
COPY --from=build /jre /opt/java
COPY --from=build /app.jar /app/app.jar
ENV JAVA_HOME=/opt/java \
    PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /app
USER 10001
EXPOSE 8080
# Ready means the readiness group is UP (the NATS connection too, in cluster mode). bash's /dev/tcp:
# the image has no curl or wget.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=24 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /actuator/health/readiness HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"UP\"' <&3"]
# The JVM options GoRuntime.start requires (a fresh Thread.currentThread() in compiled goroutine
# code, docs/scheduler.md) and the recommended compact object headers (README, "Which JVM options")
# on the command line itself: java is pid 1, gets docker stop's SIGTERM, and a kill of pid 1 ends
# the service. The jar's manifest carries the Add-Exports of jdk.internal.vm. More JVM options (a
# heap size, say) go in JDK_JAVA_OPTIONS; arguments after the image name go to the application.
ENTRYPOINT ["java", "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders", "-jar", "/app/app.jar"]
