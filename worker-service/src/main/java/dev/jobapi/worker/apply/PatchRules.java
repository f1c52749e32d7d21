package dev.jobapi.worker.apply;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.patch.FileHeader;
import org.eclipse.jgit.patch.Patch;

/**
 * What a provider's answer must be before anything applies it: a unified diff that changes at
 * least one file, and only regular files and executables under the repository's own paths. A
 * symlink could point a later file or a reader of the branch outside the tree, a submodule entry
 * or {@code .gitmodules} makes a clone fetch another repository, and a path under {@code .git/}
 * writes git's own configuration (hooks, remotes). The provider adapters, the appliers and the
 * acceptance trial all hold an answer to these rules, so none of them can be skipped by the route
 * an answer takes (stream, lookup, callback).
 */
public final class PatchRules {

    /** The modes a patch may give a file: absent (an add or a delete), regular, executable. */
    private static final Set<Integer> FILE_MODES =
            Set.of(FileMode.MISSING.getBits(), FileMode.REGULAR_FILE.getBits(), FileMode.EXECUTABLE_FILE.getBits());

    private static final String NO_FILE = "/dev/null";

    private PatchRules() {}

    /** The parsed patch, or {@link ApplyRefused} with the rule it breaks. */
    public static Patch parse(byte[] patch) {
        Patch parsed = new Patch();
        try {
            parsed.parse(new ByteArrayInputStream(patch));
        } catch (IOException e) {
            throw new UncheckedIOException("Reading a patch from memory failed", e);
        }
        if (!parsed.getErrors().isEmpty()) {
            throw new ApplyRefused("not a unified diff: " + parsed.getErrors());
        }
        if (parsed.getFiles().isEmpty()) {
            throw new ApplyRefused(patch.length == 0 ? "the answer is empty" : "the answer changes no file");
        }
        for (FileHeader file : parsed.getFiles()) {
            checkMode(file.getNewPath(), file.getOldMode());
            checkMode(file.getNewPath(), file.getNewMode());
            checkPath(file.getOldPath());
            checkPath(file.getNewPath());
        }
        return parsed;
    }

    /** Why the answer is no usable patch, or empty when it is one. */
    public static Optional<String> unusable(byte[] patch) {
        try {
            parse(patch);
            return Optional.empty();
        } catch (ApplyRefused refused) {
            return Optional.of(refused.getMessage());
        }
    }

    /** A traditional diff names no mode (null): the file stays what it is, a regular file. */
    private static void checkMode(String path, FileMode mode) {
        if (mode != null && !FILE_MODES.contains(mode.getBits())) {
            throw new ApplyRefused("the patch gives " + path + " mode " + mode
                    + "; only regular files (100644) and executables (100755) are applied");
        }
    }

    private static void checkPath(String path) {
        if (path == null || path.equals(NO_FILE)) {
            return;
        }
        if (path.isEmpty() || path.startsWith("/")) {
            throw new ApplyRefused("the patch names a path outside the repository: '" + path + "'");
        }
        String[] parts = path.split("/", -1);
        for (String part : parts) {
            String name = part.toLowerCase(Locale.ROOT);
            if (name.isEmpty() || name.equals(".") || name.equals("..")) {
                throw new ApplyRefused("the patch names a path outside the repository: '" + path + "'");
            }
            if (name.equals(".git")) {
                throw new ApplyRefused("the patch writes under .git/: '" + path + "'");
            }
        }
        if (parts[parts.length - 1].equalsIgnoreCase(".gitmodules")) {
            throw new ApplyRefused("the patch writes .gitmodules: '" + path + "'");
        }
    }
}
