#pragma once
// The Compare tab's background job: builds the program (a demo workload, or a recorded trace
// replayed into one), then runs it under every config on its own thread pool (up to one run per
// core) — native configs recorded into the session with storage::recordProgram and read back with
// CompareRunLoader, backend:cudaMallocAsync configs measured with ComparisonEngine::runOne (the
// async model has no segments to record). Results are signalled as each run finishes; cancel()
// stops the runs at their next progress check (a run cut short stays in the session, marked
// interrupted). For "This recording" each config is instead a replay of the recording
// (WhatIfReplay), after the recording's own run. Signals come from the worker threads (queued to
// receivers on the GUI thread).
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <thread>

#include "app/gui/CompareRequest.h"
#include "views/data/CompareData.h"

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::app {

class CompareJob : public QObject {
    Q_OBJECT
public:
    // `writer` must outlive the job (the destructor cancels and waits).
    CompareJob(CompareRequest request, QString sessionPath, storage::SessionWriter* writer, QObject* parent = nullptr);
    ~CompareJob() override;

    void start();
    void cancel();
    bool isRunning() const { return running_.load(); }
    bool isCancelled() const { return cancelled_.load(); }

    // Workers: 0 = one per core (at most one per config).
    void setThreads(unsigned threads) { threads_ = threads; }

signals:
    // The program is built: what it is, its op count and the configs' labels in order.
    void prepared(const QString& program, qint64 opCount, const QStringList& labels);
    // Before prepared, when the program replays a recorded history that starts mid-run: the line
    // that says which figures of its runs cover only the window (alloc::WindowFigures::legend).
    void windowFound(const QString& note);
    void runProgress(int index, double fraction);
    void runFinished(int index, const allocscope::views::CompareRun& run);
    void runFailed(int index, const QString& message);
    // A recording's what-if: the smallest GPU preset on which run `index` has no OOM ("" none).
    void gpuSearched(int index, const QString& preset);
    // error: why nothing (more) could run ("" when every run was attempted).
    void finished(bool cancelled, const QString& error);

private:
    void work();
    // CompareRequest::recording: index 0 is the recording's own run (read back), then one
    // recorded replay per config, each followed by its smallest-GPU search.
    void workRecording(const QStringList& labels);

    CompareRequest request_;
    QString sessionPath_;
    storage::SessionWriter* writer_;
    unsigned threads_ = 0;
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> running_{false};
    std::thread thread_;
};

}  // namespace allocscope::app

Q_DECLARE_METATYPE(allocscope::views::CompareRun)
