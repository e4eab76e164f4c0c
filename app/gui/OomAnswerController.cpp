#include "app/gui/OomAnswerController.h"

#include <QFileInfo>
#include <QTabWidget>

#include <exception>
#include <stdexcept>
#include <vector>

#include "allocator/compare/OomAnalyzer.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "app/gui/BackgroundJob.h"
#include "app/gui/LessonNavigator.h"
#include "app/gui/OomAnswerAdapter.h"
#include "app/gui/RecordingSource.h"
#include "app/gui/WhatIfReplay.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"
#include "views/widgets/OomAnswerView.h"

namespace allocscope::app {

OomAnswerController::OomAnswerController(QTabWidget* tabs, LessonNavigator* window, QObject* parent)
    : QObject(parent), tabs_(tabs), window_(window), view_(new views::OomAnswerView(tabs)), analysis_(defaultAnalysis()) {
    connect(view_, &views::OomAnswerView::stacksRequested, this, [this](qint64 event) {
        if (!window_) return;
        window_->goToEvent(event);
        window_->showView(QStringLiteral("stacks"));
        keepView_ = false;  // the user's own step: the next OOM run still opens on its answer
    });
}

OomAnswerController::~OomAnswerController() {
    if (job_ == nullptr) return;
    disconnect(job_, nullptr, this, nullptr);  // it is deleted with its parent, this: its destructor waits
    job_->cancel();
}

OomAnswerController* OomAnswerController::install(QTabWidget* tabs, LessonNavigator* window, QObject* parent) {
    auto* controller = new OomAnswerController(tabs, window, parent);
    const int index = tabs->addTab(controller->view_, tr("OO&M"));
    tabs->setTabToolTip(index, tr("Why the run ran out of memory, and whether another setting would have avoided it"));
    tabs->setTabVisible(index, false);  // only for a run with an OOM
    return controller;
}

void OomAnswerController::showTab(bool visible) { tabs_->setTabVisible(tabs_->indexOf(view_), visible); }

void OomAnswerController::bringToFront() {
    keepView_ = false;
    if (run_ <= 0) return;
    showTab(true);
    tabs_->setCurrentWidget(view_);
}

void OomAnswerController::setRun(const QString& path, const views::RunListData& runs, int number) {
    qint64 ooms = 0;
    for (const views::RunListRow& row : runs) {
        if (row.number == number) ooms = row.ooms;
    }
    if (ooms <= 0) {  // none, or not known (a run still recording)
        clear();
        return;
    }
    if (path == path_ && number == run_) return;  // the same run again (a reload): its answer stands
    path_ = path;
    run_ = number;
    if (keepView_) showTab(true);
    else bringToFront();  // the first thing to see for a run that failed
    keepView_ = false;
    start();
}

void OomAnswerController::clear() {
    ++generation_;
    if (job_ != nullptr) {
        disconnect(job_, nullptr, this, nullptr);
        job_->cancel();  // deletes itself once its thread is done
        job_ = nullptr;
    }
    path_.clear();
    run_ = 0;
    view_->setAnswer({});
    view_->showStatus(QString());
    showTab(false);
}

void OomAnswerController::start() {
    if (job_ != nullptr) {
        disconnect(job_, nullptr, this, nullptr);
        job_->cancel();
        job_ = nullptr;
    }
    const QString path = path_;
    const int run = run_;
    const quint64 generation = ++generation_;
    view_->setAnswer({});
    view_->showStatus(tr("Reading the OOM of run %1…").arg(run));
    auto* job = new BackgroundJob(tr("Analysing the OOM"), [this, path, run, generation, analysis = analysis_](BackgroundJob& self) {
        storage::SessionReader reader(path.toStdString(), false);
        const storage::RunRow row = reader.run(run);
        std::optional<alloc::Event> oom;
        if (row.eventCount > 0) {
            reader.forEachChunk(run, 0, row.eventCount - 1, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
                for (const alloc::Event& e : events) {
                    if (e.action == alloc::EventAction::Oom) {
                        oom = e;
                        return false;
                    }
                }
                return !self.isCancelled();
            });
        }
        if (self.isCancelled()) return;
        const auto show = [this, generation, &self](const views::OomAnswerData& data, bool done) {
            self.deliver([this, generation, data, done] {
                if (generation != generation_) return;
                view_->setAnswer(data);
                emit answerShown();
                if (done) emit analysisDone();
            });
        };
        if (!oom) {
            self.deliver([this, generation, run] {
                if (generation != generation_) return;
                view_->showStatus(tr("Run %1 counts an OOM, but none of its events is one (its history may start after it).").arg(run));
                emit analysisDone();
            });
            return;
        }
        storage::StateCursor cursor(reader, run);
        const storage::StateAtEvent state = cursor.load(oom->seq);
        const std::vector<storage::LiveBlock> live = storage::LiveBlocks::at(reader, run, oom->seq);
        views::OomAnswerData data = OomAnswerAdapter::fromSession(row, *oom, state, live,
                                                                  [&reader, run](std::uint32_t id) { return reader.stack(run, id); });
        const bool replayable = analysis && RecordingCatalog::parseSource(row).has_value();
        data.whatIfNote = replayable ? tr("Replaying the recording under each config `recommend` tries, at the inferred limit…")
                                     : tr("No what-if here: it replays a recorded PyTorch snapshot or RMM CSV under other configs. "
                                          "For a workload, Compare runs it under several configs.");
        show(data, !replayable);
        if (!replayable) return;
        try {
            if (std::optional<alloc::OomAnswer> answer = analysis(row, self)) {
                OomAnswerAdapter::applyAnalysis(data, *answer);
            } else {
                data.whatIfNote = tr("No what-if: the recording this run was replayed from cannot be read any more.");
            }
        } catch (const std::exception& e) {
            data.whatIfNote = tr("The what-if could not run: %1").arg(QString::fromUtf8(e.what()));
        }
        if (self.isCancelled()) return;
        show(data, true);
    }, this);
    connect(job, &BackgroundJob::failed, this, [this, generation](const QString& message) {
        if (generation != generation_) return;
        view_->showStatus(tr("Cannot read the OOM: %1").arg(message));
        emit analysisDone();
    });
    connect(job, &BackgroundJob::finished, job, &QObject::deleteLater);
    connect(job, &QObject::destroyed, this, [this, job] {
        if (job_ == job) job_ = nullptr;
    });
    job_ = job;
    job->start();
}

