// The rules of StreamFreeQueue (pending frees of record_stream blocks), without a GPU: one use
// stream's wait list (StreamWaitList) must complete exactly the frees the stream has passed, at
// every poll, for every marking, and a block used on several streams (PendingFreeMarks) only
// once the last of them has passed it. The streams are models: marks take positions in enqueue
// order, and a stream has run every position below `ran`.
#include <QtTest>

#include <random>
#include <stdexcept>
#include <vector>

#include "allocator/device/PendingFreeMarks.h"
#include "allocator/device/StreamWaitList.h"

using namespace allocscope::alloc;

namespace {

struct ModelStream {
    std::vector<std::uint64_t> eventAt{0};    // event handle -> position (handle 0 unused)
    std::vector<std::uint64_t> counterAt{0};  // counter number -> position of its write
    std::uint64_t enqueued = 0;
    std::uint64_t ran = 0;
    std::uint64_t queries = 0;

    std::uint32_t reached() const {
        std::uint32_t n = 0;
        while (n + 1 < counterAt.size() && counterAt[n + 1] < ran) ++n;
        return n;
    }
    bool ready(std::uint64_t event) {
        ++queries;
        return eventAt[event] < ran;
    }
};

enum class Marking { Events, Counters, Mixed };

// Marks a free on `stream` the way StreamFreeQueue::insert does for `marking`; returns whether
// it was a counter write.
bool mark(Marking marking, ModelStream& stream, StreamWaitList& list, std::uint64_t address, bool shared) {
    const bool counter = marking == Marking::Counters || (marking == Marking::Mixed && list.counterIdle(stream.reached()));
    if (counter) {
        const std::uint32_t number = list.pushCounter(address, shared);
        if (number != stream.counterAt.size()) throw std::logic_error("counter numbers skip");
        stream.counterAt.push_back(stream.enqueued++);
    } else {
        stream.eventAt.push_back(stream.enqueued++);
        list.pushEvent(stream.eventAt.size() - 1, address, shared);
    }
    return counter;
}

struct WaitRun {
    std::uint64_t frees = 0, writes = 0, queries = 0, polls = 0;
    QString wrong;  // the first poll whose completions differ from the stream's, or ""
};

// Random frees, stream progress and polls on one stream; after every poll, the completed frees
// must be exactly those whose position the stream has run, in order. `window`: the stream
// stands still for that many steps between runs (as a busy or held stream does); 0: it moves
// at random every step.
WaitRun runOneStream(Marking marking, bool tail, std::size_t window, std::uint32_t seed) {
    std::mt19937 rng(seed);
    ModelStream stream;
    StreamWaitList list;
    WaitRun run;
    std::vector<std::uint64_t> positionOf;  // address -> position of its free
    std::uint64_t completedUpTo = 0;        // addresses below this have completed
    std::uint64_t due = 0;                  // addresses below this the stream has passed
    for (std::size_t step = 0; step < 4000 && run.wrong.isEmpty(); ++step) {
        const bool moves = window == 0 ? rng() % 3 == 0 : step % window == 0;
        if (moves) stream.ran = window == 0 ? stream.ran + rng() % (stream.enqueued - stream.ran + 1) : stream.enqueued;
        if (rng() % 2 == 0) {
            const std::uint64_t address = positionOf.size();
            positionOf.push_back(stream.enqueued);
            run.writes += mark(marking, stream, list, address, false) ? 1 : 0;
            ++run.frees;
            if (rng() % 4 == 0) ++stream.enqueued;  // other work on the stream between frees
        } else {
            ++run.polls;
            list.poll(marking != Marking::Events, stream.reached(), tail, [&](std::uint64_t e) { return stream.ready(e); },
                      [&](const StreamWaitList::Waiting& w) {
                          if (w.address != completedUpTo) run.wrong = QString("step %1: free %2 completed out of order").arg(step).arg(w.address);
                          ++completedUpTo;
                      });
            while (due < positionOf.size() && positionOf[due] < stream.ran) ++due;
            if (run.wrong.isEmpty() && due != completedUpTo) {
                run.wrong = QString("step %1: %2 frees completed, the stream has passed %3").arg(step).arg(completedUpTo).arg(due);
            }
        }
    }
    run.queries = stream.queries;
    return run;
}

// Polls each model stream's list as StreamFreeQueue::collect does; counts each completed block.
void pollAll(Marking marking, ModelStream* streams, StreamWaitList* lists, PendingFreeMarks& marks, std::vector<int>& completed) {
    for (int u = 0; u < 3; ++u) {
        lists[u].poll(marking != Marking::Events, streams[u].reached(), true, [&](std::uint64_t e) { return streams[u].ready(e); },
                      [&](const StreamWaitList::Waiting& w) {
                          if (!w.shared || marks.passed(w.address)) ++completed[w.address];
                      });
    }
}

// The first block completed a wrong number of times: once if all its streams ran past its free,
// else never. "" when none.
QString firstWrong(const std::vector<std::vector<std::pair<int, std::uint64_t>>>& positions, const std::vector<int>& completed,
                   const ModelStream* streams) {
    for (std::size_t a = 0; a < positions.size(); ++a) {
        bool passed = true;
        for (const auto& [u, at] : positions[a]) passed = passed && at < streams[u].ran;
        if (completed[a] != (passed ? 1 : 0)) {
            return QString("block %1 completed %2 times, all its streams passed it: %3").arg(a).arg(completed[a]).arg(passed);
        }
    }
    return {};
}

}  // namespace

