package dev.jobapi.api.rest;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.cfg.MutableCoercionConfig;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.type.LogicalType;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.digest.CanonicalJson;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.vertx.core.http.HttpHeaders;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;

/**
 * Reads request bodies ourselves: size first, then JSON with a nesting bound, then I-JSON (RFC 7493)
 * so the canonical digest (RFC 8785) never turns one value into another, then the typed shape with
 * unknown fields refused. Every failure is a precise 400/413 problem, never a 500.
 */
@Singleton
public class RequestBodies {

    private final ObjectMapper mapper;
    private final JobApiConfig config;
    private final CurrentVertxRequest current;

    RequestBodies(ObjectMapper mapper, JobApiConfig config, CurrentVertxRequest current) {
        this.config = config;
        this.current = current;
        // Numbers are kept exactly as sent, so a number a double would round is seen and refused;
        // a repeated member name is refused rather than silently keeping the last value.
        // Nothing after the document, and no value read as another type: a string is no number or
        // boolean, a number no string or enum, an empty string or array no object. A lenient reader
        // once took an operator's mistyped bulk request for "every dead letter".
        this.mapper = mapper.copy()
                .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
                .configure(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, true)
                .configure(DeserializationFeature.FAIL_ON_TRAILING_TOKENS, true)
                .configure(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS, true)
                .configure(DeserializationFeature.ACCEPT_SINGLE_VALUE_AS_ARRAY, false)
                .configure(DeserializationFeature.ACCEPT_EMPTY_STRING_AS_NULL_OBJECT, false)
                .configure(DeserializationFeature.ACCEPT_EMPTY_ARRAY_AS_NULL_OBJECT, false)
                .configure(JsonParser.Feature.STRICT_DUPLICATE_DETECTION, true);
        refuseCoercions(this.mapper);
        this.mapper
                .getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(config.intake().maxNestingDepth())
                        .build());
    }

    /** Every scalar shape to every other scalar type, and empty values to objects: refused. */
    private static void refuseCoercions(ObjectMapper mapper) {
        for (LogicalType type : LogicalType.values()) {
            MutableCoercionConfig coercions = mapper.coercionConfigFor(type);
            for (CoercionInputShape shape : new CoercionInputShape[] {
                CoercionInputShape.Integer,
                CoercionInputShape.Float,
                CoercionInputShape.Boolean,
                CoercionInputShape.String,
                CoercionInputShape.EmptyString,
                CoercionInputShape.EmptyArray,
                CoercionInputShape.EmptyObject
            }) {
                if (!isNative(type, shape)) {
                    coercions.setCoercion(shape, CoercionAction.Fail);
                }
            }
        }
    }

    /** Whether {@code shape} is how JSON writes a {@code type} in the first place (no coercion). */
    private static boolean isNative(LogicalType type, CoercionInputShape shape) {
        return switch (shape) {
            case Integer -> type == LogicalType.Integer || type == LogicalType.Float;
            case Float -> type == LogicalType.Float;
            case Boolean -> type == LogicalType.Boolean;
            case String, EmptyString -> type == LogicalType.Textual
                    || type == LogicalType.DateTime
                    || type == LogicalType.Enum
                    || type == LogicalType.OtherScalar;
            case EmptyArray -> type == LogicalType.Array || type == LogicalType.Collection;
            case EmptyObject -> type == LogicalType.POJO || type == LogicalType.Map || type == LogicalType.Untyped;
            default -> true;
        };
    }

    /**
     * The body as a JSON tree; the canonical digest is computed from this tree. The bytes must be
     * UTF-8 (RFC 8259 section 8.1): they are decoded strictly first, so a malformed sequence, an
     * overlong form or an encoded surrogate is a 400, and no other encoding is guessed from them.
     */
    public JsonNode tree(byte[] body) {
        if (body.length > config.intake().maxBodyBytes()) {
            throw tooLarge();
        }
        if (body.length == 0) {
            throw new ProblemException(Problem.INVALID_REQUEST, "The request body is empty; send a JSON object.");
        }
        // A body without a type matches any @Consumes; the contract says JSON, so say it.
        if (current.getCurrent().request().getHeader(HttpHeaders.CONTENT_TYPE) == null) {
            throw new ProblemException(
                    Problem.UNSUPPORTED_MEDIA_TYPE, "Send Content-Type: application/json with a JSON body.");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "The body is not well-formed UTF-8.");
        }
        try {
            JsonNode node = mapper.readTree(text);
            if (node == null || !node.isObject()) {
                throw new ProblemException(Problem.INVALID_REQUEST, "The request body must be a JSON object.");
            }
            checkValues(node);
            return node;
        } catch (StreamConstraintsException e) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "The body is past a parser limit (at most "
                            + config.intake().maxNestingDepth()
                            + " levels of nesting, numbers of at most 1000 digits): " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            // Raw surrogate bytes fail the strict decode above; an escaped lone surrogate, in a name or
            // a value, reaches checkValues. A parser's own word on one is the same I-JSON rule.
            Problem problem =
                    e.getOriginalMessage().contains("surrogate") ? Problem.NOT_I_JSON : Problem.INVALID_REQUEST;
            throw new ProblemException(problem, "Malformed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "The body could not be read.");
        }
    }

    /**
     * Checks what the parser lets through but nothing downstream can hold: more values than
     * {@code maxElements}; what I-JSON refuses and canonical JSON cannot write (a number that would
     * change as a double, a lone surrogate); and NUL characters, which PostgreSQL text cannot store
     * and no job needs. I-JSON problems name the value by its JSON Pointer.
     */
    private void checkValues(JsonNode root) {
        int max = config.intake().maxElements();
        // Counted when pushed, so the bound holds before the children are queued; each entry links to
        // its parent and the pointer is spelled out only for an error, so memory stays proportional to
        // the values however long the member names are.
        int count = 1;
        Deque<Located> pending = new ArrayDeque<>();
        pending.push(new Located(null, "", root));
        while (!pending.isEmpty()) {
            Located next = pending.pop();
            JsonNode node = next.node();
            if (node.isNumber() && !CanonicalJson.keepsItsValue(node)) {
                throw new ProblemException(
                        Problem.NOT_I_JSON,
                        "The number " + abbreviated(node.asText()) + " at '" + next.pointer()
                                + "' would change as an IEEE 754 double (canonical form "
                                + canonicalOrOutOfRange(node)
                                + "); send the number as the double's shortest form, or as a string.");
            }
            if (node.isTextual()) {
                requireStorableText(node.textValue(), next);
            }
            count += node.size();
            if (count > max) {
                throw new ProblemException(
                        Problem.INVALID_REQUEST, "The body holds more than " + max + " JSON values.");
            }
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (field.getKey().indexOf('\0') >= 0) {
                    throw new ProblemException(Problem.INVALID_REQUEST, "Names must not contain NUL (\\u0000).");
                }
                if (CanonicalJson.hasLoneSurrogate(field.getKey())) {
                    throw new ProblemException(
                            Problem.NOT_I_JSON,
                            "A member name in '" + abbreviated(next.pointer()) + "' holds a UTF-16 surrogate"
                                    + " without its partner (one of \\ud800-\\udfff alone), which no UTF-8 text"
                                    + " can carry.");
                }
                pending.push(new Located(next, escapedPointerToken(field.getKey()), field.getValue()));
            }
            for (int i = 0; node.isArray() && i < node.size(); i++) {
                pending.push(new Located(next, Integer.toString(i), node.get(i)));
            }
        }
    }

    /** A value and where it is: its parent and its own token of the JSON Pointer. */
    private record Located(Located parent, String token, JsonNode node) {
        /** RFC 6901's pointer, spelled out from the root. */
        String pointer() {
            Deque<String> tokens = new ArrayDeque<>();
            for (Located at = this; at.parent() != null; at = at.parent()) {
                tokens.push(at.token());
            }
            return tokens.isEmpty() ? "" : "/" + String.join("/", tokens);
        }
    }

    private static void requireStorableText(String text, Located where) {
        if (text.indexOf('\0') >= 0) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Strings must not contain NUL (\\u0000).");
        }
        if (CanonicalJson.hasLoneSurrogate(text)) {
            throw new ProblemException(
                    Problem.NOT_I_JSON,
                    "The string at '" + abbreviated(where.pointer()) + "' holds a UTF-16 surrogate without its partner"
                            + " (one of \\ud800-\\udfff alone), which no UTF-8 text can carry.");
        }
    }

    private static String canonicalOrOutOfRange(JsonNode number) {
        double value = number.doubleValue();
        return Double.isFinite(value) ? CanonicalJson.number(value) : "none: beyond the range of a double";
    }

    /** RFC 6901: '~' and '/' in a member name are written as '~0' and '~1'. */
    private static String escapedPointerToken(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }

    private static String abbreviated(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }

    /** The tree bound to a request type; unknown fields and wrong types are a 400. */
    public <T> T bind(JsonNode tree, Class<T> type) {
        try {
            return mapper.treeToValue(tree, type);
        } catch (UnrecognizedPropertyException e) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "Unknown field '" + e.getPropertyName() + "'; allowed: " + e.getKnownPropertyIds());
        } catch (JsonProcessingException e) {
            String where = e instanceof com.fasterxml.jackson.databind.JsonMappingException m
                    ? " at '" + m.getPathReference() + "'"
                    : "";
            throw new ProblemException(Problem.INVALID_REQUEST, "Wrong type" + where + ": " + e.getOriginalMessage());
        }
    }

    /** A job's input as it will be stored (canonical JSON); 413 past {@code maxInputBytes}. */
    public void requireStorableInput(String canonicalInput) {
        int bytes = canonicalInput.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > config.intake().maxInputBytes()) {
            throw new ProblemException(
                    Problem.PAYLOAD_TOO_LARGE,
                    "The input is " + bytes + " bytes as canonical JSON; at most "
                            + config.intake().maxInputBytes() + " are accepted.");
        }
    }

    /** A person's reason from a body, checked by {@link Reasons}; a 400 names {@code field}. */
    public String reason(String field, String value) {
        return Reasons.require(field, value, config.intake().maxReasonLength());
    }

    public ProblemException tooLarge() {
        return new ProblemException(
                Problem.PAYLOAD_TOO_LARGE, "The body exceeds " + config.intake().maxBodyBytes() + " bytes.");
    }
}
