#include "app/gui/ComparePage.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "app/gui/CompareJob.h"
#include "allocator/compare/WindowFigures.h"
#include "allocator/config/ConfigParser.h"
#include "app/gui/CompareRunLoader.h"
#include "storage/session/SessionReader.h"
#include "views/util/Formatting.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/ExportHelpers.h"
#include "views/widgets/WhatIfAnswerView.h"

namespace allocscope::app {
namespace {
// Two PYTORCH_CUDA_ALLOC_CONF lines are one config when PyTorch reads the same settings.
bool sameConfig(const QString& a, const QString& b) {
    const alloc::ParseResult pa = alloc::parseConfig(a.toStdString());
    const alloc::ParseResult pb = alloc::parseConfig(b.toStdString());
    return pa.accepted() && pb.accepted() ? pa.config == pb.config : a.trimmed() == b.trimmed();
}
}  // namespace

ComparePage::ComparePage(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    auto* bar = new QHBoxLayout();
    status_ = new QLabel(tr("Compare runs one program under several PYTORCH_CUDA_ALLOC_CONF settings and records "
                            "one run per setting."),
                        this);
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::PlainText);
    status_->setToolTip(tr("What the Compare tab is doing"));
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("%p%"));
    progress_->setMaximumWidth(220);
    progress_->setToolTip(tr("Progress of the comparison (all runs together)"));
    progress_->setVisible(false);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setToolTip(tr("Stop the comparison (runs cut short stay in the session, marked interrupted)"));
    cancelButton_->setVisible(false);
    bar->addWidget(status_, 1);
    bar->addWidget(progress_);
    bar->addWidget(cancelButton_);
    layout->addLayout(bar);
    // Which limit every config below replays at, and whence: the same line as the Program panel's.
    limit_ = new QLabel(this);
    limit_->setWordWrap(true);
    limit_->setTextFormat(Qt::PlainText);
    limit_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    limit_->setToolTip(tr("The memory limit the recording and every config are replayed at"));
    limit_->setVisible(false);
    layout->addWidget(limit_);
    answer_ = new views::WhatIfAnswerView(this);
    layout->addWidget(answer_);
    widget_ = new views::CompareWidget(this);
    layout->addWidget(widget_, 1);
    connect(cancelButton_, &QPushButton::clicked, this, &ComparePage::cancel);
    connect(widget_, &views::CompareWidget::mapsRequested, this, &ComparePage::requestMaps);
}

ComparePage::~ComparePage() {
    delete job_;  // cancels and waits: it writes through a writer the page does not own
    job_ = nullptr;
    joinHelpers();
}

void ComparePage::joinHelpers() {
    if (loadThread_.joinable()) loadThread_.join();
    if (mapThread_.joinable()) mapThread_.join();
}

views::CompareWidget* ComparePage::compareWidget() const { return widget_; }

void ComparePage::say(const QString& text) {
    lastMessage_ = text;
    status_->setText(text);
    emit statusMessage(text);
}

void ComparePage::setBusy(bool busy) {
    if (busy == busy_) return;
    busy_ = busy;
    progress_->setVisible(busy);
    cancelButton_->setVisible(busy);
    cancelButton_->setEnabled(busy);
    if (busy) progress_->setValue(0);
    emit busyChanged(busy);
}

void ComparePage::setSession(const QString& sessionPath, storage::SessionWriter* writer) {
    if (job_ != nullptr) {
        delete job_;  // cancels and waits
        job_ = nullptr;
        setBusy(false);
    }
    joinHelpers();
    ++generation_;
    sessionPath_ = sessionPath;
    writer_ = writer;
    results_.clear();
    labels_.clear();
    program_.clear();
    opCount_ = 0;
    mapLoading_ = false;
    pendingMapOp_.reset();
    widget_->setData({});
    recordingRequest_.reset();
    answer_->setAnswer({});
    if (sessionPath.isEmpty()) say(tr("No session open: open or create one to compare configs."));
    // No writer yet: the session opens read-only and the first recording opens the writer
    // (MainWindow::ensureWritableDocument, which offers a copy when the file cannot be written).
    // So Compare will record into this session, and the user should know that before pressing it.
    else if (writer == nullptr) say(tr("Compare records one run per config into this session."));
}