class TestStreamFreeRules : public QObject {
    Q_OBJECT
private slots:
    // Every marking completes exactly the frees the stream has passed, at every poll, whether
    // the stream moves at random or stands still between runs.
    void waitListCompletesWhatTheStreamPassed() {
        const Marking markings[] = {Marking::Events, Marking::Counters, Marking::Mixed};
        for (Marking marking : markings) {
            for (bool tail : {false, true}) {
                for (std::size_t window : {std::size_t{0}, std::size_t{1}, std::size_t{64}}) {
                    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
                        const WaitRun run = runOneStream(marking, tail, window, seed);
                        QVERIFY2(run.wrong.isEmpty(), qPrintable(QString("marking %1 tail %2 window %3 seed %4: %5")
                                                                     .arg(static_cast<int>(marking)).arg(tail).arg(window).arg(seed).arg(run.wrong)));
                        QVERIFY(run.frees > 1000);
                    }
                }
            }
        }
    }

    // Mixed marks a still stream's frees with one counter write per run of the stream, and its
    // polls meanwhile read that counter instead of asking for events: per run at most the two
    // queries of the tail rule, where events alone ask at every poll.
    void mixedMarkingWritesOncePerStreamRun() {
        const std::size_t window = 64;
        const WaitRun mixed = runOneStream(Marking::Mixed, true, window, 7);
        const WaitRun events = runOneStream(Marking::Events, true, window, 7);
        const WaitRun counters = runOneStream(Marking::Counters, true, window, 7);
        const std::uint64_t runs = 4000 / window + 1;
        QVERIFY2(mixed.writes <= runs, qPrintable(QString("%1 writes for %2 runs").arg(mixed.writes).arg(runs)));
        QCOMPARE(counters.writes, counters.frees);
        QVERIFY2(mixed.queries <= 2 * runs + mixed.writes, qPrintable(QString("%1 queries for %2 runs").arg(mixed.queries).arg(runs)));
        QVERIFY2(events.queries > 10 * mixed.queries, qPrintable(QString("events %1, mixed %2").arg(events.queries).arg(mixed.queries)));
    }

    // The counter comparison survives the 32-bit wrap.
    void counterPassedIsWrapSafe() {
        QVERIFY(counterPassed(5, 5));
        QVERIFY(counterPassed(6, 5));
        QVERIFY(!counterPassed(4, 5));
        QVERIFY(counterPassed(2, 0xFFFFFFFEu));   // reached wrapped past the bound
        QVERIFY(!counterPassed(0xFFFFFFFEu, 2));  // the bound wrapped, reached not yet
    }

    // A block used on two streams: its free completes when the slower stream passes it, once,
    // whichever stream passes first; a single-stream block completes at its only mark.
    void sharedBlockWaitsForItsLastStream() {
        PendingFreeMarks marks;
        marks.expect(0x1000, 2);
        QCOMPARE(marks.size(), std::size_t{1});
        QVERIFY(!marks.passed(0x1000));  // one of two
        QVERIFY(marks.passed(0x1000));   // the last: forgotten
        QCOMPARE(marks.size(), std::size_t{0});
        QVERIFY(marks.passed(0x2000));  // never expected: its only mark was the last
        marks.expect(0x3000, 3);
        marks.clear();
        QCOMPARE(marks.size(), std::size_t{0});
    }

    // Random frees on up to three model streams at once, with polls: a block completes at the
    // first poll after every one of its streams has run past its free, never earlier, once.
    void blocksOnSeveralStreamsCompleteAfterTheLast() {
        for (Marking marking : {Marking::Events, Marking::Mixed}) {
            for (std::uint32_t seed = 1; seed <= 10; ++seed) {
                std::mt19937 rng(seed);
                ModelStream streams[3];
                StreamWaitList lists[3];
                PendingFreeMarks marks;
                std::vector<std::vector<std::pair<int, std::uint64_t>>> positions;  // address -> (stream, position)
                std::vector<int> completed;                                       // address -> times completed
                for (std::size_t step = 0; step < 1500; ++step) {
                    const int s = static_cast<int>(rng() % 3);
                    if (rng() % 3 == 0) streams[s].ran += rng() % (streams[s].enqueued - streams[s].ran + 1);
                    if (rng() % 2 == 0) {
                        const std::uint64_t address = positions.size();
                        const std::uint32_t used = 1 + rng() % 3;  // streams 0..used-1, rotated
                        const int first = static_cast<int>(rng() % 3);
                        positions.emplace_back();
                        completed.push_back(0);
                        for (std::uint32_t k = 0; k < used; ++k) {
                            const int u = (first + static_cast<int>(k)) % 3;
                            positions.back().emplace_back(u, streams[u].enqueued);
                            mark(marking, streams[u], lists[u], address, used > 1);
                        }
                        if (used > 1) marks.expect(address, used);
                        continue;
                    }
                    pollAll(marking, streams, lists, marks, completed);
                    const QString wrong = firstWrong(positions, completed, streams);
                    QVERIFY2(wrong.isEmpty(), qPrintable(QString("seed %1 step %2: %3").arg(seed).arg(step).arg(wrong)));
                }
                // Once every stream has run to its end, one poll completes everything left.
                for (ModelStream& stream : streams) stream.ran = stream.enqueued;
                pollAll(marking, streams, lists, marks, completed);
                QCOMPARE(firstWrong(positions, completed, streams), QString());
                QCOMPARE(marks.size(), std::size_t{0});
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestStreamFreeRules)
#include "TestStreamFreeRules.moc"
