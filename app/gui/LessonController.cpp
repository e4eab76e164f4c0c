#include "app/gui/LessonController.h"

#include <QDir>
#include <QThread>

#include <exception>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "app/gui/LessonNavigator.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLibrary.h"
#include "app/lessons/LessonMetrics.h"
#include "app/lessons/LessonReport.h"
#include "app/lessons/LessonRunner.h"
#include "app/lessons/TraceRun.h"
#ifdef ALLOCSCOPE_HAVE_STORAGE
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"
#endif
#include "views/widgets/LessonPanel.h"

namespace allocscope::app {

// What the worker thread hands back to the GUI thread.
struct LessonController::Delivery {
    std::unique_ptr<LessonResult> result;
    QString sessionPath;
    std::vector<int> sessionRuns;
    QString error;
    bool cancelled = false;
};

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString whereText(const LessonStep& step, const std::string& runLabel) {
    QString at;
    const QString a = q(step.at);
    if (a == "start") at = QObject::tr("at the start");
    else if (a == "peak") at = QObject::tr("at the peak of reserved memory");
    else if (a == "oom") at = QObject::tr("at the out-of-memory error");
    else if (a == "end") at = QObject::tr("at the end");
    else if (a.startsWith("op:")) at = QObject::tr("at op %1").arg(a.mid(3));
    else if (a.startsWith("event:")) at = QObject::tr("at event %1").arg(a.mid(6));
    else if (a.startsWith("phase:")) at = QObject::tr("at phase %1").arg(a.mid(6));
    QString where = QObject::tr("run \u201c%1\u201d, %2").arg(q(runLabel), at);
    if (!step.view.empty()) where += QObject::tr(", %1 view").arg(q(step.view));
    return where;
}

// Records every run that ran on the native backend into a new session, exactly as it was measured.
// Without sqlite3 (no storage) nothing is recorded and steps cannot move the window.
std::vector<int> recordRuns(const LessonResult& result, const std::string& path, const std::atomic<bool>& cancel) {
#ifndef ALLOCSCOPE_HAVE_STORAGE
    (void)path;
    (void)cancel;
    return std::vector<int>(result.runs.size(), 0);
#else
    storage::SessionWriter writer(path);
    std::vector<int> numbers(result.runs.size(), 0);
    const storage::RecordProgress progress = [&cancel](std::uint64_t, std::uint64_t) { return !cancel.load(); };
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
        const LessonRunResult& run = result.runs[i];
        if (!run.ran || run.metrics.asyncBackend || cancel.load()) continue;
        const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(run.gpu);
        storage::RunInfo info;
        info.name = result.lesson.name + " \u00b7 " + run.label;
        info.config = run.config;
        info.gpu = run.gpu;
        info.totalMemory = run.totalMemory;
        info.memoryFraction = run.memoryFraction.value_or(1.0);
        const alloc::ParseResult parsed = alloc::parseConfig(run.config);
        if (result.trace) {
            info.sourceKind = "snapshot";
            info.source = result.lesson.program.tracePath;
            const TraceRunDevice device{run.totalMemory, preset ? preset->contextMemory : 0, run.memoryFraction};
            TracePlan plan = TraceRun::plan(*result.trace, parsed.config, device, result.emptyCacheSteps);
            numbers[i] = storage::recordReplay(writer, *result.trace, plan.options, info, plan.whatIfRecordedConfig, progress).runNumber;
        } else {
            info.sourceKind = "demo";
            std::string source = result.lesson.program.workload;
            for (const auto& [k, v] : run.params) source += " " + k + "=" + v;
            info.source = source;
            storage::RecordTarget target;
            target.info = info;
            target.config = parsed.config;
            target.totalMemory = run.totalMemory;
            target.otherMemory = preset ? preset->contextMemory : 0;
            target.memoryFraction = run.memoryFraction;
            numbers[i] = storage::recordProgram(writer, run.program, &run.stacks, target, progress).runNumber;
        }
    }
    return numbers;
#endif
}

}  // namespace

