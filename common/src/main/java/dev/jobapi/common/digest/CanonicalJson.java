package dev.jobapi.common.digest;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Canonical JSON in the style of RFC 8785 (JCS): object members sorted by their UTF-16 code units,
 * no insignificant whitespace, numbers written as ECMAScript writes an IEEE 754 double, strings with
 * the minimal escaping. Two bodies that mean the same thing give the same bytes, so field order or
 * formatting never mints a new job.
 */
public final class CanonicalJson {

    private CanonicalJson() {}

    public static String write(JsonNode node) {
        StringBuilder out = new StringBuilder();
        append(node, out);
        return out.toString();
    }

    /** {@code sha256:<hex>} of the canonical bytes. */
    public static String digest(JsonNode node) {
        return Sha256.prefixed(write(node).getBytes(StandardCharsets.UTF_8));
    }

    private static void append(JsonNode node, StringBuilder out) {
        switch (node.getNodeType()) {
            case OBJECT -> appendObject(node, out);
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < node.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    append(node.get(i), out);
                }
                out.append(']');
            }
            case STRING -> appendString(node.textValue(), out);
            case NUMBER -> out.append(number(node.doubleValue()));
            case BOOLEAN -> out.append(node.booleanValue());
            case NULL -> out.append("null");
            default -> throw new IllegalArgumentException("Not a JSON value: " + node.getNodeType());
        }
    }

    private static void appendObject(JsonNode node, StringBuilder out) {
        List<String> names = new ArrayList<>();
        Iterator<String> it = node.fieldNames();
        it.forEachRemaining(names::add);
        // String.compareTo orders by UTF-16 code units, which is what RFC 8785 asks for.
        names.sort(String::compareTo);
        out.append('{');
        for (int i = 0; i < names.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            appendString(names.get(i), out);
            out.append(':');
            append(node.get(names.get(i)), out);
        }
        out.append('}');
    }

    private static void appendString(String value, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** ECMAScript's Number.prototype.toString for a finite double (RFC 8785, section 3.2.2.3). */
    static String number(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("JSON has no representation for " + value);
        }
        if (value == 0) {
            return "0"; // also for -0, as ECMAScript does
        }
        BigDecimal decimal = new BigDecimal(Double.toString(Math.abs(value))).stripTrailingZeros();
        String digits = decimal.unscaledValue().toString();
        int k = digits.length();
        int n = k - decimal.scale(); // value = 0.digits * 10^n
        StringBuilder out = new StringBuilder(value < 0 ? "-" : "");
        if (k <= n && n <= 21) {
            out.append(digits).append("0".repeat(n - k));
        } else if (0 < n && n <= 21) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.").append("0".repeat(-n)).append(digits);
        } else {
            out.append(digits.charAt(0));
            if (k > 1) {
                out.append('.').append(digits, 1, k);
            }
            int exponent = n - 1;
            out.append('e').append(exponent > 0 ? "+" : "-").append(Math.abs(exponent));
        }
        return out.toString();
    }
}
