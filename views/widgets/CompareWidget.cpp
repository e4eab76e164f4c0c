#include "views/widgets/CompareWidget.h"

// Placeholder until the widget lands (keeps the moc'd signals and slots linkable).
namespace allocscope::views {
CompareWidget::CompareWidget(QWidget* parent) : QWidget(parent) {}
void CompareWidget::setData(CompareData data) { data_ = std::move(data); }
void CompareWidget::setMaps(CompareMaps) {}
qint64 CompareWidget::currentOp() const { return op_; }
SegmentMapWidget* CompareWidget::segmentMap(int) const { return nullptr; }
QLabel* CompareWidget::mapNote(int) const { return nullptr; }
QString CompareWidget::tableCsv() const { return {}; }
void CompareWidget::setCurrentOp(qint64 op) { op_ = op; }
void CompareWidget::rebuildMaps() {}
void CompareWidget::syncOpControls(qint64) {}
}  // namespace allocscope::views
