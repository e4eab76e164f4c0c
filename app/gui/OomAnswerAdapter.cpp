#include "app/gui/OomAnswerAdapter.h"

#include <QObject>
#include <QStringList>

#include <algorithm>

#include "app/gui/QtText.h"
#include "storage/session/UserFrames.h"
#include "views/util/Formatting.h"

namespace allocscope::app {
namespace {
using views::Formatting;

QString frameText(const alloc::Frame& f) { return qs(storage::UserFrames::label(f)); }

// How the analysis came by its limit, short: the numbers themselves are in the limit.
QString limitHow(const alloc::MemoryLimit& limit) {
    QString how;
    switch (limit.source) {
        case alloc::MemoryLimit::Source::Inferred:
            how = limit.cause == alloc::MemoryLimit::Cause::MemoryFraction
                      ? QObject::tr("inferred from the recorded OOM: a memory fraction stopped the allocator")
                      : QObject::tr("inferred from the recorded OOM: the device was full");
            break;
        case alloc::MemoryLimit::Source::Explicit: how = QObject::tr("as given"); break;
        case alloc::MemoryLimit::Source::Preset: how = QObject::tr("the GPU preset %1").arg(qs(limit.deviceName)); break;
        case alloc::MemoryLimit::Source::Unreproduced:
            how = QObject::tr("no limit reproduces the recorded OOM; simulating %1").arg(qs(limit.deviceName));
            break;
    }
    if (!limit.pick.empty()) how += QStringLiteral("; ") + qs(limit.pick);
    return how;
}

}  // namespace

views::OomLimit OomAnswerAdapter::limitOfRun(const storage::RunRow& run, const alloc::Event& oom, std::uint64_t reserved) {
    views::OomLimit limit;
    const QString gpu = run.info.gpu.empty() ? QObject::tr("the run's GPU") : qs(run.info.gpu);
    if (run.info.memoryFraction < 1.0 && run.info.totalMemory > 0) {
        limit.low = limit.high = static_cast<quint64>(run.info.memoryFraction * static_cast<double>(run.info.totalMemory));
        limit.how = QObject::tr("memory fraction %1 of %2's %3")
                        .arg(run.info.memoryFraction)
                        .arg(gpu, Formatting::bytes(static_cast<quint64>(run.info.totalMemory)));
        return limit;
    }
    // The oom event carries what the device still had free: the limit is that beyond what was reserved.
    limit.low = limit.high = reserved + oom.address;
    limit.how = QObject::tr("reserved at the failure + the %1 %2 still had free").arg(Formatting::bytes(static_cast<quint64>(oom.address)), gpu);
    return limit;
}

QString OomAnswerAdapter::headlineFromFacts(const views::OomAnswerData& data) {
    const QString request = Formatting::bytes(data.requestBytes);
    switch (data.verdict) {
        case views::OomVerdict::Fragmentation:
            return QObject::tr("Fragmentation, not a full GPU: %1 was cached free, but no free block held the %2 request")
                .arg(Formatting::bytes(data.cachedFree), request);
        case views::OomVerdict::ReallyFull:
            return QObject::tr("The memory was really full: a %1 request with only %2 cached free and no room under the limit")
                .arg(request, Formatting::bytes(std::max<qint64>(0, data.cachedFree)));
        case views::OomVerdict::Unknown: break;
    }
    return QObject::tr("A %1 request ran out of memory").arg(request);
}

views::OomAnswerData OomAnswerAdapter::fromSession(const storage::RunRow& run, const alloc::Event& oom, const storage::StateAtEvent& state,
                                                   const std::vector<storage::LiveBlock>& live, const StackOf& stackOf) {
    views::OomAnswerData data;
    data.run = run.number;
    data.runName = qs(run.info.name);
    data.config = qs(run.info.config);
    data.oomCount = run.summary ? run.summary->numOoms : state.stats.num_ooms;
    data.requestBytes = oom.size;
    data.stream = oom.stream;
    data.op = static_cast<qint64>(oom.opIndex);
    data.event = static_cast<qint64>(oom.seq);

    const std::int64_t reserved = state.stats.reserved_bytes[alloc::kAggregate].current;
    const std::int64_t allocated = state.stats.allocated_bytes[alloc::kAggregate].current;
    data.reserved = reserved;
    data.allocated = allocated;
    data.cachedFree = std::max<std::int64_t>(0, reserved - allocated);
    std::uint64_t largest = 0;
    for (const alloc::SegmentInfo& segment : state.segments) {
        for (const alloc::BlockInfo& block : segment.blocks) {
            if (block.state == alloc::BlockState::Inactive) largest = std::max(largest, block.size);
        }
    }
    data.largestFree = static_cast<qint64>(largest);
    data.verdict = static_cast<quint64>(data.cachedFree) >= oom.size && largest < oom.size ? views::OomVerdict::Fragmentation
                                                                                             : views::OomVerdict::ReallyFull;
    data.limit = limitOfRun(run, oom, static_cast<std::uint64_t>(std::max<std::int64_t>(0, reserved)));

    std::vector<const storage::LiveBlock*> blocks;
    for (const storage::LiveBlock& b : live) blocks.push_back(&b);
    std::stable_sort(blocks.begin(), blocks.end(), [](const auto* a, const auto* b) { return a->size > b->size; });
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const storage::LiveBlock& b = *blocks[i];
        if (i >= kHolders) {
            ++data.holdersOmitted;
            data.holdersOmittedBytes += b.size;
            continue;
        }
        views::OomHolderRow row;
        row.address = b.address;
        row.size = b.size;
        row.requested = b.requestedSize;
        const alloc::Stack stack = b.stackId == 0 || !stackOf ? alloc::Stack{} : stackOf(b.stackId);
        if (const alloc::Frame* top = storage::UserFrames::top(stack)) row.topFrame = frameText(*top);
        for (const alloc::Frame& f : stack) row.stack << frameText(f);
        data.holders.push_back(std::move(row));
    }
    data.headline = headlineFromFacts(data);
    return data;
}