void ComparePage::startCompare(const CompareRequest& request) {
    if (busy_) {
        say(tr("A comparison is already running: wait for it or cancel it first."));
        return;
    }
    if (sessionPath_.isEmpty()) {
        say(tr("Cannot compare: no session is open. Create or open a session first (File ▸ New Session)."));
        return;
    }
    if (writer_ == nullptr) {
        say(tr("Cannot compare: this session is open read-only and Compare records one run per config into it. "
               "Save it as a new session (File ▸ Save As) to compare here."));
        return;
    }
    if (request.configs.isEmpty()) {
        say(tr("Cannot compare: no config given. Add at least one PYTORCH_CUDA_ALLOC_CONF string."));
        return;
    }
    if (request.workload.isEmpty() && request.tracePath.isEmpty() && !request.recording) {
        say(tr("Cannot compare: pick a workload or a trace file to run."));
        return;
    }
    joinHelpers();
    ++generation_;
    results_.assign(static_cast<std::size_t>(request.configs.size()), std::nullopt);
    runProgress_.assign(results_.size(), 0.0);
    failures_.clear();
    recorded_.clear();
    labels_.clear();
    program_ = request.recording ? request.recording->recording.fileName : request.workload.isEmpty() ? request.tracePath : request.workload;
    opCount_ = 0;
    windowNote_.clear();
    widget_->setData({});
    recordingRequest_.reset();
    if (request.recording) recordingRequest_ = request;
    limit_->setText(request.recording ? request.recording->limitLine : QString());
    limit_->setVisible(!limit_->text().isEmpty());
    smallestGpu_.assign(results_.size(), std::nullopt);
    answer_->setAnswer({});
    job_ = new CompareJob(request, sessionPath_, writer_, this);
    connect(job_, &CompareJob::windowFound, this, [this](const QString& note) { windowNote_ = note; });
    connect(job_, &CompareJob::prepared, this, [this](const QString& program, qint64 ops, const QStringList& labels) {
        program_ = program;
        opCount_ = ops;
        labels_ = labels;
        // A recording's comparison has one column more than configs: the recording itself.
        results_.resize(static_cast<std::size_t>(labels.size()));
        runProgress_.resize(results_.size(), 0.0);
        smallestGpu_.resize(results_.size());
        say(tr("Running %1 (%2) under %3…")
                .arg(program, views::Formatting::counted(ops, tr("op"), tr("ops")),
                     views::Formatting::counted(labels.size() - (recordingRequest_ ? 1 : 0), tr("config"), tr("configs"))));
    });
    connect(job_, &CompareJob::runProgress, this, [this](int index, double fraction) {
        if (index < 0 || index >= static_cast<int>(runProgress_.size())) return;
        runProgress_[static_cast<std::size_t>(index)] = fraction;
        double sum = 0;
        for (double f : runProgress_) sum += f;
        progress_->setValue(static_cast<int>(1000.0 * sum / static_cast<double>(runProgress_.size())));
    });
    connect(job_, &CompareJob::runFinished, this, [this](int index, const views::CompareRun& run) {
        if (index < 0 || index >= static_cast<int>(results_.size())) return;
        results_[static_cast<std::size_t>(index)] = run;
        if (run.run > 0 && !(recordingRequest_ && index == 0)) recorded_.append(run.run);  // not the recording itself
        publish();
    });
    connect(job_, &CompareJob::gpuSearched, this, [this](int index, const QString& preset) {
        if (index < 0 || index >= static_cast<int>(smallestGpu_.size())) return;
        smallestGpu_[static_cast<std::size_t>(index)] = preset;
        publishAnswer();
    });
    connect(job_, &CompareJob::runFailed, this, [this](int index, const QString& message) {
        const QString label = index < labels_.size() ? labels_[index] : QString::number(index + 1);
        failures_.append(tr("%1: %2").arg(label, message));
        say(tr("Config '%1' failed: %2").arg(label, message));
    });
    connect(job_, &CompareJob::finished, this, &ComparePage::jobFinished);
    setBusy(true);
    say(tr("Preparing the program…"));
    job_->start();
}

void ComparePage::jobFinished(bool cancelled, const QString& error) {
    CompareJob* job = job_;
    job_ = nullptr;
    if (job != nullptr) job->deleteLater();  // its thread has emitted its last signal
    setBusy(false);
    int done = 0;
    for (const auto& r : results_) done += r.has_value() ? 1 : 0;
    if (recordingRequest_ && !results_.empty() && results_.front()) --done;  // the recording is shown, not compared
    if (!error.isEmpty()) {
        say(tr("Compare failed: %1").arg(error));
    } else if (cancelled) {
        say(tr("Compare cancelled: %1 of %2 runs finished (a run cut short stays in the session, marked interrupted).")
                .arg(done)
                .arg(results_.size()));
    } else if (!failures_.isEmpty()) {
        say(tr("Compare finished with errors: %1").arg(failures_.join(QStringLiteral("; "))));
    } else {
        QStringList numbers;
        QList<int> sorted = recorded_;
        std::sort(sorted.begin(), sorted.end());
        for (int n : sorted) numbers << QString::number(n);
        const QString configs = views::Formatting::counted(done, tr("config"), tr("configs"));
        say(recorded_.isEmpty() ? tr("Compared %1; none recorded (the cudaMallocAsync model keeps no segments).").arg(configs)
                                : tr("Compared %1: %2 recorded in the session (%3).")
                                      .arg(configs, views::Formatting::counted(recorded_.size(), tr("run"), tr("runs")),
                                           (recorded_.size() == 1 ? tr("run %1") : tr("runs %1")).arg(numbers.join(QStringLiteral(", ")))));
    }
    if (!recorded_.isEmpty()) {
        QList<int> sorted = recorded_;
        std::sort(sorted.begin(), sorted.end());
        emit runsRecorded(sorted);
    }
}

