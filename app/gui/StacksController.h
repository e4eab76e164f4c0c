#pragma once
// Computes what the Stacks tab shows -- the live blocks at an event, their bytes by call stack
// (one point, or the difference with another event or another run at the same op), the live
// tensors table -- on its own worker thread with its own SessionReader. The GUI thread only
// receives finished view data.
//
// Requests carry a token: a request that a newer one has replaced is skipped when the worker
// reaches it (and abandoned between its steps), so scrubbing never queues stale work.
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

#include "views/data/LiveTensorsData.h"
#include "views/data/StackTreeData.h"

class QThread;

namespace allocscope::app {

struct StacksRequest {
    QString path;
    int run = 0;
    qint64 event = 0;  // the scrubber's event
    views::StacksChoice choice;
};

struct StacksResult {
    int run = 0;
    qint64 event = -1;    // the event the tree and table show (the peak when asked for it)
    QString description;  // what is shown, in words
    views::StackTreeData tree;
    views::LiveTensorsData tensors;
};

class StacksController : public QObject {
    Q_OBJECT
public:
    explicit StacksController(QObject* parent = nullptr);
    ~StacksController() override;

    void request(const StacksRequest& request);
    // Drops any pending work and the session's reader (the document is closing).
    void reset();
    bool isComputing() const { return pending_ > 0; }

signals:
    void ready(const allocscope::app::StacksResult& result);
    void failed(const QString& message);

private:
    struct Worker;
    QThread* thread_;
    QObject* context_;
    std::shared_ptr<Worker> worker_;
    std::shared_ptr<std::atomic<quint64>> token_;
    int pending_ = 0;
};

}  // namespace allocscope::app
