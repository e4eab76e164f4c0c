#pragma once
// Search by frame text or hex address (Ctrl+F, the field at the tab bar's right): finds the run's
// stacks with a matching frame in the session (storage::StackSearch) and highlights the matching
// blocks in every view -- the Allocations tab fades the rest, the segment map outlines the live
// matches, the heatmap outlines each matching allocation's lifetime x address range. An address
// ("0x7f3a40000000") matches the block that contains it. Typing searches after a short pause;
// Escape clears. The session is only read.
#include <QObject>
#include <QString>

#include "views/data/SearchHighlight.h"

class QLineEdit;
class QMainWindow;
class QTabWidget;
class QTimer;
class QWidget;

namespace allocscope::views {
class AllocationsWidget;
class HeatmapWidget;
class SegmentMapWidget;
}  // namespace allocscope::views

namespace allocscope::app {

class SearchController : public QObject {
    Q_OBJECT
public:
    struct Views {
        QTabWidget* tabs = nullptr;
        views::AllocationsWidget* allocations = nullptr;
        views::SegmentMapWidget* segmentMap = nullptr;
        views::HeatmapWidget* heatmap = nullptr;
    };
    SearchController(const Views& views, QMainWindow* window);

    QLineEdit* field() const { return field_; }
    const views::SearchHighlight& highlight() const { return highlight_; }
    // The run the views show now: the current query is searched again in it.
    void setRun(const QString& sessionPath, int run);
    // Searches now (the field's text after its pause); "" clears.
    void search(const QString& query);
    // The views' data changed (the Allocations tab loaded): highlights follow.
    void refresh();

signals:
    void statusMessage(const QString& text);

private:
    void applyToViews();

    Views views_;
    QLineEdit* field_;
    QTimer* pause_;
    QString session_;
    int run_ = 0;
    views::SearchHighlight highlight_;
};

}  // namespace allocscope::app
