#include "storage/session/TimelineQuery.h"

#include <algorithm>

#include "storage/session/ByteCodec.h"
#include "storage/session/EventCodec.h"
#include "storage/session/SessionError.h"
#include "storage/session/TimelineSeries.h"

namespace allocscope::storage {
namespace {

void widen(SeriesRange& range, std::int64_t lo, std::int64_t hi, bool first) {
    if (first || lo < range.min) range.min = lo;
    if (first || hi > range.max) range.max = hi;
}

struct Buckets {
    std::uint64_t first;
    std::uint64_t length;
    std::uint64_t count;
    std::vector<TimelineBucket>& out;
    std::vector<bool> touched;

    std::size_t of(std::uint64_t seq) const {
        return static_cast<std::size_t>((seq - first) * count / length);
    }
    void add(std::size_t b, const std::array<std::int64_t, 8>& v) {
        TimelineBucket& bucket = out[b];
        const bool fresh = !touched[b];
        widen(bucket.allocated, v[0], v[1], fresh);
        widen(bucket.reserved, v[2], v[3], fresh);
        widen(bucket.active, v[4], v[5], fresh);
        widen(bucket.requested, v[6], v[7], fresh);
        touched[b] = true;
    }
};

}  // namespace

Timeline TimelineQuery::build(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, int buckets,
                              std::uint64_t exactLimit) {
    Timeline timeline;
    const std::uint64_t total = reader.run(run).eventCount;
    if (total == 0 || buckets <= 0 || first >= total) return timeline;
    last = std::min(last, total - 1);
    if (last < first) return timeline;
    const std::uint64_t length = last - first + 1;
    const std::uint64_t count = std::min<std::uint64_t>(static_cast<std::uint64_t>(buckets), length);
    timeline.buckets.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        timeline.buckets[i].firstSeq = first + (i * length + count - 1) / count;
        timeline.buckets[i].lastSeq = first + ((i + 1) * length + count - 1) / count - 1;
    }
    Buckets b{first, length, count, timeline.buckets, std::vector<bool>(count, false)};

    SqliteStatement start = reader.db().prepare("SELECT max(first_seq) FROM event_chunk WHERE run = ? AND first_seq <= ?");
    start.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(first));
    const std::int64_t startSeq = start.step() ? start.columnInt(0) : 0;

    const bool exact = length <= exactLimit || length / count < 4 * kSampleEvents;
    timeline.exact = exact;
    if (exact) {
        SqliteStatement s = reader.db().prepare(
            "SELECT first_seq, count, start_allocated, start_reserved, start_active, start_requested, events FROM event_chunk "
            "WHERE run = ? AND first_seq >= ? AND first_seq <= ? ORDER BY first_seq");
        s.bind(1, static_cast<std::int64_t>(run)).bind(2, startSeq).bind(3, static_cast<std::int64_t>(last));
        std::vector<alloc::Event> events;
        while (s.step()) {
            SeriesValues values{s.columnInt(2), s.columnInt(3), s.columnInt(4), s.columnInt(5)};
            events.clear();
            EventCodec::decode(s.columnBlob(6), static_cast<std::uint64_t>(s.columnInt(0)), static_cast<std::size_t>(s.columnInt(1)), events);
            for (const alloc::Event& e : events) {
                values.apply(e);
                if (e.seq < first || e.seq > last) continue;
                const auto v = values.array();
                b.add(b.of(e.seq), {v[0], v[0], v[1], v[1], v[2], v[2], v[3], v[3]});
            }
        }
        return timeline;
    }
    SqliteStatement s = reader.db().prepare(
        "SELECT first_seq, count, samples FROM event_chunk WHERE run = ? AND first_seq >= ? AND first_seq <= ? ORDER BY first_seq");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, startSeq).bind(3, static_cast<std::int64_t>(last));
    while (s.step()) {
        const auto chunkFirst = static_cast<std::uint64_t>(s.columnInt(0));
        const auto chunkCount = static_cast<std::uint64_t>(s.columnInt(1));
        ByteReader r(s.columnBlob(2), "timeline sample");
        for (std::uint64_t g = 0; g * kSampleEvents < chunkCount; ++g) {
            std::array<std::int64_t, 8> v{};
            for (auto& x : v) x = r.svarint();
            const std::uint64_t gFirst = chunkFirst + g * kSampleEvents;
            const std::uint64_t gLast = std::min(gFirst + kSampleEvents, chunkFirst + chunkCount) - 1;
            if (gLast < first || gFirst > last) continue;
            const std::size_t b0 = b.of(std::max(gFirst, first));
            const std::size_t b1 = b.of(std::min(gLast, last));
            for (std::size_t k = b0; k <= b1; ++k) b.add(k, v);
        }
    }
    return timeline;
}

}  // namespace allocscope::storage
