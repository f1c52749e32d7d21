package dev.jobapi.worker;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.testing.ArchitectureRules;
import dev.jobapi.worker.service.AttemptPipeline;
import dev.jobapi.worker.service.AttemptSteps;
import dev.jobapi.worker.service.Reconciler;
import io.quarkus.narayana.jta.QuarkusTransaction;
import java.util.UUID;

/**
 * The layering of the worker's production classes: no package cycle, nothing of the api, and nothing
 * of the fake provider (only the worker's tests talk to it).
 */
@AnalyzeClasses(packages = ArchitectureRules.WORKER, importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    @ArchTest
    static final ArchRule packagesOfTheWorkerFormNoCycle =
            ArchitectureRules.noPackageCyclesBelow(ArchitectureRules.WORKER);

    @ArchTest
    static final ArchRule workerNeverDependsOnTheApi = ArchitectureRules.noDependencyOnService(ArchitectureRules.API);

    @ArchTest
    static final ArchRule workerNeverDependsOnTheFakeProvider = ArchitectureRules.noDependencyOnTheFakeProvider();

    @ArchTest
    static final ArchRule scheduledLoopsSkipOverlapsAndShutdown =
            ArchitectureRules.scheduledLoopsSkipOverlapsAndShutdown();

    /**
     * Every transaction of a delivery is opened in one file, and every one of the sweep in one more
     * (issue 35): the step classes are functions of the loaded attempt.
     */
    @ArchTest
    static final ArchRule onlyTheTwoOrchestratorsRunSteps = noClasses()
            .that()
            .doNotBelongToAnyOf(AttemptPipeline.class, Reconciler.class)
            .should()
            .callMethod(AttemptSteps.class, "run", UUID.class, Object.class, AttemptSteps.Step.class)
            .because("only AttemptPipeline (a delivery) and Reconciler (the sweep) open a delivery's transactions");

    @ArchTest
    static final ArchRule stepClassesOpenNoTransaction = noClasses()
            .that()
            .haveSimpleNameEndingWith("Step")
            .or()
            .haveSimpleName("Reconciliation")
            .or()
            .haveSimpleName("AttemptOutcomes")
            .should()
            .dependOnClassesThat()
            .belongToAnyOf(QuarkusTransaction.class, PlainTransactions.class)
            .because("a step is a function of the loaded attempt; its orchestrator opens the transaction");
}
