package dev.jobapi.common.digest;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.erdtman.jcs.NumberToJSON;

/**
 * Canonical JSON as RFC 8785 (JCS) defines it: object members sorted by their UTF-16 code units, no
 * insignificant whitespace, numbers written as ECMAScript writes an IEEE 754 double, strings with the
 * minimal escaping. Two bodies that mean the same thing give the same bytes, so field order or
 * formatting never mints a new job; the bytes are the same on every JDK.
 *
 * <p>The input must be I-JSON (RFC 7493), as RFC 8785 requires: a string with an unpaired surrogate
 * or a number the canonical form would change (see {@link #keepsItsValue}) is refused with {@link
 * NotIJsonException} instead of being written as something else.
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

    /**
     * Whether the canonical form of this number denotes the same value as the number itself, so that
     * writing it neither rounds it (9007199254740993, 0.30000000000000001) nor loses it (1e400,
     * 1e-400). A tree read with Jackson's {@code USE_BIG_DECIMAL_FOR_FLOATS} holds each number exactly
     * as the text said; a tree that already holds a double has nothing left to lose.
     */
    public static boolean keepsItsValue(JsonNode number) {
        double value = number.doubleValue();
        if (!Double.isFinite(value)) {
            return false;
        }
        if (number.isDouble() || number.isFloat()) {
            return true;
        }
        return new BigDecimal(number(value)).compareTo(number.decimalValue()) == 0;
    }

    /** Whether the text holds a UTF-16 surrogate without its partner, which no UTF-8 byte can encode. */
    public static boolean hasLoneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
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
            case NUMBER -> appendNumber(node, out);
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
        if (hasLoneSurrogate(value)) {
            throw new NotIJsonException(NotIJsonException.Kind.LONE_SURROGATE, "A string holds an unpaired surrogate.");
        }
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

    private static void appendNumber(JsonNode node, StringBuilder out) {
        if (!keepsItsValue(node)) {
            throw new NotIJsonException(
                    NotIJsonException.Kind.INEXACT_NUMBER,
                    "The number " + node.asText() + " is not exact as a double.");
        }
        out.append(number(node.doubleValue()));
    }

    /** ECMAScript's Number.prototype.toString for a finite double (RFC 8785, section 3.2.2.3). */
    public static String number(double value) {
        try {
            return NumberToJSON.serializeNumber(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("JSON has no representation for " + value, e);
        }
    }
}
