#include "storage/session/BatchImport.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include "storage/formats/FormatError.h"
#include "storage/session/SessionError.h"

namespace allocscope::storage {
namespace {

constexpr std::uint64_t kPerFile = 1000;

// The state the workers share: which file is next, whose turn it is to create runs, and the
// progress of all files together.
class Batch {
public:
    Batch(const std::function<SessionWriter&()>& writer, const std::vector<std::string>& files, const BatchImportOptions& options)
        : writerOf_(writer), files_(files), options_(options), results_(files.size()), fileDone_(files.size(), 0) {}

    std::vector<BatchFileResult> run() {
        for (std::size_t i = 0; i < files_.size(); ++i) results_[i].file = files_[i];
        unsigned jobs = options_.jobs == 0 ? BatchImport::defaultJobs() : options_.jobs;
        jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, files_.size()));
        std::vector<std::thread> workers;
        for (unsigned j = 1; j < jobs; ++j) workers.emplace_back([this] { work(); });
        work();  // the calling thread is worker 0
        for (std::thread& t : workers) t.join();
        if (sessionError_) std::rethrow_exception(sessionError_);
        return std::move(results_);
    }

private:
    void work() {
        for (;;) {
            const std::size_t i = next_.fetch_add(1);
            if (i >= files_.size() || stopped()) return;
            importFile(i);
        }
    }

    void importFile(std::size_t i) {
        BatchFileResult& result = results_[i];
        std::optional<PreparedImport> prepared;
        try {
            prepared = prepareImport(files_[i], options_.target);
            result.rank = prepared->rank;
        } catch (const formats::FormatError& e) {
            result.error = e.problem() + " (" + e.location() + ")";
        } catch (const std::bad_alloc&) {
            result.error = "not enough memory to read the trace (" + files_[i] + ")";
        } catch (const std::exception& e) {
            result.error = e.what();  // prepareImport's messages name the file
        }
        std::vector<std::unique_ptr<SessionRecorder>> runs;
        std::exception_ptr failed;
        {
            std::unique_lock<std::mutex> lock(turnMutex_);
            turnChanged_.wait(lock, [&] { return turn_ == i || stopped(); });
            if (stopped()) return;
            if (prepared) {
                try {
                    if (writer_ == nullptr) writer_ = &writerOf_();
                    runs = createImportRuns(*writer_, *prepared);
                    result.started = true;
                } catch (const SessionError&) {
                    failed = std::current_exception();
                } catch (const std::exception& e) {
                    result.error = e.what();  // the trace is the session file itself
                }
            }
            turn_ = i + 1;
        }
        if (failed) {
            stop(failed);  // not under turnMutex_: stop() takes it
            return;
        }
        turnChanged_.notify_all();
        if (!result.started) {
            advance(i, kPerFile);
            return;
        }
        try {
            result.runs = replayImportRuns(runs, *prepared, [this, i](std::uint64_t done, std::uint64_t total) {
                return advance(i, total == 0 ? kPerFile : done * kPerFile / total);
            });
        } catch (const SessionError&) {
            stop(std::current_exception());
        } catch (const std::exception& e) {
            result.error = e.what();
        }
    }

    // File i is `permille` done: updates the sum and reports it. False once the batch stops.
    bool advance(std::size_t i, std::uint64_t permille) {
        std::lock_guard<std::mutex> lock(progressMutex_);
        done_ += std::max(permille, fileDone_[i]) - fileDone_[i];
        fileDone_[i] = std::max(permille, fileDone_[i]);
        if (options_.progress && !stopped() && !options_.progress(done_, files_.size() * kPerFile)) stop(nullptr);
        return !stopped();
    }

    bool stopped() const { return stopped_.load(); }
    void stop(std::exception_ptr error) {
        {
            std::lock_guard<std::mutex> lock(errorMutex_);
            if (error && !sessionError_) sessionError_ = error;
        }
        stopped_.store(true);
        // Taking the turn's lock orders the flag before a waiter's predicate check.
        { std::lock_guard<std::mutex> lock(turnMutex_); }
        turnChanged_.notify_all();
    }

    const std::function<SessionWriter&()>& writerOf_;
    const std::vector<std::string>& files_;
    const BatchImportOptions& options_;
    std::vector<BatchFileResult> results_;

    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stopped_{false};
    std::mutex turnMutex_;
    std::condition_variable turnChanged_;
    std::size_t turn_ = 0;
    SessionWriter* writer_ = nullptr;  // under turnMutex_
    std::mutex progressMutex_;
    std::vector<std::uint64_t> fileDone_;
    std::uint64_t done_ = 0;
    std::mutex errorMutex_;
    std::exception_ptr sessionError_;
};

}  // namespace

unsigned BatchImport::defaultJobs() { return std::max(1u, std::thread::hardware_concurrency()); }

std::vector<BatchFileResult> BatchImport::run(const std::function<SessionWriter&()>& writer, const std::vector<std::string>& files,
                                              const BatchImportOptions& options) {
    if (files.empty()) return {};
    return Batch(writer, files, options).run();
}

}  // namespace allocscope::storage
