#pragma once
// Feeds the Ranks tab (views::RanksWidget): reads the session's runs in the background when the
// run list changes, builds the ranks overview (storage::RankOverview: median rank, outliers,
// fragmentation at the peak — the same rules as `allocscope-cli ranks`), recomputes it when the
// threshold changes, and opens a clicked run beside the median rank in Compare.
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <vector>

#include "storage/session/RankOverview.h"
#include "storage/session/SessionTypes.h"
#include "views/data/RanksData.h"

namespace allocscope::views {
class RanksWidget;
}

namespace allocscope::app {

class BackgroundJob;

class RanksController : public QObject {
    Q_OBJECT
public:
    struct Hooks {
        std::function<QString()> sessionPath;             // "" when no session is open
        std::function<void(const QList<int>&)> compare;   // MainWindow::showComparison
        std::function<void(const QString&)> status;       // the status bar
    };
    RanksController(views::RanksWidget* view, Hooks hooks, QObject* parent = nullptr);
    ~RanksController() override;

    // Reads the runs again (after the run list changed); the view follows when they are read.
    void refresh();
    // The overview in view terms.
    static views::RanksData toViewData(const storage::RankOverviewData& overview);

signals:
    void updated();  // the view shows the session's current runs

private:
    void show();
    void open(int run);

    views::RanksWidget* view_;
    Hooks hooks_;
    std::vector<storage::RunRow> runs_;
    BackgroundJob* job_ = nullptr;
    quint64 generation_ = 0;
};

}  // namespace allocscope::app
