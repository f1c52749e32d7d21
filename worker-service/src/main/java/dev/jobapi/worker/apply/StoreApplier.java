package dev.jobapi.worker.apply;

import dev.jobapi.common.apply.ApplyKey;
import java.util.Optional;

/**
 * "Store only": the stored generation is the result, fetched by clients from GET /jobs/{id}/output.
 * The applied_patch row is the whole record of the apply, so there is nothing to ask a target.
 */
public class StoreApplier implements Applier {

    @Override
    public String scope(ApplyTarget target) {
        return "store";
    }

    @Override
    public Optional<String> findApplied(ApplyKey key, ApplyTarget target) {
        return Optional.empty();
    }

    @Override
    public String apply(ApplyKey key, byte[] patch, ApplyTarget target) {
        return "store:" + key.value();
    }

    @Override
    public boolean appliesInTheDatabase() {
        return true;
    }
}
