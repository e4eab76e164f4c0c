#include "app/gui/StacksController.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <algorithm>
#include <map>
#include <optional>

#include "app/gui/CompareRunLoader.h"
#include "app/gui/StackViewAdapters.h"
#include "storage/session/UserFrames.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StackTree.h"
#include "views/util/Formatting.h"

namespace allocscope::app {

struct StacksController::Worker {
    QString path;
    std::unique_ptr<storage::SessionReader> reader;
    std::map<int, std::uint64_t> peaks;  // run -> its allocated peak (one scan of the run's events)

    storage::SessionReader& open(const QString& p) {
        if (!reader || path != p) {
            reader = std::make_unique<storage::SessionReader>(p.toStdString(), false);
            path = p;
            peaks.clear();
        }
        return *reader;
    }
    std::uint64_t peak(int run) {
        auto it = peaks.find(run);
        if (it == peaks.end()) it = peaks.emplace(run, storage::LiveBlocks::peakEvent(*reader, run)).first;
        return it->second;
    }
};

namespace {

std::uint64_t clampEvent(qint64 event, std::uint64_t count) {
    return static_cast<std::uint64_t>(std::clamp<qint64>(event, 0, static_cast<qint64>(count) - 1));
}

QString eventText(std::uint64_t event) { return QObject::tr("event %1").arg(views::Formatting::count(static_cast<qint64>(event))); }

}  // namespace

StacksController::StacksController(QObject* parent)
    : QObject(parent), thread_(new QThread(this)), context_(new QObject), worker_(std::make_shared<Worker>()),
      token_(std::make_shared<std::atomic<quint64>>(0)) {
    thread_->setObjectName(QStringLiteral("stacks"));
    context_->moveToThread(thread_);
    connect(thread_, &QThread::finished, context_, &QObject::deleteLater);
    thread_->start();
}

StacksController::~StacksController() {
    ++*token_;
    std::shared_ptr<Worker> worker = worker_;
    QMetaObject::invokeMethod(context_, [worker] { *worker = Worker{}; }, Qt::BlockingQueuedConnection);
    thread_->quit();
    thread_->wait();
}

void StacksController::reset() {
    ++*token_;
    pending_ = 0;
    std::shared_ptr<Worker> worker = worker_;
    QMetaObject::invokeMethod(context_, [worker] { *worker = Worker{}; }, Qt::QueuedConnection);
}

void StacksController::request(const StacksRequest& req) {
    const quint64 token = ++*token_;
    ++pending_;
    std::shared_ptr<Worker> worker = worker_;
    std::shared_ptr<std::atomic<quint64>> latest = token_;
    QPointer<StacksController> self(this);
    const auto finish = [self, token](auto&& deliver) {
        QMetaObject::invokeMethod(self, [self, token, deliver = std::move(deliver)] {
            if (!self) return;
            self->pending_ = std::max(0, self->pending_ - 1);
            if (token == self->token_->load()) deliver(*self);
        }, Qt::QueuedConnection);
    };
    QMetaObject::invokeMethod(context_, [worker, latest, token, req, finish] {
        const auto stale = [&] { return latest->load() != token; };
        if (stale()) {
            finish([](StacksController&) {});
            return;
        }
        StacksResult result;
        try {
            storage::SessionReader& reader = worker->open(req.path);
            const storage::RunRow row = reader.run(req.run);
            if (row.eventCount == 0) throw storage::SessionError("run " + std::to_string(req.run) + " has no events", reader.path());
            const auto stackOf = [&reader](int run) { return [&reader, run](std::uint32_t id) { return reader.stack(run, id); }; };
            const storage::StackTree::FrameFilter fold =
                req.choice.hideInternals ? storage::StackTree::FrameFilter(&storage::UserFrames::internal) : storage::StackTree::FrameFilter();
            const bool atPeak = req.choice.at == views::StacksChoice::At::Peak;
            std::uint64_t event = atPeak ? worker->peak(req.run) : clampEvent(req.event, row.eventCount);
            std::uint64_t op = 0;
            if (req.choice.diff == views::StacksChoice::Diff::Run) {
                // Two runs meet at program ops: both sides stand after the last event of the op.
                std::uint64_t first = 0;
                op = reader.chunkAt(req.run, event, first)[event - first].opIndex;
                event = CompareRunLoader::lastEventAtOp(reader, req.run, op).value_or(event);
            }
            const QString why = noStackReason(row.info.sourceKind);
            const std::vector<storage::LiveBlock> blocks = storage::LiveBlocks::at(reader, req.run, event);
            if (stale()) {
                finish([](StacksController&) {});
                return;
            }
            result.run = req.run;
            result.event = static_cast<qint64>(event);
            result.tensors = toLiveTensorsData(blocks, stackOf(req.run), req.run, event, why);
            const QString here = QObject::tr("run %1 at %2%3").arg(req.run).arg(eventText(event), atPeak ? QObject::tr(" (peak allocated)") : QString());
            switch (req.choice.diff) {
                case views::StacksChoice::Diff::Off:
                    result.tree = toStackTreeData(storage::StackTree::build(blocks, stackOf(req.run), fold), false, why);
                    result.description = QObject::tr("Live blocks of %1").arg(here);
                    break;
                case views::StacksChoice::Diff::Event: {
                    const std::uint64_t other = clampEvent(req.choice.otherEvent, row.eventCount);
                    const std::vector<storage::LiveBlock> before = storage::LiveBlocks::at(reader, req.run, other);
                    result.tree = toStackTreeData(storage::StackTree::diff(before, stackOf(req.run), blocks, stackOf(req.run), fold), true, why);
                    result.tree.beforeLabel = eventText(other);
                    result.tree.afterLabel = eventText(event);
                    result.description = QObject::tr("Change from %1 to %2 of run %3").arg(eventText(other), eventText(event)).arg(req.run);
                    break;
                }
                case views::StacksChoice::Diff::Run: {
                    if (req.choice.otherRun <= 0) throw storage::SessionError("the session has no other run to compare with", reader.path());
                    const std::optional<std::uint64_t> other = CompareRunLoader::lastEventAtOp(reader, req.choice.otherRun, op);
                    // Before the other run's first event it holds nothing: every block here counts as gained.
                    const std::vector<storage::LiveBlock> before =
                        other ? storage::LiveBlocks::at(reader, req.choice.otherRun, *other) : std::vector<storage::LiveBlock>{};
                    result.tree = toStackTreeData(
                        storage::StackTree::diff(before, stackOf(req.choice.otherRun), blocks, stackOf(req.run), fold), true, why);
                    result.tree.beforeLabel = QObject::tr("run %1").arg(req.choice.otherRun);
                    result.tree.afterLabel = QObject::tr("run %1").arg(req.run);
                    result.description =
                        QObject::tr("Run %1 minus run %2 after program op %3 (run %1 %4, run %2 %5)")
                            .arg(req.run)
                            .arg(req.choice.otherRun)
                            .arg(views::Formatting::count(static_cast<qint64>(op)))
                            .arg(eventText(event), other ? eventText(*other) : QObject::tr("before its first event"));
                    break;
                }
            }
            result.tree.description = result.description;
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            finish([message](StacksController& c) { emit c.failed(message); });
            return;
        }
        finish([result = std::move(result)](StacksController& c) { emit c.ready(result); });
    }, Qt::QueuedConnection);
}

}  // namespace allocscope::app