void ComparePage::cancel() {
    if (job_ == nullptr) return;
    job_->cancel();
    cancelButton_->setEnabled(false);
    say(tr("Cancelling…"));
}

QList<int> ComparePage::shownRuns() const {
    QList<int> runs;
    for (const views::CompareRun& r : widget_->data().runs) runs.append(r.run);
    return runs;
}

void ComparePage::publish() {
    views::CompareData shown;
    shown.program = program_;
    shown.opCount = opCount_;
    for (const auto& r : results_)
        if (r) shown.runs.push_back(*r);
    // Runs read back from the session say themselves that they cover a window; how many entries
    // it holds only the job that read the trace knows (the note then names no number).
    const bool window = std::any_of(shown.runs.begin(), shown.runs.end(), [](const views::CompareRun& r) { return r.windowOnly; });
    if (window && windowNote_.isEmpty()) windowNote_ = QString::fromStdString(alloc::WindowFigures(0, {}).legend());
    if (window) shown.windowNote = windowNote_;
    widget_->setData(std::move(shown));
    ++dataVersion_;  // maps loaded for the previous list of runs no longer fit
    requestMaps(widget_->currentOp());
    publishAnswer();
}

void ComparePage::publishAnswer() {
    if (!recordingRequest_ || results_.empty() || !results_.front()) {
        answer_->setAnswer({});
        return;
    }
    const auto counts = [](const views::CompareRun& r) {
        return views::WhatIfCounts{r.peakReserved, r.ooms, r.firstOomOp, r.retries, r.cudaMallocs};
    };
    const WhatIfSetup& setup = *recordingRequest_->recording;
    views::WhatIfAnswer answer;
    answer.conditions = setup.memoryFraction ? tr("replayed on %1, memory fraction %2").arg(setup.gpuName).arg(*setup.memoryFraction)
                                             : tr("replayed on %1").arg(setup.gpuName);
    // Each config is told against the recorded config under the same GPU and fraction (what the
    // config alone changes); that config itself against the recording as it ran.
    const QString recorded = setup.recording.recordedConfig.isEmpty() ? tr("default") : setup.recording.recordedConfig;
    const QString recordingLabel = tr("the recording, run %1").arg(setup.recording.run);
    std::optional<std::size_t> recordedColumn;
    for (std::size_t i = 1; i < results_.size(); ++i) {
        if (results_[i] && sameConfig(results_[i]->configText, setup.recording.recordedConfig)) recordedColumn = i;
    }
    for (std::size_t i = 1; i < results_.size(); ++i) {
        if (!results_[i]) continue;
        views::WhatIfAnswerLine line;
        line.label = results_[i]->label;
        line.counts = counts(*results_[i]);
        const bool vsRecording = !recordedColumn || *recordedColumn == i;
        line.against = vsRecording ? recordingLabel : tr("%1 replayed the same way").arg(recorded);
        line.baseline = counts(*results_[vsRecording ? 0 : *recordedColumn]);
        if (i < smallestGpu_.size()) line.smallestGpu = smallestGpu_[i];
        line.modelledDecisions = results_[i]->modelledDecisions;  // how firm: what-if replays count it
        answer.lines.push_back(line);
    }
    // Every config replays the same recording: if it keeps only a window, so does each answer.
    if (results_.front()->windowOnly) answer.windowNote = windowNote_;
    answer_->setAnswer(answer);
}

