package dev.jobapi.fakeprovider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Which script answers a prompt: the first one added whose match the prompt contains. */
class ProviderStateTest {

    @Test
    void theFirstScriptAddedWhoseMatchThePromptContainsAnswers() {
        ProviderState state = new ProviderState();
        state.addScript(Script.of("-1]", Step.failing(502)));
        state.addScript(Script.of("[job-1]", Step.failing(429)));
        state.addScript(Script.of("[job-12]", Step.failing(500)));

        assertEquals(502, statusOf(state.takeStep("fix it [job-1]")));
        assertEquals(500, statusOf(state.takeStep("fix it [job-12] now")));
        assertNull(state.takeStep("fix it [job-2]"));
    }

    @Test
    void aMatchInsideALongPromptIsFoundAndTheLastStepRepeats() {
        ProviderState state = new ProviderState();
        for (int n = 0; n < 30_000; n++) {
            state.addScript(Script.of("[soak " + n + "]", Step.ok()));
        }
        state.addScript(Script.of("[soak x]", Step.failing(502), Step.failing(503)));
        String prompt = "context ".repeat(60_000) + "[soak x] " + "[".repeat(1_000);

        assertEquals(502, statusOf(state.takeStep(prompt)));
        assertEquals(503, statusOf(state.takeStep(prompt)));
        assertEquals(503, statusOf(state.takeStep(prompt)));
    }

    @Test
    void anEmptyMatchAnswersEveryPromptNoEarlierScriptMatches() {
        ProviderState state = new ProviderState();
        state.addScript(Script.of("[a]", Step.failing(429)));
        state.addScript(Script.of("", Step.failing(503)));
        state.addScript(Script.of("[b]", Step.failing(500)));

        assertEquals(429, statusOf(state.takeStep("x [a]")));
        assertEquals(503, statusOf(state.takeStep("x [b]")));
        assertEquals(503, statusOf(state.takeStep("")));
    }

    private static int statusOf(Step step) {
        return step.status();
    }
}