OomAnswerController::Analysis OomAnswerController::defaultAnalysis() {
    // What `allocscope-cli oom TRACE` answers, for the recording the run was replayed from: the
    // limit inferred from its oom entry, the recording replayed to the failure under it, and
    // recommend's configs run at it (OomVerb does the same from the command line).
    return [](const storage::RunRow& row, BackgroundJob& job) -> std::optional<alloc::OomAnswer> {
        const std::optional<RecordingSource> recording = RecordingCatalog::parseSource(row);
        if (!recording || !QFileInfo(recording->path).isReadable()) return std::nullopt;
        const alloc::RecordedTrace trace = WhatIfReplay::loadTrace(*recording);
        if (!alloc::OomAnalyzer::firstOom(trace)) {
            throw std::runtime_error(tr("the recording itself has no OOM (only this replay of it ran out of memory)").toStdString());
        }
        const alloc::ParseResult parsed = alloc::parseConfig(trace.settings.value_or(""));
        alloc::AllocatorConfig recorded = parsed.accepted() ? parsed.config : alloc::AllocatorConfig{};
        if (recorded.backend == alloc::Backend::CudaMallocAsync) recorded = alloc::AllocatorConfig{};
        alloc::LimitDevice fallback;  // the run's own GPU when nothing can be inferred
        if (const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(row.info.gpu)) {
            fallback = {preset->name, preset->totalMemory, preset->contextMemory, std::nullopt};
        }
        if (row.info.memoryFraction < 1.0) fallback.memoryFraction = row.info.memoryFraction;
        alloc::ReplayOptions base;
        base.config = recorded;
        if (job.isCancelled()) return std::nullopt;
        const alloc::MemoryLimit limit = alloc::LimitInference::infer(trace, base, fallback);
        if (job.isCancelled()) return std::nullopt;
        // Room for every request: the failed one is tried and dropped, so op indexes match the replay's.
        constexpr std::uint64_t kRoom = 1ull << 50;
        const alloc::Program program = alloc::programFromTrace(trace, {std::nullopt, kRoom, limit.otherMemory});
        return alloc::OomAnalyzer::analyze(trace, recorded, limit, program);
    };
}

}  // namespace allocscope::app
