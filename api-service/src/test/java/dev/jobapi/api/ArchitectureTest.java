package dev.jobapi.api;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.jobapi.common.testing.ArchitectureRules;

/**
 * The layering of the api's production classes: no package cycle ({@code rest} on top; the problem
 * catalogue and the representations below both {@code rest} and {@code service}), nothing of the
 * worker, nothing of the fake provider.
 */
@AnalyzeClasses(packages = ArchitectureRules.API, importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    @ArchTest
    static final ArchRule packagesOfTheApiFormNoCycle = ArchitectureRules.noPackageCyclesBelow(ArchitectureRules.API);

    @ArchTest
    static final ArchRule onlyRestDependsOnRest = noClasses()
            .that()
            .resideOutsideOfPackage(ArchitectureRules.API + ".rest..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage(ArchitectureRules.API + ".rest..")
            .because("rest is the HTTP edge: services, problems and representations must not know about it");

    @ArchTest
    static final ArchRule apiNeverDependsOnTheWorker =
            ArchitectureRules.noDependencyOnService(ArchitectureRules.WORKER);

    @ArchTest
    static final ArchRule apiNeverDependsOnTheFakeProvider = ArchitectureRules.noDependencyOnTheFakeProvider();

    @ArchTest
    static final ArchRule scheduledLoopsSkipOverlapsAndShutdown =
            ArchitectureRules.scheduledLoopsSkipOverlapsAndShutdown();
}
