# syntax=docker/dockerfile:1
# (BuildKit, the default builder since Docker 23 and in compose v2, for the Maven cache mount below.)
# Multi-stage build of the gosched service on Temurin 25.
# Build: the whole reactor (the app needs scheduler-core and scheduler-api), tests skipped here
# because CI runs them; the Maven repository is a BuildKit cache between builds.
FROM eclipse-temurin:25-jdk AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.m2 \
    ./mvnw -B -q -pl scheduler-web -am -DskipTests package \
 && cp scheduler-web/target/scheduler-web-*.jar /src/app.jar

FROM eclipse-temurin:25-jre
RUN useradd --system --uid 10001 gosched
WORKDIR /app
COPY --from=build /src/app.jar /app/app.jar
USER gosched
EXPOSE 8080
# No flags on the command line: the jar's manifest carries Add-Exports for jdk.internal.vm (the
# continuations), and the JVM options goroutines need (a fresh Thread.currentThread() in compiled
# goroutine code, see docs/scheduler.md) come from the environment, so the java launcher applies
# them to this and any other java command in the image (without them the service would relaunch
# itself with them). Compact object headers: recommended, not required (README, "Which JVM options").
ENV JDK_JAVA_OPTIONS="-XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -XX:+UseCompactObjectHeaders"
ENTRYPOINT ["java", "-jar", "/app/app.jar"]
