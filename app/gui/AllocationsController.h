#pragma once
// Feeds the Allocations tab: when a run is shown, gathers its largest allocations, their stacks
// and phases and its allocated-bytes envelope (storage::AllocationBands) on a thread of its own
// with its own read-only connection, and hands the view-data struct to the GUI thread. A newer
// request cancels an older one (its result is dropped); the session file is only read.
#include <QList>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

#include "views/data/AllocationsData.h"

class QThread;

namespace allocscope::storage {
struct AllocationOverview;
}

namespace allocscope::app {

class AllocationsController : public QObject {
    Q_OBJECT
public:
    explicit AllocationsController(QObject* parent = nullptr);
    ~AllocationsController() override;

    void load(const QString& sessionPath, int run);
    // The same for a run shown already, that grew (LiveRunFollower): no started(), so the view
    // keeps the allocations it draws until the new ones replace them.
    void refresh(const QString& sessionPath, int run);
    void cancel();
    bool isLoading() const { return loading_; }

    // The view data of an overview (call sites by top user frame, pools, phases). Public for tests.
    static views::AllocationsData toViewData(const storage::AllocationOverview& overview);

signals:
    void started(int run);
    void ready(int run, const allocscope::views::AllocationsData& data);
    void failed(int run, const QString& message);

private:
    void start(const QString& sessionPath, int run, bool announce);

    std::shared_ptr<std::atomic<bool>> cancel_;
    QList<QThread*> threads_;
    quint64 generation_ = 0;
    bool loading_ = false;
};

}  // namespace allocscope::app
