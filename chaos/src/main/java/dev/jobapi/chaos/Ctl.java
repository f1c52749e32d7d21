package dev.jobapi.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** {@code chaos/run ctl ACTION [ARG]}: the script that knows the soak's processes and servers does the work. */
final class Ctl {

    private final String script;

    Ctl(String script) {
        this.script = script;
    }

    /** Runs an action to its end and returns its standard output; fails with its output when it fails. */
    String run(String... action) {
        List<String> command = new ArrayList<>(List.of(script, "ctl"));
        command.addAll(List.of(action));
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " failed (" + process.exitValue() + "): " + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted running " + command, e);
        }
    }

    /** Messages per queue of the soak's vhost (ready and unacknowledged). */
    Map<String, Long> queueDepths() {
        Map<String, Long> depths = new HashMap<>();
        for (String line : run("queues").split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length == 2) {
                depths.put(fields[0], Long.parseLong(fields[1]));
            }
        }
        return depths;
    }
}
