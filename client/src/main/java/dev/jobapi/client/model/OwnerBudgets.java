package dev.jobapi.client.model;

import java.util.List;

/** An owner's money budgets; empty when none applies. */
public record OwnerBudgets(String ownerId, List<Budget> budgets) {}
