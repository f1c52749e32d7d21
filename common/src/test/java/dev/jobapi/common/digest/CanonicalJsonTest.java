package dev.jobapi.common.digest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** Canonical JSON: meaning-preserving differences give the same bytes, any other difference does not. */
class CanonicalJsonTest {

    private final ObjectMapper mapper = new ObjectMapper();

    private String canonical(String json) throws Exception {
        return CanonicalJson.write(mapper.readTree(json));
    }

    @Test
    void sortsKeysAndDropsWhitespaceAtEveryLevel() throws Exception {
        assertThat(canonical("{ \"b\": 1, \"a\": { \"y\": [1, 2], \"x\": null } }"))
                .isEqualTo("{\"a\":{\"x\":null,\"y\":[1,2]},\"b\":1}");
    }

    @Test
    void reorderedKeysGiveTheSameDigest() throws Exception {
        assertThat(CanonicalJson.digest(mapper.readTree("{\"input\":{\"p\":\"x\",\"r\":\"demo\"},\"provider\":\"a\"}")))
                .isEqualTo(CanonicalJson.digest(
                        mapper.readTree("{\"provider\":\"a\",\"input\":{\"r\":\"demo\",\"p\":\"x\"}}")))
                .startsWith("sha256:");
    }

    @Test
    void changedValueGivesAnotherDigest() throws Exception {
        assertThat(CanonicalJson.digest(mapper.readTree("{\"a\":\"x\"}")))
                .isNotEqualTo(CanonicalJson.digest(mapper.readTree("{\"a\":\"y\"}")));
    }

    @Test
    void writesNumbersAsEcmaScriptDoes() throws Exception {
        assertThat(canonical("[1.0, 100, 1e2, -0, 0.5, 1e21, 1e-7, 123456789012, 3.14]"))
                .isEqualTo("[1,100,100,0,0.5,1e+21,1e-7,123456789012,3.14]");
    }

    @Test
    void escapesOnlyWhatMustBeEscaped() throws Exception {
        assertThat(canonical("{\"s\":\"\\u00e9\\n\\\"\\u001f/\"}")).isEqualTo("{\"s\":\"é\\n\\\"\\u001f/\"}");
    }

    @Test
    void sortsKeysByUtf16CodeUnits() throws Exception {
        // U+20AC (€) sorts before U+1F600 (😀, surrogates D83D...) in UTF-16 order.
        assertThat(canonical("{\"\\ud83d\\ude00\":1,\"\\u20ac\":2,\"a\":3}")).isEqualTo("{\"a\":3,\"€\":2,\"😀\":1}");
    }
}
