package dev.jobapi.common.testing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A text rendering of finished spans as a tree: name, kind, duration and attributes, children in the
 * order they started. What the tracing tests print and docs/trace-example.md shows.
 */
public final class SpanTree {

    private SpanTree() {}

    public static String render(List<SpanData> spans) {
        Set<String> ids = spans.stream().map(SpanData::getSpanId).collect(Collectors.toSet());
        StringBuilder out = new StringBuilder();
        spans.stream()
                .filter(span -> !ids.contains(span.getParentSpanId()))
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                .forEach(root -> {
                    out.append("trace ")
                            .append(root.getTraceId())
                            .append(", parent span ")
                            .append(root.getParentSpanId())
                            .append('\n');
                    render(root, spans, "", "", out);
                });
        return out.toString();
    }

    private static void render(SpanData span, List<SpanData> spans, String lead, String indent, StringBuilder out) {
        double millis = (span.getEndEpochNanos() - span.getStartEpochNanos()) / 1_000_000.0;
        out.append(lead)
                .append(span.getName())
                .append("  [")
                .append(span.getKind())
                .append(String.format(java.util.Locale.ROOT, ", %.1f ms", millis))
                .append(span.getStatus().getStatusCode().name().equals("ERROR") ? ", ERROR" : "")
                .append("]\n");
        Map<String, Object> attributes = new TreeMap<>();
        span.getAttributes().forEach((AttributeKey<?> key, Object value) -> attributes.put(key.getKey(), value));
        attributes.forEach((key, value) -> out.append(indent)
                .append("      ")
                .append(key)
                .append('=')
                .append(value)
                .append('\n'));
        List<SpanData> children = spans.stream()
                .filter(child -> child.getParentSpanId().equals(span.getSpanId()))
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                .toList();
        for (int i = 0; i < children.size(); i++) {
            boolean last = i == children.size() - 1;
            render(children.get(i), spans, indent + (last ? "└─ " : "├─ "), indent + (last ? "   " : "│  "), out);
        }
    }
}
