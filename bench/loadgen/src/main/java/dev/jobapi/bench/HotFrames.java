package dev.jobapi.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a process spent its CPU, from the execution samples of a JFR recording, in three tables:
 * the methods on top of the stack most often (self time); each library's share, a sample going to
 * the library of its topmost frame outside the JDK (so a HashMap lookup made by Hibernate counts as
 * Hibernate's); and our own methods anywhere on the stack (inclusive, each once per sample), which
 * says which step of ours the time is spent under. bench/ANALYSIS.md keeps these tables; {@code
 * bench/run --profile} makes the recordings.
 */
final class HotFrames {

    /** Libraries by package prefix, most specific first. */
    private static final List<Map.Entry<String, String>> LIBRARIES = List.of(
            Map.entry("dev.jobapi.", "jobapi (our code)"),
            Map.entry("org.hibernate.", "Hibernate ORM"),
            Map.entry("org.postgresql.", "PostgreSQL JDBC"),
            Map.entry("io.agroal.", "Agroal (connection pool)"),
            Map.entry("com.arjuna.", "Narayana (transactions)"),
            Map.entry("io.quarkus.narayana.", "Narayana (transactions)"),
            Map.entry("com.fasterxml.jackson.", "Jackson"),
            Map.entry("org.jboss.resteasy.reactive.", "Quarkus REST"),
            Map.entry("io.quarkus.resteasy.reactive.", "Quarkus REST"),
            Map.entry("io.vertx.", "Vert.x"),
            Map.entry("io.netty.", "Netty"),
            Map.entry("com.rabbitmq.", "RabbitMQ client"),
            Map.entry("io.smallrye.jwt.", "SmallRye JWT"),
            Map.entry("org.jose4j.", "jose4j (JWT)"),
            Map.entry("io.smallrye.mutiny.", "Mutiny"),
            Map.entry("io.smallrye.", "SmallRye (other)"),
            Map.entry("io.opentelemetry.", "OpenTelemetry"),
            Map.entry("io.quarkus.opentelemetry.", "OpenTelemetry"),
            Map.entry("io.micrometer.", "Micrometer"),
            Map.entry("io.quarkus.micrometer.", "Micrometer"),
            Map.entry("org.jboss.logmanager.", "JBoss logging"),
            Map.entry("org.jboss.logging.", "JBoss logging"),
            Map.entry("io.quarkus.arc.", "ArC (CDI)"),
            Map.entry("io.quarkus.bootstrap.", "Quarkus class loading"),
            Map.entry("io.quarkus.", "Quarkus (other)"),
            Map.entry("com.github.benmanes.caffeine.", "Caffeine"));

    private static final List<String> JDK = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.");

    private static final List<String> GENERATED =
            List.of("_Subclass", "_ClientProxy", "$$Lambda", "$quarkusrestinvoker$", ".lambda$");

    private final Map<String, Long> selfByMethod = new HashMap<>();
    private final Map<String, Long> selfByLibrary = new HashMap<>();
    private final Map<String, Long> ourMethodsInclusive = new HashMap<>();
    private final long samples;

    /** From stacks given as method names, the top of the stack first. */
    HotFrames(List<List<String>> stacks) {
        for (List<String> stack : stacks) {
            selfByMethod.merge(stack.get(0), 1L, Long::sum);
            String firstOutsideTheJdk =
                    stack.stream().filter(method -> !isJdk(method)).findFirst().orElse(null);
            selfByLibrary.merge(firstOutsideTheJdk == null ? "JDK" : library(firstOutsideTheJdk), 1L, Long::sum);
            stack.stream()
                    .filter(method -> method.startsWith("dev.jobapi.") && !isGenerated(method))
                    .distinct()
                    .forEach(method -> ourMethodsInclusive.merge(method, 1L, Long::sum));
        }
        this.samples = stacks.size();
    }

    static HotFrames of(Path recording) throws IOException {
        return new HotFrames(RecordingFile.readAllEvents(recording).stream()
                .filter(event -> event.getEventType().getName().equals("jdk.ExecutionSample"))
                .map(RecordedEvent::getStackTrace)
                .filter(stack -> stack != null && !stack.getFrames().isEmpty())
                .map(HotFrames::methods)
                .toList());
    }

    private static List<String> methods(RecordedStackTrace stack) {
        return stack.getFrames().stream().map(HotFrames::method).toList();
    }

    private static String method(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }

    /** CDI's proxies and subclasses, lambdas and REST invokers: frames of a method listed already. */
    private static boolean isGenerated(String method) {
        return GENERATED.stream().anyMatch(method::contains);
    }

    private static boolean isJdk(String method) {
        return JDK.stream().anyMatch(method::startsWith);
    }

    static String library(String method) {
        return LIBRARIES.stream()
                .filter(entry -> method.startsWith(entry.getKey()))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElse(isJdk(method) ? "JDK" : "other");
    }

    /** The three tables in Markdown, each cut at {@code top} rows. */
    String markdown(int top) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%d execution samples%n%n", samples));
        table(out, "self", "method", selfByMethod, top);
        table(out, "self, by library", "library (topmost frame outside the JDK)", selfByLibrary, top);
        table(out, "anywhere on the stack", "our method", ourMethodsInclusive, top);
        return out.toString();
    }

    private void table(StringBuilder out, String share, String what, Map<String, Long> counts, int rows) {
        out.append(String.format(Locale.ROOT, "| %s | %s |%n| --- | --- |%n", share, what));
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                        .thenComparing(Map.Entry.comparingByKey()))
                .limit(rows)
                .forEach(entry -> out.append(String.format(
                        Locale.ROOT, "| %.1f%% | `%s` |%n", 100.0 * entry.getValue() / samples, entry.getKey())));
        out.append('\n');
    }
}
