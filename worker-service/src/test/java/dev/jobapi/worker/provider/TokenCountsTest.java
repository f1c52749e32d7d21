package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.jobapi.fakeprovider.DemoRepository;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 9: a token count is believed only as a whole number from 0 to
 * UsageRecord.MAX_TOKENS. A missing count is unknown usage (the attempt is quarantined), never 0; a
 * huge or fractional one is not read as a wrapped or rounded int.
 */
class TokenCountsTest {

    private static final TestTransport TRANSPORT =
            new TestTransport(Duration.ofSeconds(1), Duration.ofSeconds(1), 1, Duration.ofMillis(50), 1024 * 1024);

    private final OpenAiCompatibleProvider openAi = TestAdapters.openAi("counts", "http://127.0.0.1:9", TRANSPORT);

    private final AnthropicProvider anthropic = TestAdapters.anthropic("counts", "http://127.0.0.1:9", TRANSPORT);

    /** A whole OpenAI answer with the demo patch and {@code usage} as its last chunk's usage. */
    private ProviderOutcome openAiAnswer(String usage) throws IOException {
        var answer = new StreamingHttpProvider.StreamedAnswer("chatcmpl-1");
        String content =
                JsonNodeFactory.instance.textNode(DemoRepository.defaultPatch()).toString();
        openAi.onEvent(null, "{\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"content\":" + content + "}}]}", answer);
        openAi.onEvent(null, "{\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":" + usage + "}", answer);
        openAi.onEvent(null, "[DONE]", answer);
        return answer.outcome();
    }

    private static ProviderOutcome.Usage usageOf(ProviderOutcome outcome) {
        assertThat(outcome).isInstanceOf(ProviderOutcome.Completed.class);
        return ((ProviderOutcome.Completed) outcome).usage();
    }

    @Test
    void believableCountsAreTheUsage() throws IOException {
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":12,\"completion_tokens\":40}")))
                .isEqualTo(new ProviderOutcome.Usage(12, 40));
    }

    @Test
    void aMissingCountIsUnknownUsageNeverZero() throws IOException {
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":12}"))).isNull();
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":12,\"completion_tokens\":null}")))
                .isNull();
    }

    @Test
    void aCountPastTheBoundOrNotAWholeNumberIsUnknownUsageNeverAWrappedInt() throws IOException {
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":4294967297,\"completion_tokens\":40}")))
                .isNull();
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":10000001,\"completion_tokens\":40}")))
                .isNull();
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":-5,\"completion_tokens\":40}")))
                .isNull();
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":12.7,\"completion_tokens\":40}")))
                .isNull();
        assertThat(usageOf(openAiAnswer("{\"prompt_tokens\":\"12\",\"completion_tokens\":40}")))
                .isNull();
    }

    @Test
    void anthropicCountsAreHeldToTheSameBound() throws IOException {
        var answer = new StreamingHttpProvider.StreamedAnswer(null);
        String text =
                JsonNodeFactory.instance.textNode(DemoRepository.defaultPatch()).toString();
        anthropic.onEvent(
                "message_start",
                "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3000000000}}}",
                answer);
        anthropic.onEvent(
                "content_block_delta",
                "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":" + text + "}}",
                answer);
        anthropic.onEvent(
                "message_delta",
                "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":40}}",
                answer);
        anthropic.onEvent("message_stop", "{\"type\":\"message_stop\"}", answer);

        assertThat(usageOf(answer.outcome())).isNull();
    }
}
