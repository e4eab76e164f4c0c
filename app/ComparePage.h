#pragma once
// The Compare tab: runs of one program under several allocator configs, side by side. It starts
// a CompareJob (background thread, one recorded run per config), reads each finished run back
// from the session (summary, timeline, state at the peak) and feeds views::CompareWidget; the
// side-by-side segment maps follow the main window's op.
#include <QList>
#include <QString>
#include <QWidget>

#include "app/CompareRequest.h"

class QLabel;
class QProgressBar;
class QPushButton;

namespace allocscope::storage {
class SessionWriter;
}
namespace allocscope::views {
class CompareWidget;
}

namespace allocscope::app {

class CompareJob;
class CompareRunLoader;

class ComparePage : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget* parent = nullptr);
    ~ComparePage() override;

    // writer may be null (read-only session: Compare records nothing and says so).
    void setSession(const QString& sessionPath, storage::SessionWriter* writer);
    // Background job, progress, cancel; records one run per config. Results appear as runs finish.
    void startCompare(const CompareRequest& request);
    // Compare runs already in the session.
    void showRuns(const QList<int>& runs);
    // The side-by-side segment maps follow the main scrubber's op.
    void setCurrentOp(qint64 op);
    views::CompareWidget* compareWidget() const;

    bool isBusy() const;
    void cancel();
    // The runs shown now (session run numbers, in column order; -1 for async-backend runs that
    // were measured but not recorded).
    QList<int> shownRuns() const;
    QString lastMessage() const { return lastMessage_; }

    // File ▸ Export hooks: false + *error with a sentence on failure.
    bool exportTableCsv(const QString& path, QString* error = nullptr) const;
    bool exportChartsPng(const QString& path, QString* error = nullptr) const;
    bool exportChartsSvg(const QString& path, QString* error = nullptr) const;

signals:
    void runsRecorded(const QList<int>& runs);
    void statusMessage(const QString& text);
    void busyChanged(bool busy);

private:
    void say(const QString& text);
    void setBusy(bool busy);
    void refreshMaps();

    QString sessionPath_;
    storage::SessionWriter* writer_ = nullptr;
    views::CompareWidget* widget_ = nullptr;
    QLabel* status_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    CompareJob* job_ = nullptr;
    CompareRunLoader* loader_ = nullptr;
    QString lastMessage_;
    qint64 currentOp_ = -1;
    bool busy_ = false;
};

}  // namespace allocscope::app