LessonController::LessonController(LessonNavigator* navigator, QObject* parent) : QObject(parent), navigator_(navigator) {}

LessonController::~LessonController() {
    cancel_ = true;
    if (thread_ != nullptr) {
        thread_->wait();
        delete thread_;
    }
}

bool LessonController::loadLessons(const QString& folder) {
    try {
        lessons_ = LessonLibrary::load(folder.isEmpty() ? LessonLibrary::defaultFolder() : folder.toStdString());
        lastError_.clear();
        return true;
    } catch (const LessonError& e) {
        lessons_.clear();
        lastError_ = tr("%1 (%2)").arg(q(e.problem()), q(e.location()));
        return false;
    }
}

QList<views::LessonListEntry> LessonController::entries() const {
    QList<views::LessonListEntry> out;
    for (const Lesson& l : lessons_) out.append({q(l.name), l.number, q(l.title)});
    return out;
}

int LessonController::indexOf(const QString& name) const {
    for (std::size_t i = 0; i < lessons_.size(); ++i) {
        if (q(lessons_[i].name) == name) return static_cast<int>(i);
    }
    return -1;
}

views::LessonData LessonController::lessonData(int index) const {
    views::LessonData d;
    if (index < 0 || index >= lessonCount()) return d;
    const Lesson& l = lessons_[static_cast<std::size_t>(index)];
    d.name = q(l.name);
    d.title = q(l.title);
    d.question = q(l.question);
    d.claim = q(l.claim);
    LessonResult notRun;
    notRun.lesson = l;
    d.program = q(LessonReport::programLine(notRun));
    for (const LessonStep& s : l.steps) {
        const LessonRun* run = l.findRun(s.run.empty() ? l.runs.front().id : s.run);
        d.steps.append({q(s.text), l.program.kind == LessonProgram::Kind::ConfigOnly ? QString() : whereText(s, run->label)});
    }
    return d;
}

views::LessonData LessonController::toViewData(const LessonResult& result) const {
    const int index = indexOf(q(result.lesson.name));
    views::LessonData d = index >= 0 ? lessonData(index) : views::LessonData{};
    d.name = q(result.lesson.name);
    d.title = q(result.lesson.title);
    d.question = q(result.lesson.question);
    d.claim = q(result.lesson.claim);
    d.program = q(LessonReport::programLine(result));
    d.hasResult = true;
    for (const LessonRunResult& r : result.runs) d.runLabels.append(q(r.label));
    for (const std::string& metric : LessonReport::shownMetrics(result.lesson)) {
        views::LessonNumbersRow row;
        row.metric = q(LessonMetrics::label(metric));
        for (const LessonRunResult& r : result.runs) row.values.append(q(LessonMetrics::format(metric, r)));
        d.numbers.append(row);
    }
    d.outcome = result.outcome == Outcome::True      ? views::LessonOutcome::True
                : result.outcome == Outcome::False ? views::LessonOutcome::False
                                                   : views::LessonOutcome::Depends;
    d.verdictText = q(result.verdictText());
    d.rule = q(result.decidedBy);
    return d;
}

void LessonController::attach(views::LessonPanel* panel) {
    panel->setLessons(entries());
    if (!lastError_.isEmpty()) panel->showError(lastError_);
    connect(panel, &views::LessonPanel::lessonSelected, this, [this, panel](int index) {
        if (!isRunning()) panel->setLesson(lessonData(index));
    });
    connect(panel, &views::LessonPanel::runRequested, this, [this, panel](int index) {
        if (isRunning()) return;
        panel->setLesson(lessonData(index));
        panel->setRunning(true);
        start(index);
    });
    connect(panel, &views::LessonPanel::cancelRequested, this, &LessonController::cancel);
    connect(panel, &views::LessonPanel::stepRequested, this, &LessonController::showStep);
    connect(this, &LessonController::progress, panel, &views::LessonPanel::setProgress);
    connect(this, &LessonController::finished, panel, [panel](const views::LessonData& data) {
        panel->setRunning(false);
        panel->setLesson(data);  // shows step 1, which moves the window
    });
    connect(this, &LessonController::failed, panel, [panel](const QString& message) {
        panel->setRunning(false);
        panel->showError(message);
    });
    connect(this, &LessonController::cancelled, panel, [panel] {
        panel->setRunning(false);
        panel->showError(tr("Cancelled."));
    });
}

