package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.worker.config.WorkerConfig;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.jboss.logging.Logger;

/**
 * The OpenAI chat-completions adapter ({@code kind=openai}; also spoken by the fake provider).
 * Streams with usage in the final chunk; our attempt id goes in {@code metadata.attempt_id}, our
 * request key in the {@code Idempotency-Key} header. A choice finishing with {@code length} was cut
 * off at the output limit: failed, with its usage.
 */
class OpenAiCompatibleProvider extends StreamingHttpProvider {

    private static final Logger LOG = Logger.getLogger(OpenAiCompatibleProvider.class);

    /** A stored completion is one patch; a body larger than this is not read. */
    private static final int LOOKUP_BODY_CAP = 16 * 1024 * 1024;

    OpenAiCompatibleProvider(
            String name,
            WorkerConfig.Provider settings,
            WorkerConfig.Providers transport,
            AnnouncedLimits limits,
            ObjectMapper mapper,
            Clock clock) {
        super(name, settings, transport, limits, mapper, clock);
    }

    @Override
    protected HttpPost streamingRequest(ProviderRequest request) {
        ObjectNode body = mapper.createObjectNode();
        body.put("model", settings.model());
        // Bounds the answer, so the claim's money reservation bounds the call's cost (rule 20).
        body.put("max_tokens", settings.maxTokens());
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        body.put("store", true);
        body.putObject("metadata").put("attempt_id", request.attemptId().toString());
        body.putArray("messages").addObject().put("role", "user").put("content", request.prompt());
        HttpPost post = post("/v1/chat/completions", body.toString().getBytes(StandardCharsets.UTF_8));
        post.setHeader("Accept", "text/event-stream");
        post.setHeader("Idempotency-Key", request.requestKey());
        authorize(post);
        return post;
    }

    @Override
    protected String requestIdHeader() {
        return "x-request-id";
    }

    /** Chunks carry only {@code data:} lines; {@code [DONE]} ends a whole answer. */
    @Override
    protected void onEvent(String event, String data, StreamedAnswer answer) throws IOException {
        if (data.equals("[DONE]")) {
            answer.complete();
            return;
        }
        JsonNode chunk = mapper.readTree(data);
        if (answer.remoteId() == null && chunk.hasNonNull("id")) {
            answer.remoteId(chunk.get("id").asText());
        }
        for (JsonNode choice : chunk.path("choices")) {
            answer.append(choice.path("delta").path("content").asText(""));
            if (choice.path("finish_reason").asText().equals("length")) {
                answer.truncated("finish_reason length");
            }
        }
        JsonNode reported = chunk.get("usage");
        if (reported != null && reported.isObject()) {
            answer.promptTokens(tokenCount(reported.path("prompt_tokens"), "prompt_tokens"));
            answer.completionTokens(tokenCount(reported.path("completion_tokens"), "completion_tokens"));
        }
    }

    /**
     * Stored chat completions: {@code GET /v1/chat/completions/{id}} when we learned the id, else the
     * list filtered by our attempt id in {@code metadata}. Requests are sent with {@code store: true}.
     * The whole lookup, headers and body, takes at most the read timeout: past it the body is closed
     * and nothing is found, so one hung provider never holds the reconciler. A stored completion cut
     * off at the output limit is no answer to apply: it is found as failed, with its usage.
     */
    @Override
    public Optional<ProviderOutcome> lookup(UUID attemptId, String remoteId) {
        Instant until = clock.instant().plus(readTimeout);
        String path = remoteId != null
                ? "/v1/chat/completions/" + URLEncoder.encode(remoteId, StandardCharsets.UTF_8)
                : "/v1/chat/completions?metadata%5Battempt_id%5D=" + attemptId;
        HttpGet get = get(path);
        authorize(get);
        try {
            ClassicHttpResponse response = open(get);
            if (response.getCode() != 200) {
                end(get, response, false);
                return Optional.empty();
            }
            Optional<byte[]> read = readBody(get, response, until, LOOKUP_BODY_CAP);
            if (read.isEmpty()) {
                LOG.debugf("Lookup of attempt %s at %s: no whole answer within the read timeout", attemptId, name);
                return Optional.empty();
            }
            JsonNode body = mapper.readTree(read.get());
            JsonNode completion = body.has("data") ? body.path("data").path(0) : body;
            if (completion.isMissingNode() || !completion.hasNonNull("id")) {
                return Optional.empty();
            }
            JsonNode choice = completion.path("choices").path(0);
            JsonNode reported = completion.get("usage");
            ProviderOutcome.Usage usage = reported != null && reported.isObject() ? usage(reported) : null;
            if (choice.path("finish_reason").asText().equals("length")) {
                return Optional.of(new ProviderOutcome.Failed(
                        completion.get("id").asText(),
                        "the stored answer was cut off at the output limit (finish_reason length)",
                        usage,
                        usage == null,
                        false));
            }
            String content = choice.path("message").path("content").asText("");
            return Optional.of(ProviderOutcome.answer(
                    completion.get("id").asText(), content.getBytes(StandardCharsets.UTF_8), usage));
        } catch (IOException e) {
            LOG.debugf("Lookup of attempt %s at %s failed: %s", attemptId, name, e);
            return Optional.empty();
        }
    }

    private void authorize(HttpUriRequestBase request) {
        settings.apiKey().ifPresent(key -> request.setHeader("Authorization", "Bearer " + key));
    }

    /** Null unless both counts are reported and believable: half a usage is no usage. */
    private ProviderOutcome.Usage usage(JsonNode reported) {
        Integer prompt = tokenCount(reported.path("prompt_tokens"), "prompt_tokens");
        Integer completion = tokenCount(reported.path("completion_tokens"), "completion_tokens");
        return prompt != null && completion != null ? new ProviderOutcome.Usage(prompt, completion) : null;
    }
}
