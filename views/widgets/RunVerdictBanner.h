#pragma once
// A strip over the segment map, heatmap and timeline that says when the selected run is not
// PyTorch's run: a replay that diverged from its recording (a warning), a what-if, or an import
// with no stored verdict. Hidden for exact and simulated runs. The full verdict is its tooltip.
#include <QFrame>

#include "views/data/RunListData.h"

class QLabel;

namespace allocscope::views {

class RunVerdictBanner : public QFrame {
    Q_OBJECT
public:
    explicit RunVerdictBanner(QWidget* parent = nullptr);

    // Shows what `run` needs (or hides); nullptr: no run selected.
    void setRun(const RunListRow* run);
    // The run numbered `number` among `runs` (hidden when it is not there).
    void showRun(const RunListData& runs, int number);
    QString text() const;  // the banner's words ("" when hidden)
    bool isWarning() const { return warning_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyColors();

    QLabel* label_;
    bool warning_ = false;
};

}  // namespace allocscope::views
