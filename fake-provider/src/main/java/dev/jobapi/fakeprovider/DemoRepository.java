package dev.jobapi.fakeprovider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** The single source of truth for the demo repository the project seeds and the patch that fixes it. */
public final class DemoRepository {

    private static final String README = lines(
            "# demo",
            "",
            "A tiny repository for the job API demo. `last_index` in `src/counter.py`",
            "has an off-by-one error; a job asks a model for the patch that fixes it.");

    // The bug is deliberate: last_index returns the length instead of the last index.
    private static final String COUNTER = lines(
            "\"\"\"Index helpers used by the job API demo.\"\"\"",
            "",
            "",
            "def first_index(items):",
            "    \"\"\"Return the index of the first element, or -1 for an empty list.\"\"\"",
            "    return 0 if items else -1",
            "",
            "",
            "def last_index(items):",
            "    \"\"\"Return the index of the last element, or -1 for an empty list.\"\"\"",
            "    return len(items)");

    // Written as lines rather than a text block: a text block would strip the single space
    // that marks the blank context line, and the hunk would no longer apply.
    private static final String DEFAULT_PATCH = lines(
            "diff --git a/src/counter.py b/src/counter.py",
            "--- a/src/counter.py",
            "+++ b/src/counter.py",
            "@@ -8,4 +8,4 @@ def first_index(items):",
            " ",
            " def last_index(items):",
            "     \"\"\"Return the index of the last element, or -1 for an empty list.\"\"\"",
            "-    return len(items)",
            "+    return len(items) - 1");

    private DemoRepository() {}

    /** The demo files by path relative to the repository root, in a stable order. */
    public static Map<String, String> files() {
        Map<String, String> files = new LinkedHashMap<>();
        files.put("README.md", README);
        files.put("src/counter.py", COUNTER);
        return files;
    }

    /** A unified diff that fixes the off-by-one in {@code src/counter.py}; the fake provider's default answer. */
    public static String defaultPatch() {
        return DEFAULT_PATCH;
    }

    /** Writes the demo files under {@code dir}, creating directories; the caller runs git init and commit. */
    public static void writeTo(Path dir) {
        try {
            for (Map.Entry<String, String> file : files().entrySet()) {
                Path target = dir.resolve(file.getKey());
                Files.createDirectories(target.getParent());
                Files.writeString(target, file.getValue(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the demo repository to " + dir, e);
        }
    }

    private static String lines(String... lines) {
        return String.join("\n", lines) + "\n";
    }
}
