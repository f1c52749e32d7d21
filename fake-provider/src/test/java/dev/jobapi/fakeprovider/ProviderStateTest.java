package dev.jobapi.fakeprovider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Which script answers a request: the first one added that takes its model and whose match its prompt contains. */
class ProviderStateTest {

    /** A model no script in these tests names. */
    private static final String ANY_MODEL = "gpt-test";

    @Test
    void theFirstScriptAddedWhoseMatchThePromptContainsAnswers() {
        ProviderState state = new ProviderState();
        state.addScript(Script.of("-1]", Step.failing(502)));
        state.addScript(Script.of("[job-1]", Step.failing(429)));
        state.addScript(Script.of("[job-12]", Step.failing(500)));

        assertEquals(502, statusOf(state.takeStep(ANY_MODEL, "fix it [job-1]")));
        assertEquals(500, statusOf(state.takeStep(ANY_MODEL, "fix it [job-12] now")));
        assertNull(state.takeStep(ANY_MODEL, "fix it [job-2]"));
    }

    @Test
    void aMatchInsideALongPromptIsFoundAndTheLastStepRepeats() {
        ProviderState state = new ProviderState();
        for (int n = 0; n < 30_000; n++) {
            state.addScript(Script.of("[soak " + n + "]", Step.ok()));
        }
        state.addScript(Script.of("[soak x]", Step.failing(502), Step.failing(503)));
        String prompt = "context ".repeat(60_000) + "[soak x] " + "[".repeat(1_000);

        assertEquals(502, statusOf(state.takeStep(ANY_MODEL, prompt)));
        assertEquals(503, statusOf(state.takeStep(ANY_MODEL, prompt)));
        assertEquals(503, statusOf(state.takeStep(ANY_MODEL, prompt)));
    }

    @Test
    void anEmptyMatchAnswersEveryPromptNoEarlierScriptMatches() {
        ProviderState state = new ProviderState();
        state.addScript(Script.of("[a]", Step.failing(429)));
        state.addScript(Script.of("", Step.failing(503)));
        state.addScript(Script.of("[b]", Step.failing(500)));

        assertEquals(429, statusOf(state.takeStep(ANY_MODEL, "x [a]")));
        assertEquals(503, statusOf(state.takeStep(ANY_MODEL, "x [b]")));
        assertEquals(503, statusOf(state.takeStep(ANY_MODEL, "")));
    }

    @Test
    void aScriptForAModelAnswersOnlyThatModelAndNoModelWhoseNameMerelyStartsTheSame() {
        ProviderState state = new ProviderState();
        state.addScript(Script.forModel("fake-a", Step.failing(400)));

        assertEquals(400, statusOf(state.takeStep("fake-a", "any prompt at all")));
        assertNull(state.takeStep("fake-a2", "any prompt at all"));
        assertNull(state.takeStep("fake-anthropic", "any prompt at all"));
        assertNull(state.takeStep("fake-b", "fake-a"), "the model, not the prompt text, is matched");
    }

    @Test
    void aScriptForAModelAndAMatchNeedsBoth() {
        ProviderState state = new ProviderState();
        state.addScript(Script.forModel("fake-b", "Add a new file NOTICE", Step.failing(429)));

        assertEquals(429, statusOf(state.takeStep("fake-b", "Add a new file NOTICE whose only line is: x")));
        assertNull(state.takeStep("fake-b", "Rename greet"));
        assertNull(state.takeStep("fake-a", "Add a new file NOTICE whose only line is: x"));
    }

    @Test
    void theFirstScriptAddedAnswersWhetherItNamesTheModelOrNot() {
        ProviderState state = new ProviderState();
        state.addScript(Script.of("[job-1]", Step.failing(502)));
        state.addScript(Script.forModel("fake-a", Step.failing(400)));
        state.addScript(Script.of("[job-2]", Step.failing(503)));

        assertEquals(502, statusOf(state.takeStep("fake-a", "fix it [job-1]")));
        assertEquals(400, statusOf(state.takeStep("fake-a", "fix it [job-2]")));
        assertEquals(503, statusOf(state.takeStep("fake-b", "fix it [job-2]")));
    }

    private static int statusOf(Step step) {
        return step.status();
    }
}
