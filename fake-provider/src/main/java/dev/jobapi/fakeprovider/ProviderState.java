package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * The scripts, request log, callbacks sent, lookups received and stored completions of one run.
 *
 * <p>A reset replaces the whole object rather than emptying it: a request still sleeping through its delay keeps
 * writing into the state it arrived in, so a late completion of one test can never show up in the next.
 */
final class ProviderState {

    private final List<ScriptCursor> scripts = new ArrayList<>();
    /**
     * Where to find a script without trying each one (a soak adds one per job, 27,000 in 30 minutes,
     * and some prompts are half a megabyte): the first script added for each model and match (model
     * null: any model), by its index in {@link #scripts}; the lengths of the matches; and the
     * characters they start with.
     */
    private final Map<ScriptKey, Integer> firstScriptByKey = new HashMap<>();

    private final SortedSet<Integer> matchLengths = new TreeSet<>();
    private final BitSet matchFirstChars = new BitSet(Character.MAX_VALUE + 1);
    private final List<ReceivedRequest> log = new ArrayList<>();
    private final Map<String, ObjectNode> completions = new LinkedHashMap<>();
    private final Map<String, Long> stalls = new LinkedHashMap<>();
    /** Stored completion ids by one of their metadata entries ("key=value"), so a lookup is not a scan of them all. */
    private final Map<String, List<String>> completionIdsByMetadata = new HashMap<>();

    private final List<CallbackSent> callbacks = new ArrayList<>();
    private final List<LookupReceived> lookups = new ArrayList<>();

    synchronized void addScript(Script script) {
        scripts.add(new ScriptCursor(script));
        String match = script.match();
        firstScriptByKey.putIfAbsent(new ScriptKey(script.model(), match), scripts.size() - 1);
        matchLengths.add(match.length());
        if (!match.isEmpty()) {
            matchFirstChars.set(match.charAt(0));
        }
    }

    /**
     * The next step of the first script added that takes {@code model} and whose match the prompt
     * contains, or null for the default answer: every substring of the prompt as long as some match,
     * starting with a character some match starts with, is looked up for this model and for any model.
     */
    synchronized Step takeStep(String model, String prompt) {
        int first = Integer.MAX_VALUE;
        for (int length : matchLengths) {
            for (int start = 0; start + length <= prompt.length(); start++) {
                if (length > 0 && !matchFirstChars.get(prompt.charAt(start))) {
                    continue;
                }
                String candidate = prompt.substring(start, start + length);
                first = Math.min(first, indexOf(new ScriptKey(null, candidate)));
                first = Math.min(first, indexOf(new ScriptKey(model, candidate)));
                if (length == 0) {
                    break;
                }
            }
        }
        return first == Integer.MAX_VALUE ? null : scripts.get(first).next();
    }

    private int indexOf(ScriptKey key) {
        return firstScriptByKey.getOrDefault(key, Integer.MAX_VALUE);
    }

    /** Logs an arrival and returns its slot, so the log keeps arrival order even when answers finish out of order. */
    synchronized int logArrival(ReceivedRequest request) {
        log.add(request);
        return log.size() - 1;
    }

    synchronized void logOutcome(int slot, UnaryOperator<ReceivedRequest> outcome) {
        log.set(slot, outcome.apply(log.get(slot)));
    }

    synchronized List<ReceivedRequest> requests() {
        return List.copyOf(log);
    }

    synchronized void logCallback(CallbackSent callback) {
        callbacks.add(callback);
    }

    synchronized List<CallbackSent> callbacks() {
        return List.copyOf(callbacks);
    }

    synchronized void logLookup(LookupReceived lookup) {
        lookups.add(lookup);
    }

    synchronized List<LookupReceived> lookups() {
        return List.copyOf(lookups);
    }

    /** Stores a completion; reading it back stalls {@code stallMs} halfway through the body (0: no stall). */
    synchronized void store(String id, ObjectNode completion, long stallMs) {
        completions.put(id, completion);
        stalls.put(id, stallMs);
        completion.path("metadata").fields().forEachRemaining(entry -> completionIdsByMetadata
                .computeIfAbsent(metadataEntry(entry.getKey(), entry.getValue().asText()), key -> new ArrayList<>())
                .add(id));
    }

    /** How long reading back the stored completions with these ids stalls: the longest of their stalls. */
    synchronized long stallOf(List<String> ids) {
        return ids.stream().mapToLong(id -> stalls.getOrDefault(id, 0L)).max().orElse(0);
    }

    synchronized Optional<ObjectNode> completion(String id) {
        return Optional.ofNullable(completions.get(id));
    }

    /** Stored completions whose metadata holds every given key with the given value, oldest first. */
    synchronized List<ObjectNode> completionsWithMetadata(Map<String, String> filter) {
        Collection<String> candidates = filter.entrySet().stream()
                .findFirst()
                .<Collection<String>>map(first -> completionIdsByMetadata.getOrDefault(
                        metadataEntry(first.getKey(), first.getValue()), List.of()))
                .orElse(completions.keySet());
        List<ObjectNode> found = new ArrayList<>();
        for (String id : candidates) {
            ObjectNode completion = completions.get(id);
            JsonNode metadata = completion.path("metadata");
            boolean matches = filter.entrySet().stream()
                    .allMatch(wanted -> metadata.hasNonNull(wanted.getKey())
                            && metadata.get(wanted.getKey()).asText().equals(wanted.getValue()));
            if (matches) {
                found.add(completion);
            }
        }
        return found;
    }

    private static String metadataEntry(String key, String value) {
        return key + "=" + value;
    }

    /** The model (null: any) and the prompt text a script is looked up by. */
    private record ScriptKey(String model, String match) {}

    /** A script and how many of its steps have been taken. */
    private static final class ScriptCursor {
        private final Script script;
        private int taken;

        ScriptCursor(Script script) {
            this.script = script;
        }

        Step next() {
            List<Step> steps = script.steps();
            // The last step repeats, so [502, 502, 200] means "two failures, then healthy for good".
            Step step = steps.get(Math.min(taken, steps.size() - 1));
            taken++;
            return step;
        }
    }
}
