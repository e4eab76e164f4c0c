#pragma once
// The time × address fragmentation heatmap with its legend. The address axis lays the reserved
// ranges end to end and marks the squeezed gaps; the current event is a vertical cursor; clicking
// or dragging in the plot moves it and emits eventRequested. "Raw addresses" redraws the same
// grid on the real virtual-address axis, gaps included (views/data/HeatmapRawAddresses).
#include <QWidget>

class QCheckBox;

#include "views/data/HeatmapData.h"

namespace allocscope::views {

class HeatmapPlot;
class LegendWidget;

class HeatmapWidget : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    // `input` is the squeezed grid; in raw-address mode the widget shows its raw redistribution.
    void setData(HeatmapData input);
    const HeatmapData& data() const;  // what the plot shows (raw when rawAddresses())
    bool rawAddresses() const { return raw_; }
    qint64 currentEvent() const;

    HeatmapPlot* plot() const { return plot_; }
    LegendWidget* legend() const { return legend_; }
    QCheckBox* rawToggle() const { return rawToggle_; }

public slots:
    void setCurrentEvent(qint64 event);  // moves the cursor; does not emit eventRequested
    void setRawAddresses(bool raw);

signals:
    void eventRequested(qint64 event);  // the user clicked or dragged to this event index
    void rawAddressesChanged(bool raw);

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateLegend();
    void showData();
    HeatmapPlot* plot_;
    LegendWidget* legend_;
    QCheckBox* rawToggle_;
    HeatmapData squeezed_;
    bool raw_ = false;
};

}  // namespace allocscope::views
