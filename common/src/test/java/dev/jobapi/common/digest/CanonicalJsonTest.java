package dev.jobapi.common.digest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Canonical JSON: RFC 8785's own vectors, the numbers JDK 17's Double.toString writes differently,
 * meaning-preserving differences giving the same bytes, and the I-JSON refusals.
 */
class CanonicalJsonTest {

    private final ObjectMapper mapper = new ObjectMapper();

    /** How the API reads bodies: every number exactly as its text says. */
    private final ObjectMapper exactMapper =
            new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private String canonical(String json) throws Exception {
        return CanonicalJson.write(mapper.readTree(json));
    }

    private String exactCanonical(String json) throws Exception {
        return CanonicalJson.write(exactMapper.readTree(json));
    }

    /** RFC 8785, Appendix B: IEEE 754 bit patterns and the text ECMAScript writes for them. */
    @ParameterizedTest
    @CsvSource({
        "0000000000000000, 0",
        "8000000000000000, 0",
        "0000000000000001, 5e-324",
        "8000000000000001, -5e-324",
        "7fefffffffffffff, 1.7976931348623157e+308",
        "ffefffffffffffff, -1.7976931348623157e+308",
        "4340000000000000, 9007199254740992",
        "c340000000000000, -9007199254740992",
        "4430000000000000, 295147905179352830000",
        "44b52d02c7e14af5, 9.999999999999997e+22",
        "44b52d02c7e14af6, 1e+23",
        "44b52d02c7e14af7, 1.0000000000000001e+23",
        "444b1ae4d6e2ef4e, 999999999999999700000",
        "444b1ae4d6e2ef4f, 999999999999999900000",
        "444b1ae4d6e2ef50, 1e+21",
        "3eb0c6f7a0b5ed8c, 9.999999999999997e-7",
        "3eb0c6f7a0b5ed8d, 0.000001",
        "41b3de4355555553, 333333333.3333332",
        "41b3de4355555554, 333333333.33333325",
        "41b3de4355555555, 333333333.3333333",
        "41b3de4355555556, 333333333.3333334",
        "41b3de4355555557, 333333333.33333343",
        "becbf647612f3696, -0.0000033333333333333333",
        "43143ff3c1cb0959, 1424953923781206.2"
    })
    void writesTheNumbersOfRfc8785AppendixB(String bits, String expected) {
        assertThat(CanonicalJson.number(Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16))))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"7fffffffffffffff", "7ff0000000000000", "fff0000000000000"})
    void refusesNaNAndInfinityAsRfc8785AppendixBDoes(String bits) {
        double value = Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16));
        assertThatThrownBy(() -> CanonicalJson.number(value)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Numbers whose Double.toString on JDK 17 is not the shortest form, so the digest would depend on the JDK. */
    @ParameterizedTest
    @CsvSource({"1e23, 1e+23", "2e23, 2e+23", "5e-324, 5e-324", "5e22, 5e+22", "4.99e21, 4.99e+21"})
    void writesTheNumbersJdk17FormatsDifferentlyAsEcmaScriptDoes(String sent, String expected) throws Exception {
        assertThat(exactCanonical("[" + sent + "]")).isEqualTo("[" + expected + "]");
    }

    @Test
    void everyWrittenNumberReadsBackAsTheSameDouble() {
        SplittableRandom random = new SplittableRandom(8785);
        for (int i = 0; i < 200_000; i++) {
            double value = Double.longBitsToDouble(random.nextLong());
            if (Double.isFinite(value)) {
                assertThat(Double.parseDouble(CanonicalJson.number(value))).isEqualTo(value == 0 ? 0.0 : value);
            }
        }
    }

    /** RFC 8785, section 3.2.2: the example with numbers, escapes and literals. */
    @Test
    void writesTheExampleOfRfc8785Section322() throws Exception {
        String input =
                """
                {
                  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
                  "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
                  "literals": [null, true, false]
                }""";
        assertThat(canonical(input))
                .isEqualTo("{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
                        + "\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
    }

    /** RFC 8785, section 3.2.3: members sorted by UTF-16 code units, whatever the locale. */
    @Test
    void sortsTheMembersOfRfc8785Section323() throws Exception {
        String input =
                """
                {
                  "\\u20ac": "Euro Sign",
                  "\\r": "Carriage Return",
                  "\\ufb33": "Hebrew Letter Dalet With Dagesh",
                  "1": "One",
                  "\\ud83d\\ude00": "Emoji: Grinning Face",
                  "\\u0080": "Control",
                  "\\u00f6": "Latin Small Letter O With Diaeresis"
                }""";
        assertThat(canonical(input))
                .isEqualTo("{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\","
                        + "\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\","
                        + "\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}");
    }

    /** The reference implementation's structural vectors (arrays, structures, french). */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "[56, {\"d\": true, \"10\": null, \"1\": [ ]}] | [56,{\"1\":[],\"10\":null,\"d\":true}]",
                "{\"1\": {\"f\": {\"f\": \"hi\",\"F\": 5} ,\"\\n\": 56.0}, \"10\": { }, \"\": \"empty\", \"a\": { },"
                        + " \"111\": [ {\"e\": \"yes\",\"E\": \"no\" } ], \"A\": {\"b\": \"123\"}}"
                        + " | {\"\":\"empty\",\"1\":{\"\\n\":56,\"f\":{\"F\":5,\"f\":\"hi\"}},\"10\":{},"
                        + "\"111\":[{\"E\":\"no\",\"e\":\"yes\"}],\"A\":{\"b\":\"123\"},\"a\":{}}",
                "{\"peach\": \"a\", \"péché\": \"b\", \"pêche\": \"c\", \"sin\": \"d\"}"
                        + " | {\"peach\":\"a\",\"péché\":\"b\",\"pêche\":\"c\",\"sin\":\"d\"}"
            })
    void writesTheReferenceImplementationsStructures(String input, String expected) throws Exception {
        assertThat(canonical(input)).isEqualTo(expected);
        assertThat(exactCanonical(input)).isEqualTo(expected);
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
        assertThat(exactCanonical("[1.0, 100, 1e2, -0, 0.5, 1e21, 1e-7, 123456789012, 3.14]"))
                .isEqualTo("[1,100,100,0,0.5,1e+21,1e-7,123456789012,3.14]");
    }

    @Test
    void escapesOnlyWhatMustBeEscaped() throws Exception {
        assertThat(canonical("{\"s\":\"\\u00e9\\n\\\"\\u001f/\"}")).isEqualTo("{\"s\":\"é\\n\\\"\\u001f/\"}");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "9007199254740993",
                "-9007199254740993",
                "18446744073709551616",
                "0.30000000000000001",
                "3.141592653589793238462643383279",
                "4.9e-324",
                "1e400",
                "1e-400",
                "333333333.33333329"
            })
    void refusesNumbersTheCanonicalFormWouldChange(String number) throws Exception {
        assertThat(CanonicalJson.keepsItsValue(exactMapper.readTree(number))).isFalse();
        assertThatThrownBy(() -> exactCanonical("{\"n\":" + number + "}"))
                .isInstanceOfSatisfying(NotIJsonException.class, e -> assertThat(e.kind())
                        .isEqualTo(NotIJsonException.Kind.INEXACT_NUMBER));
    }

    @ParameterizedTest
    @ValueSource(strings = {"9007199254740992", "-9007199254740991", "0.1", "1e+30", "5e-324", "1.50", "-0", "1E2"})
    void acceptsNumbersTheCanonicalFormKeeps(String number) throws Exception {
        assertThat(CanonicalJson.keepsItsValue(exactMapper.readTree(number))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"\\ud800\"", "\"a\\udc00b\"", "\"\\ude00\\ud83d\"", "{\"\\ud83d\":1}"})
    void refusesLoneSurrogatesInValuesAndNames(String json) {
        assertThatThrownBy(() -> canonical(json))
                .isInstanceOfSatisfying(NotIJsonException.class, e -> assertThat(e.kind())
                        .isEqualTo(NotIJsonException.Kind.LONE_SURROGATE));
    }

    @Test
    void sortsKeysByUtf16CodeUnits() throws Exception {
        // U+20AC (€) sorts before U+1F600 (😀, surrogates D83D...) in UTF-16 order.
        assertThat(canonical("{\"\\ud83d\\ude00\":1,\"\\u20ac\":2,\"a\":3}")).isEqualTo("{\"a\":3,\"€\":2,\"😀\":1}");
    }
}
