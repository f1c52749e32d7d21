package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Providers come from the deployment, never from the build: the production profile of this
 * service's application.properties configures none, and local runs take the fake provider's from
 * the one file under dev/config that quarkus:dev, bin/dev up, chaos/run and bench/run all read.
 */
class ProviderConfigTest {

    private static final Path APPLICATION = Path.of("src/main/resources/application.properties");
    private static final Path LOCAL_WORKER = Path.of("../dev/config/worker-service.properties");
    private static final Path LOCAL_API = Path.of("../dev/config/api-service.properties");

    @Test
    void theProductionProfileConfiguresNoProvider() throws IOException {
        WorkerConfig config = config("prod", APPLICATION).getConfigMapping(WorkerConfig.class);

        assertThat(config.provider()).isEmpty();
    }

    @Test
    void quarkusDevReadsTheSameLocalFileTheScriptsPass() throws IOException {
        SmallRyeConfig dev = config("dev", APPLICATION);

        assertThat(Path.of(dev.getValue("quarkus.config.locations", String.class)))
                .isEqualTo(LOCAL_WORKER);
        assertThat(LOCAL_WORKER).isRegularFile();
    }

    @Test
    void localRunsReachEveryProviderTheApiAcceptsEachAskingForItsOwnNameAsTheModel() throws IOException {
        WorkerConfig config = config("prod", APPLICATION, LOCAL_WORKER).getConfigMapping(WorkerConfig.class);
        Properties api = new Properties();
        try (Reader in = Files.newBufferedReader(LOCAL_API)) {
            api.load(in);
        }
        String[] accepted = api.getProperty("jobapi.providers.names").split(",");

        assertThat(config.provider()).containsOnlyKeys(accepted);
        assertThat(accepted).contains(api.getProperty("jobapi.providers.default-provider"));
        config.provider().forEach((name, provider) -> {
            // The fake scripts and addresses its signed callbacks by the model a request asks for.
            assertThat(provider.model()).as(name).isEqualTo(name);
            assertThat(provider.baseUrl()).as(name).isEqualTo("http://127.0.0.1:8090");
        });
        assertThat(Arrays.stream(accepted)
                        .filter(name -> api.getProperty("jobapi.callbacks.provider." + name + ".secret") == null))
                .as("providers whose callbacks the api could not verify")
                .isEmpty();
    }

    /** The files in {@code profile}, each later one over the earlier ones, as Quarkus reads them. */
    private static SmallRyeConfig config(String profile, Path... files) throws IOException {
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder()
                .withProfile(profile)
                .withMapping(WorkerConfig.class)
                // Durations as Quarkus writes them ("5m", "20s").
                .withConverter(Duration.class, 100, new DurationConverter())
                // The files hold every other extension's keys too; only this mapping is read here.
                .withValidateUnknown(false);
        int ordinal = 250;
        for (Path file : files) {
            builder.withSources(new PropertiesConfigSource(file.toUri().toURL(), ordinal++));
        }
        return builder.build();
    }
}
