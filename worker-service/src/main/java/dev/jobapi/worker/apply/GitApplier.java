package dev.jobapi.worker.apply;

import dev.jobapi.common.apply.ApplyKey;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.eclipse.jgit.errors.AmbiguousObjectException;
import org.eclipse.jgit.errors.IncorrectObjectTypeException;
import org.eclipse.jgit.errors.MissingObjectException;
import org.eclipse.jgit.errors.RevisionSyntaxException;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.patch.Patch;
import org.eclipse.jgit.patch.PatchApplier;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.jboss.logging.Logger;

/**
 * Commits a winning patch to the branch {@code <prefix><job id>} of a git repository, with the apply
 * key as an {@code Idempotency-Key:} trailer. The patch is applied to trees in the object database,
 * not to a working copy, and the branch moves by compare-and-swap, so several workers never trample
 * each other and a second apply of one key finds the first by its trailer.
 */
public class GitApplier implements Applier {

    static final String TRAILER = "Idempotency-Key: ";

    /**
     * A ref update holds its lock file for milliseconds; one this old was left by a worker killed
     * in the middle of an update, and would refuse every later update of the branch.
     */
    static final Duration STALE_LOCK = Duration.ofSeconds(30);

    private static final Logger LOG = Logger.getLogger(GitApplier.class);

    private final File repository;
    private final String branchPrefix;
    private final PersonIdent committer = new PersonIdent("jobapi worker", "worker@jobapi.invalid");

    public GitApplier(File repository, String branchPrefix) {
        this.repository = repository;
        this.branchPrefix = branchPrefix;
    }

    @Override
    public String scope(ApplyTarget target) {
        return "git:" + repository.getAbsolutePath() + ":" + branch(target);
    }

    @Override
    public Optional<String> findApplied(ApplyKey key, ApplyTarget target) {
        try (Repository repo = open();
                RevWalk walk = new RevWalk(repo)) {
            Ref ref = repo.exactRef(Constants.R_HEADS + branch(target));
            return ref == null ? Optional.empty() : commitWithTrailer(walk, ref.getObjectId(), key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String apply(ApplyKey key, byte[] patch, ApplyTarget target) {
        try (Repository repo = open();
                RevWalk walk = new RevWalk(repo);
                ObjectInserter inserter = repo.newObjectInserter()) {
            String branchRef = Constants.R_HEADS + branch(target);
            Ref existing = repo.exactRef(branchRef);
            if (existing != null) {
                // Another apply of this key may have moved the branch since the caller looked; the
                // ref compare-and-swap below then refuses anything that moved after this read.
                Optional<String> applied = commitWithTrailer(walk, existing.getObjectId(), key);
                if (applied.isPresent()) {
                    return applied.get();
                }
                walk.reset();
            }
            ObjectId parentId = existing != null ? existing.getObjectId() : resolveBase(repo, target.baseRef());
            if (parentId == null) {
                throw new ApplyRefused("base ref '" + target.baseRef() + "' does not exist in the target repository");
            }
            RevCommit parent = existing != null ? walk.parseCommit(parentId) : baseCommit(walk, parentId, target);
            Patch parsed = PatchRules.parse(patch);
            PatchApplier.Result result = applyToTree(repo, parent, inserter, parsed, target);
            if (!result.getErrors().isEmpty()) {
                throw new ApplyRefused("the patch does not apply to " + target.baseRef() + ": " + result.getErrors());
            }
            CommitBuilder commit = new CommitBuilder();
            commit.setTreeId(result.getTreeId());
            commit.setParentId(parent);
            commit.setAuthor(committer);
            commit.setCommitter(committer);
            commit.setMessage("Apply job " + target.jobId() + "\n\nAttempt: " + target.attemptId() + "\n" + TRAILER
                    + key.value() + "\n");
            ObjectId commitId = inserter.insert(commit);
            inserter.flush();

            RefUpdate update = repo.updateRef(branchRef);
            update.setNewObjectId(commitId);
            update.setExpectedOldObjectId(existing != null ? existing.getObjectId() : ObjectId.zeroId());
            update.setRefLogMessage("jobapi apply " + key.value(), false);
            clearStaleLock(repo, branchRef);
            RefUpdate.Result moved = update.update(walk);
            if (moved != RefUpdate.Result.NEW && moved != RefUpdate.Result.FAST_FORWARD) {
                throw new IllegalStateException("Branch " + branchRef + " moved under us: " + moved);
            }
            return commitId.getName();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Applies the patch to the parent's tree in the object database. A patch whose files collide (a
     * file and another under it as a directory) makes JGit throw rather than report: that is the
     * patch's fault and never changes on a retry, so it is refused like any other that does not apply.
     */
    private static PatchApplier.Result applyToTree(
            Repository repo, RevCommit parent, ObjectInserter inserter, Patch parsed, ApplyTarget target)
            throws IOException {
        try {
            return new PatchApplier(repo, parent.getTree(), inserter).applyPatch(parsed);
        } catch (IllegalStateException | IllegalArgumentException collision) {
            throw new ApplyRefused("the patch does not apply to " + target.baseRef() + ": " + collision);
        }
    }

    /** The base ref's commit; null when it does not exist, refused when it is no ref at all. */
    private static ObjectId resolveBase(Repository repo, String baseRef) throws IOException {
        try {
            return repo.resolve(baseRef);
        } catch (RevisionSyntaxException | AmbiguousObjectException e) {
            throw new ApplyRefused("base ref '" + baseRef + "' is not a usable ref: " + e.getMessage());
        }
    }

    /**
     * The base's commit. A base that resolves to no commit (an object id that is not in the
     * repository, or names a tree or a blob) is refused for good, like a base ref that does not exist.
     */
    private static RevCommit baseCommit(RevWalk walk, ObjectId id, ApplyTarget target) throws IOException {
        try {
            return walk.parseCommit(id);
        } catch (MissingObjectException | IncorrectObjectTypeException notACommit) {
            throw new ApplyRefused(
                    "base ref '" + target.baseRef() + "' names no commit in the target repository: " + notACommit);
        }
    }

    private static Optional<String> commitWithTrailer(RevWalk walk, ObjectId tip, ApplyKey key) throws IOException {
        walk.markStart(walk.parseCommit(tip));
        for (RevCommit commit : walk) {
            if (commit.getFullMessage().contains(TRAILER + key.value())) {
                return Optional.of(commit.getName());
            }
        }
        return Optional.empty();
    }

    private static void clearStaleLock(Repository repo, String ref) throws IOException {
        Path lock = repo.getDirectory().toPath().resolve(ref + ".lock");
        try {
            FileTime modified = Files.getLastModifiedTime(lock);
            if (modified.toInstant().isBefore(Instant.now().minus(STALE_LOCK))) {
                LOG.warnf("Removing %s, left since %s by a process that died while moving the branch", lock, modified);
                Files.deleteIfExists(lock);
            }
        } catch (NoSuchFileException e) {
            // no lock: the usual case
        }
    }

    private String branch(ApplyTarget target) {
        return branchPrefix + target.jobId();
    }

    private Repository open() throws IOException {
        return new FileRepositoryBuilder()
                .setGitDir(new File(repository, ".git").isDirectory() ? new File(repository, ".git") : repository)
                .setMustExist(true)
                .build();
    }
}