void OomAnswerAdapter::applyAnalysis(views::OomAnswerData& data, const alloc::OomAnswer& answer) {
    if (!answer.headline.empty()) {
        data.headline = qs(answer.headline);
        data.headline[0] = data.headline[0].toUpper();  // "yes: …" is a line of the CLI's; here it is the page's title
    }
    // The analysis replays the recording at the inferred limit: its bytes at the failure are the
    // ones that limit explains (the session's run may have replayed it on another GPU).
    data.requestBytes = answer.requested;
    data.stream = answer.stream;
    data.op = static_cast<qint64>(answer.opIndex);
    const alloc::MemoryLimit& limit = answer.limit;
    data.limit.low = limit.isInterval() ? limit.low : limit.bytes;
    data.limit.high = limit.isInterval() ? limit.high : limit.bytes;
    data.limit.how = limitHow(limit);
    data.reserved = static_cast<qint64>(answer.reserved);
    data.allocated = static_cast<qint64>(answer.allocated);
    data.cachedFree = static_cast<qint64>(answer.cachedFree);
    data.largestFree = static_cast<qint64>(answer.largestFree);
    data.verdict = answer.fragmented ? views::OomVerdict::Fragmentation : views::OomVerdict::ReallyFull;
    if (data.holders.empty()) {  // the session's holders carry its user-frame rule; the analysis's only where it has none
        for (const alloc::OomHolder& h : answer.holders) {
            views::OomHolderRow row;
            row.address = h.address;
            row.size = h.size;
            row.requested = h.requested;
            for (const std::string& f : h.frames) row.stack << qs(f);
            if (!row.stack.isEmpty()) row.topFrame = row.stack.front();
            data.holders.push_back(std::move(row));
        }
        const std::size_t more = answer.holderCount > answer.holders.size() ? answer.holderCount - answer.holders.size() : 0;
        data.holdersOmitted = static_cast<qint64>(more);
        data.holdersOmittedBytes = 0;
    }
    data.pytorchMessage = qs(answer.pytorchMessage);
    data.whatIf.clear();
    for (const alloc::OomWhatIfRow& r : answer.whatIf) {
        views::OomWhatIfRow row;
        row.config = r.config == "default" ? QString() : qs(r.config);
        row.recorded = r.recorded;
        row.oom = r.oom;
        if (r.oom) row.where = r.oomOp ? QObject::tr("op %1").arg(Formatting::count(static_cast<qint64>(*r.oomOp))) : QObject::tr("not known");
        row.peakReserved = static_cast<qint64>(r.peakReserved);
        row.headroom = r.oom ? -1 : r.headroom;
        if (limit.isInterval()) row.overInterval = qs(r.verdict);
        row.holdsOverInterval = r.holdsOverInterval();
        data.whatIf.push_back(std::move(row));
    }
    data.whatIfNote.clear();
}

}  // namespace allocscope::app
