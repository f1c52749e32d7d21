package dev.jobapi.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * Keys kept on disk, one small file per pending intention, so a process that crashed (or was killed)
 * before the API answered resumes with the same key when it runs the same request again. A key is
 * written before the request is sent and removed once the API decided it.
 */
public final class FileIdempotencyKeys implements IdempotencyKeys {

    private final Path directory;

    public FileIdempotencyKeys(Path directory) {
        this.directory = directory;
    }

    @Override
    public synchronized String keyFor(String intention) {
        Path file = file(intention);
        try {
            if (Files.exists(file)) {
                return Files.readString(file, StandardCharsets.US_ASCII).trim();
            }
            Files.createDirectories(directory);
            String key = UUID.randomUUID().toString();
            // Written whole under a temporary name and moved into place: a crash mid-write leaves no half key.
            Path temporary = Files.createTempFile(directory, ".key-", ".tmp");
            Files.writeString(temporary, key, StandardCharsets.US_ASCII);
            try {
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
            }
            return key;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the Idempotency-Key in " + directory, e);
        }
    }

    @Override
    public synchronized void settle(String intention) {
        try {
            Files.delete(file(intention));
        } catch (NoSuchFileException alreadyGone) {
            // Settled before, by an earlier call with the same intention.
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove a settled Idempotency-Key from " + directory, e);
        }
    }

    private Path file(String intention) {
        // Intentions are hex digests: safe as file names.
        return directory.resolve(intention + ".key");
    }
}
