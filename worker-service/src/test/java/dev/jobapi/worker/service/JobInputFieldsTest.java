package dev.jobapi.worker.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The prompt and the base ref a worker reads from a job's input are what the input's tree gives
 * ({@code readTree(input).path(name).asText(whenAbsent)}), for every shape the field can take.
 */
class JobInputFieldsTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final UUID JOB = UUID.fromString("00000000-0000-0000-0000-000000000001");

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"prompt\":\"fix the off-by-one\",\"repository\":\"demo\",\"baseRef\":\"main\"}",
                "{\"repository\":\"demo\"}",
                "{\"prompt\":null,\"baseRef\":null}",
                "{\"prompt\":\"\",\"baseRef\":\"\"}",
                "{\"prompt\":12,\"baseRef\":1e2}",
                "{\"prompt\":-0.5,\"baseRef\":true}",
                "{\"prompt\":{\"prompt\":\"nested\"},\"baseRef\":[\"main\"]}",
                "{\"context\":{\"prompt\":\"nested\",\"baseRef\":\"nested\"},\"prompt\":\"top\"}",
                "{\"files\":[{\"baseRef\":\"in an array\"},[1,[2]]],\"baseRef\":\"release/1.2\"}",
                "{\"prompt\":\"first\",\"prompt\":\"last\"}",
                "{\"prompt\":\"unicode \\u00e9 and \\\"quotes\\\"\\n\"}",
                "[\"prompt\",\"baseRef\"]",
                "\"prompt\"",
                "{}"
            })
    void aFieldReadsAsTheInputsTreeReadsIt(String input) throws Exception {
        for (String name : new String[] {"prompt", "baseRef"}) {
            String tree = MAPPER.readTree(input).path(name).asText("absent");
            assertThat(JobInputFields.text(MAPPER, JOB, input, name, "absent"))
                    .as("%s of %s", name, input)
                    .isEqualTo(tree);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"prompt\":", "{\"prompt\" \"x\"}", "not json"})
    void anInputThatIsNotJsonIsRefusedNamingTheJob(String input) {
        assertThatThrownBy(() -> JobInputFields.text(MAPPER, JOB, input, "prompt", ""))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Stored input of job " + JOB + " is not JSON");
    }
}
