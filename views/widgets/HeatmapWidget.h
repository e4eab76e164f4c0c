#pragma once
// The time × address fragmentation heatmap with its legend. The address axis lays the reserved
// ranges end to end and marks the squeezed gaps; the current event is a vertical cursor; clicking
// or dragging in the plot moves it and emits eventRequested.
#include <QWidget>

#include "views/data/HeatmapData.h"

namespace allocscope::views {

class HeatmapPlot;
class LegendWidget;

class HeatmapWidget : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    void setData(HeatmapData input);
    const HeatmapData& data() const;
    qint64 currentEvent() const;

    HeatmapPlot* plot() const { return plot_; }
    LegendWidget* legend() const { return legend_; }

public slots:
    void setCurrentEvent(qint64 event);  // moves the cursor; does not emit eventRequested

signals:
    void eventRequested(qint64 event);  // the user clicked or dragged to this event index

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateLegend();
    HeatmapPlot* plot_;
    LegendWidget* legend_;
};

}  // namespace allocscope::views
