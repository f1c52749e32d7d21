package dev.jobapi.client.model;

import java.util.List;

/** A page of the events feed and the cursor to ask with next (the same one when the page was empty). */
public record EventPage(List<FeedEvent> events, String next) {}
