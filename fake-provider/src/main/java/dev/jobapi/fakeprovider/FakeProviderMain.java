package dev.jobapi.fakeprovider;

import java.nio.file.Path;
import java.util.Map;

/**
 * Command line of the runnable jar: serves the fake provider (for {@code bin/dev up} and the chaos suite) or writes
 * the demo repository's files.
 */
public final class FakeProviderMain {

    static final int DEFAULT_PORT = 8090;
    static final String DEFAULT_HOST = "127.0.0.1";

    private static final String USAGE = String.join(
            "\n",
            "usage: java -jar fake-provider.jar [--port N] [--host ADDRESS] [--callback-base-url URL --callback-secret S]",
            "       java -jar fake-provider.jar seed-demo-repo <dir>",
            "",
            "  --port  default: $FAKE_PROVIDER_PORT, else " + DEFAULT_PORT,
            "  --host  default: $FAKE_PROVIDER_HOST, else " + DEFAULT_HOST + " (0.0.0.0 inside a container)",
            "  --callback-base-url  where scripted callbacks go (<URL>/callbacks/<model>); default:"
                    + " $FAKE_CALLBACK_BASE_URL",
            "  --callback-secret    HMAC-SHA256 key of the Jobapi-Signature header; default: $FAKE_CALLBACK_SECRET");

    private FakeProviderMain() {}

    public static void main(String[] args) {
        try {
            if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
                System.out.println(USAGE);
                return;
            }
            if (args.length > 0 && args[0].equals("seed-demo-repo")) {
                if (args.length != 2) {
                    throw new IllegalArgumentException("seed-demo-repo takes exactly one directory");
                }
                Path dir = Path.of(args[1]);
                DemoRepository.writeTo(dir);
                System.out.println("Wrote the demo repository files to " + dir.toAbsolutePath());
                return;
            }
            serve(Options.parse(args, System.getenv()));
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
        }
    }

    private static void serve(Options options) {
        FakeProvider fake = FakeProvider.start(options.host(), options.port(), System.out::println);
        if (options.callbackBaseUrl() != null) {
            fake.configureCallbacks(options.callbackBaseUrl(), options.callbackSecret());
            System.out.println("Scripted callbacks go to " + options.callbackBaseUrl() + "/callbacks/<model>");
        }
        // SIGTERM runs shutdown hooks: the port is released and open connections are closed before the JVM exits.
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            fake.stop();
                            System.out.println("Fake provider stopped");
                        },
                        "fake-provider-shutdown"));
        System.out.println("Fake provider listening on " + fake.baseUrl());
        // main returns here; the server's own dispatcher thread keeps the JVM running until it is stopped.
    }

    /**
     * Where to listen and where callbacks go: command-line flags win over environment variables, which win over the
     * defaults. The callback URL and secret come together or not at all.
     */
    record Options(String host, int port, String callbackBaseUrl, String callbackSecret) {

        Options(String host, int port) {
            this(host, port, null, null);
        }

        static Options parse(String[] args, Map<String, String> env) {
            String host = env.getOrDefault("FAKE_PROVIDER_HOST", DEFAULT_HOST);
            String port = env.getOrDefault("FAKE_PROVIDER_PORT", String.valueOf(DEFAULT_PORT));
            String callbackBaseUrl = env.get("FAKE_CALLBACK_BASE_URL");
            String callbackSecret = env.get("FAKE_CALLBACK_SECRET");
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--port" -> port = value(args, ++i, "--port");
                    case "--host" -> host = value(args, ++i, "--host");
                    case "--callback-base-url" -> callbackBaseUrl = value(args, ++i, "--callback-base-url");
                    case "--callback-secret" -> callbackSecret = value(args, ++i, "--callback-secret");
                    default -> throw new IllegalArgumentException("Unknown argument: " + args[i]);
                }
            }
            if ((callbackBaseUrl == null) != (callbackSecret == null)) {
                throw new IllegalArgumentException("--callback-base-url and --callback-secret go together");
            }
            return new Options(host, parsePort(port), callbackBaseUrl, callbackSecret);
        }

        private static String value(String[] args, int index, String flag) {
            if (index >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[index];
        }

        private static int parsePort(String text) {
            try {
                int port = Integer.parseInt(text.strip());
                if (port < 0 || port > 65_535) {
                    throw new IllegalArgumentException("Port out of range: " + text);
                }
                return port;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Not a port number: " + text);
            }
        }
    }
}