void LessonController::start(int index) {
    if (isRunning() || index < 0 || index >= lessonCount()) return;
    cancel_ = false;
    const Lesson lesson = lessons_[static_cast<std::size_t>(index)];
    const QString path = sessions_.isValid()
                             ? QDir(sessions_.path()).filePath(QStringLiteral("lesson-%1-%2.allocscope").arg(q(lesson.name)).arg(++sessionCounter_))
                             : QString();
    thread_ = QThread::create([this, lesson, path] {
        auto outcome = std::make_shared<Delivery>();
        try {
            const LessonRunner::Progress report = [this](std::size_t done, std::size_t total, const std::string& what) {
                const QString text = q(what);
                const int d = static_cast<int>(done);
                const int t = static_cast<int>(total);
                QMetaObject::invokeMethod(this, [this, d, t, text] { emit progress(d, t, text); }, Qt::QueuedConnection);
            };
            outcome->result = std::make_unique<LessonResult>(LessonRunner::run(lesson, report, &cancel_));
            if (!outcome->result->cancelled && !path.isEmpty()) {
                QMetaObject::invokeMethod(this, [this] { emit progress(0, 0, tr("Recording the runs into a session\u2026")); }, Qt::QueuedConnection);
                outcome->sessionRuns = recordRuns(*outcome->result, path.toStdString(), cancel_);
                outcome->sessionPath = path;
            }
            outcome->cancelled = outcome->result->cancelled || cancel_.load();
        } catch (const LessonError& e) {
            outcome->error = tr("%1 (%2)").arg(q(e.problem()), q(e.location()));
        } catch (const std::exception& e) {
            outcome->error = q(e.what());
        }
        QMetaObject::invokeMethod(this, [this, outcome] { deliver(outcome); }, Qt::QueuedConnection);
    });
    thread_->start();
}

void LessonController::cancel() { cancel_ = true; }

void LessonController::deliver(const std::shared_ptr<Delivery>& outcome) {
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
    if (!outcome->error.isEmpty()) {
        emit failed(outcome->error);
        return;
    }
    if (outcome->cancelled) {
        emit cancelled();
        return;
    }
    result_ = std::move(outcome->result);
    sessionPath_ = outcome->sessionPath;
    sessionRuns_ = outcome->sessionRuns;
    sessionOpen_ = false;
    step_ = -1;
    emit finished(toViewData(*result_));
}

void LessonController::showStep(int index) {
    if (!result_ || index < 0 || index >= static_cast<int>(result_->steps.size())) return;
    step_ = index;
    const LessonStepView& step = result_->steps[static_cast<std::size_t>(index)];
    const int run = step.run < sessionRuns_.size() ? sessionRuns_[step.run] : 0;
    if (navigator_ != nullptr && run > 0 && !sessionPath_.isEmpty()) {
        if (!sessionOpen_) sessionOpen_ = navigator_->openSessionFile(sessionPath_);
        if (sessionOpen_) {
            if (step.view == "compare") {
                QList<int> runs;
                for (int n : sessionRuns_) {
                    if (n > 0) runs.append(n);
                }
                navigator_->selectRun(run);
                navigator_->showComparison(runs);
            } else {
                navigator_->selectRun(run);
                if (step.event) navigator_->goToEvent(static_cast<qint64>(*step.event));
                if (!step.view.empty()) navigator_->showView(q(step.view));
                if (step.blockAddress) navigator_->selectBlock(*step.blockAddress);
            }
        }
    }
    emit stepShown(index);
}

}  // namespace allocscope::app