void ComparePage::showRuns(const QList<int>& runs) {
    if (busy_) {
        say(tr("A comparison is running: its runs are shown as they finish."));
        return;
    }
    if (sessionPath_.isEmpty()) {
        say(tr("No session open."));
        return;
    }
    joinHelpers();
    const int generation = ++generation_;
    recordingRequest_.reset();  // runs read back: no recording comparison to answer for
    windowNote_.clear();
    answer_->setAnswer({});
    mapLoading_ = false;
    pendingMapOp_.reset();
    say(tr("Reading %1…").arg(views::Formatting::counted(runs.size(), tr("run"), tr("runs"))));
    const std::string path = sessionPath_.toStdString();
    const std::vector<int> numbers(runs.begin(), runs.end());
    loadThread_ = std::thread([this, path, numbers, generation] {
        std::vector<views::CompareRun> loaded;
        qint64 ops = 0;
        QString program;
        QString error;
        bool mixed = false;
        try {
            storage::SessionReader reader(path, false);
            for (int number : numbers) {
                loaded.push_back(CompareRunLoader::load(reader, number));
                ops = std::max<qint64>(ops, static_cast<qint64>(CompareRunLoader::opCount(reader, number)));
                const storage::RunRow row = reader.run(number);
                const QString source = QString::fromStdString(row.info.source) + tr(" on %1").arg(QString::fromStdString(row.info.gpu));
                if (program.isEmpty()) program = source;
                else if (source != program) mixed = true;
            }
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this,
            [this, loaded, ops, program, error, generation, mixed] {
                if (generation != generation_) return;
                if (!error.isEmpty()) {
                    say(tr("Cannot compare these runs: %1").arg(error));
                    return;
                }
                // Runs named "<program> · <config>" (as the CLI and the main window name them)
                // differ only after the common "<program> · ": show that part.
                std::vector<views::CompareRun> shown = loaded;
                const QString separator = QStringLiteral(" · ");
                if (shown.size() > 1) {
                    const qsizetype cut = shown.front().label.indexOf(separator);
                    const QString prefix = cut > 0 ? shown.front().label.left(cut + separator.size()) : QString();
                    const bool shared = !prefix.isEmpty() && std::all_of(shown.begin(), shown.end(), [&](const views::CompareRun& r) {
                        return r.label.startsWith(prefix) && r.label.size() > prefix.size();
                    });
                    if (shared)
                        for (views::CompareRun& r : shown) r.label = r.label.mid(prefix.size());
                }
                results_.assign(shown.begin(), shown.end());
                program_ = program;
                opCount_ = ops;
                publish();
                if (mixed) {
                    say(tr("Note: these %n runs come from different programs, so their ops line up by index only.", nullptr,
                           static_cast<int>(loaded.size())));
                } else {
                    QStringList shownNumbers;
                    for (const views::CompareRun& r : loaded) shownNumbers << QString::number(r.run);
                    say(tr("Comparing runs %1 of one program.").arg(shownNumbers.join(QStringLiteral(", "))));
                }
            },
            Qt::QueuedConnection);
    });
}

void ComparePage::setCurrentOp(qint64 op) { widget_->setCurrentOp(op); }

void ComparePage::requestMaps(qint64 op) {
    if (op < 0 || widget_->data().runs.empty()) return;
    if (mapLoading_) {
        pendingMapOp_ = op;  // only the latest op matters once the current load is done
        return;
    }
    startMapLoad(op);
}

void ComparePage::startMapLoad(qint64 op) {
    if (mapThread_.joinable()) mapThread_.join();
    mapLoading_ = true;
    std::vector<int> runs;
    for (const views::CompareRun& r : widget_->data().runs) runs.push_back(r.run);
    const std::string path = sessionPath_.toStdString();
    const int generation = generation_;
    const int version = dataVersion_;
    mapThread_ = std::thread([this, path, runs, op, generation, version] {
        views::CompareMaps maps;
        maps.op = op;
        QString error;
        try {
            std::optional<storage::SessionReader> reader;
            for (int run : runs) {
                if (run <= 0) {
                    maps.maps.emplace_back(std::nullopt);
                    continue;
                }
                if (!reader) reader.emplace(path, false);
                maps.maps.emplace_back(CompareRunLoader::mapAtOp(*reader, run, static_cast<std::uint64_t>(op)));
            }
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this,
            [this, maps = std::move(maps), error, generation, version]() mutable {
                mapLoading_ = false;
                if (generation != generation_) return;
                if (version == dataVersion_) {
                    ++mapsLoaded_;
                    if (!error.isEmpty()) say(tr("Cannot read the segment maps: %1").arg(error));
                    else widget_->setMaps(std::move(maps));
                }
                if (pendingMapOp_) {
                    const qint64 next = *pendingMapOp_;
                    pendingMapOp_.reset();
                    startMapLoad(next);
                }
            },
            Qt::QueuedConnection);
    });
}

bool ComparePage::exportTableCsv(const QString& path, QString* error) const {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.write(widget_->tableCsv().toUtf8());
    if (!file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool ComparePage::exportChartsPng(const QString& path, QString* error) const {
    return views::ExportHelpers::exportPng(widget_->tabs()->currentWidget(), path, error);
}

bool ComparePage::exportChartsSvg(const QString& path, QString* error) const {
    return views::ExportHelpers::exportSvg(widget_->tabs()->currentWidget(), path, tr("AllocScope comparison"), error);
}

}  // namespace allocscope::app
