package dev.jobapi.fakeprovider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar's command line: where it listens and how it seeds the demo repository. */
class FakeProviderMainTest {

    @Test
    void seedDemoRepoWritesTheDemoFiles(@TempDir Path dir) throws IOException {
        FakeProviderMain.main(new String[] {"seed-demo-repo", dir.toString()});

        for (Map.Entry<String, String> file : DemoRepository.files().entrySet()) {
            assertEquals(file.getValue(), Files.readString(dir.resolve(file.getKey())));
        }
    }

    @Test
    void listensOn8090OfLoopbackByDefault() {
        assertEquals(
                new FakeProviderMain.Options("127.0.0.1", 8090),
                FakeProviderMain.Options.parse(new String[0], Map.of()));
    }

    @Test
    void takesPortFromEnvironmentAndFlagsOverrideIt() {
        Map<String, String> env = Map.of("FAKE_PROVIDER_PORT", "9100", "FAKE_PROVIDER_HOST", "0.0.0.0");

        assertEquals(new FakeProviderMain.Options("0.0.0.0", 9100), FakeProviderMain.Options.parse(new String[0], env));
        assertEquals(
                new FakeProviderMain.Options("127.0.0.1", 9200),
                FakeProviderMain.Options.parse(new String[] {"--port", "9200", "--host", "127.0.0.1"}, env));
    }

    @Test
    void takesTheCallbackTargetFromEnvironmentOrFlagsAndOnlyWithItsSecret() {
        Map<String, String> env =
                Map.of("FAKE_CALLBACK_BASE_URL", "http://api:8080", "FAKE_CALLBACK_SECRET", "from-env");

        assertEquals(
                new FakeProviderMain.Options("127.0.0.1", 8090, "http://api:8080", "from-env"),
                FakeProviderMain.Options.parse(new String[0], env));
        assertEquals(
                new FakeProviderMain.Options("127.0.0.1", 8090, "http://127.0.0.1:8080", "s"),
                FakeProviderMain.Options.parse(
                        new String[] {"--callback-base-url", "http://127.0.0.1:8080", "--callback-secret", "s"},
                        Map.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> FakeProviderMain.Options.parse(new String[] {"--callback-base-url", "http://x"}, Map.of()));
    }

    @Test
    void refusesUnknownArgumentsAndBadPorts() {
        assertThrows(
                IllegalArgumentException.class,
                () -> FakeProviderMain.Options.parse(new String[] {"--prot", "1"}, Map.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> FakeProviderMain.Options.parse(new String[] {"--port"}, Map.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> FakeProviderMain.Options.parse(new String[] {"--port", "http"}, Map.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> FakeProviderMain.Options.parse(new String[0], Map.of("FAKE_PROVIDER_PORT", "70000")));
    }
}
