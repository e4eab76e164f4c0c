#include "app/gui/AllocationsController.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <map>

#include "app/gui/ViewDataAdapters.h"
#include "storage/session/AllocationBands.h"
#include "storage/session/SessionError.h"
#include "storage/session/UserFrames.h"

namespace allocscope::app {

AllocationsController::AllocationsController(QObject* parent) : QObject(parent) {}

AllocationsController::~AllocationsController() {
    cancel();
    for (QThread* thread : threads_) {
        thread->wait();
        delete thread;
    }
}

void AllocationsController::cancel() {
    if (cancel_) cancel_->store(true);
    cancel_.reset();
    ++generation_;
    loading_ = false;
}

views::AllocationsData AllocationsController::toViewData(const storage::AllocationOverview& overview) {
    views::AllocationsData data;
    data.eventCount = static_cast<qint64>(overview.eventCount);
    data.bucketEvents = static_cast<qint64>(overview.bucketEvents);
    data.allocatedMax.assign(overview.allocatedMax.begin(), overview.allocatedMax.end());
    data.computedFromEvents = overview.computedFromEvents;
    std::map<std::string, int> siteOf;         // top user frame label -> site index
    std::map<std::uint32_t, int> siteOfStack;  // stack id -> site index
    for (const auto& [id, stack] : overview.stacks) {
        if (stack.empty()) continue;
        const std::string label = storage::UserFrames::topLabel(stack);
        auto [it, inserted] = siteOf.try_emplace(label, static_cast<int>(data.sites.size()));
        if (inserted) {
            views::AllocationSite site;
            site.label = QString::fromStdString(label);
            for (const alloc::Frame& f : stack) site.frames << QString::fromStdString(storage::UserFrames::label(f));
            data.sites.push_back(site);
        }
        siteOfStack[id] = it->second;
    }
    data.anyStack = !data.sites.empty();
    for (const storage::AllocationBand& b : overview.bands) {
        views::AllocationBandView band;
        band.allocEvent = static_cast<qint64>(b.allocSeq);
        band.liveAtEnd = !b.freeSeq.has_value();
        band.freeEvent = static_cast<qint64>(b.freeSeq.value_or(overview.eventCount));
        band.address = b.address;
        band.size = b.size;
        band.requested = b.requested;
        band.stream = b.stream;
        band.stackId = b.stackId;
        const auto site = siteOfStack.find(b.stackId);
        band.site = site == siteOfStack.end() ? -1 : site->second;
        if (band.site >= 0) data.sites[static_cast<std::size_t>(band.site)].bytes += b.size;
        band.pool = poolLabel(b.pool);
        int depth = -1;
        for (const storage::PhaseSpan& p : overview.phases) {  // the innermost phase around the alloc
            if (p.firstSeq <= b.allocSeq && b.allocSeq <= p.lastSeq && p.depth > depth) {
                depth = p.depth;
                band.phase = QString::fromStdString(p.name);
            }
        }
        data.bands.push_back(std::move(band));
    }
    return data;
}

void AllocationsController::load(const QString& sessionPath, int run) { start(sessionPath, run, true); }
void AllocationsController::refresh(const QString& sessionPath, int run) { start(sessionPath, run, false); }

void AllocationsController::start(const QString& sessionPath, int run, bool announce) {
    cancel();
    auto flag = std::make_shared<std::atomic<bool>>(false);
    cancel_ = flag;
    const quint64 generation = generation_;
    loading_ = true;
    if (announce) emit started(run);
    QPointer<AllocationsController> self(this);
    const std::string path = sessionPath.toStdString();
    QThread* thread = QThread::create([self, flag, generation, path, run] {
        views::AllocationsData data;
        QString error;
        try {
            storage::SessionReader reader(path, false);  // the window's own reader checked the file
            const storage::AllocationOverview overview =
                storage::AllocationBands::load(reader, run, [&flag](double) { return !flag->load(); });
            if (flag->load()) return;
            data = toViewData(overview);
        } catch (const storage::SessionError& e) {
            error = QString::fromStdString(e.problem());
        }
        if (flag->load() || !self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, run, data = std::move(data), error] {
                if (!self || self->generation_ != generation) return;
                self->loading_ = false;
                if (error.isEmpty()) emit self->ready(run, data);
                else emit self->failed(run, error);
            },
            Qt::QueuedConnection);
    });
    threads_.append(thread);
    connect(thread, &QThread::finished, this, [this, thread] {
        threads_.removeOne(thread);
        thread->deleteLater();
    });
    thread->start(QThread::LowPriority);
}

}  // namespace allocscope::app
