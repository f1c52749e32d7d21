package dev.jobapi.bench;

import java.net.http.HttpResponse;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Latencies of the requests whose start falls in the measured window, in an HDR histogram. The
 * start is when the request should have gone out (open loop) or went out (closed loop); requests
 * that start during the warm-up are sent but not recorded.
 */
final class Measurement {

    private static final double MICROS_PER_MILLI = 1000.0;

    private final Recorder recorder = new Recorder(3);
    private final LongAdder errors = new LongAdder();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final long windowStart;
    private final long windowEnd;
    private final int expectedStatus;

    Measurement(long windowStart, long windowEnd, int expectedStatus) {
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
        this.expectedStatus = expectedStatus;
    }

    boolean inWindow(long start) {
        return start >= windowStart && start < windowEnd;
    }

    void answered(long start, long end, HttpResponse<String> response) {
        if (!inWindow(start)) {
            return;
        }
        recorder.recordValue(TimeUnit.NANOSECONDS.toMicros(end - start));
        if (response.statusCode() != expectedStatus) {
            failed("status " + response.statusCode() + " (expected " + expectedStatus + "): " + response.body());
        }
    }

    void failedToAnswer(long start, Throwable failure) {
        if (inWindow(start)) {
            failed(failure.toString());
        }
    }

    private void failed(String description) {
        errors.increment();
        firstError.compareAndSet(null, description);
    }

    /**
     * What a run measured.
     *
     * @param line what bench/run reads: space-separated key=value pairs, times in milliseconds
     * @param complete true when requests were measured and every one got the expected status
     * @param latencies the measured latencies, in microseconds
     */
    record Result(String line, boolean complete, Histogram latencies) {}

    Result result(String label, Options options, double measuredSeconds) {
        Histogram histogram = recorder.getIntervalHistogram();
        long count = histogram.getTotalCount();
        if (firstError.get() != null) {
            System.err.println("first error of " + label + ": " + firstError.get());
        }
        String line = String.format(
                Locale.ROOT,
                "result label=%s mode=%s concurrency=%d requests=%d errors=%d seconds=%.2f throughput=%.1f"
                        + " p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f",
                label,
                options.mode(),
                options.concurrency(),
                count,
                errors.sum(),
                measuredSeconds,
                count / measuredSeconds,
                histogram.getValueAtPercentile(50) / MICROS_PER_MILLI,
                histogram.getValueAtPercentile(99) / MICROS_PER_MILLI,
                histogram.getValueAtPercentile(99.9) / MICROS_PER_MILLI,
                histogram.getMaxValue() / MICROS_PER_MILLI);
        return new Result(line, count > 0 && errors.sum() == 0, histogram);
    }
}
